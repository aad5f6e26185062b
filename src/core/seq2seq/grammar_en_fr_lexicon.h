// attnviz seq2seq: the en-fr lexicon (internal; included only by grammar_en_fr.cpp).
// Every entry is a word pair (or a paradigm); the derivations index into these tables.
#pragma once

namespace attnviz {
namespace seq2seq {
namespace en_fr {
namespace {

struct Noun {
  const char *en_sg, *en_pl, *fr_sg, *fr_pl;
  bool fem;
};
const Noun kNouns[] = {
    {"cat", "cats", "chat", "chats", false},
    {"dog", "dogs", "chien", "chiens", false},
    {"book", "books", "livre", "livres", false},
    {"president", "presidents", "président", "présidents", false},
    {"friend", "friends", "ami", "amis", false},
    {"child", "children", "enfant", "enfants", false},
    {"bird", "birds", "oiseau", "oiseaux", false},
    {"tree", "trees", "arbre", "arbres", false},
    {"garden", "gardens", "jardin", "jardins", false},
    {"horse", "horses", "cheval", "chevaux", false},
    {"student", "students", "étudiant", "étudiants", false},
    {"teacher", "teachers", "professeur", "professeurs", false},
    {"doctor", "doctors", "médecin", "médecins", false},
    {"market", "markets", "marché", "marchés", false},
    {"plan", "plans", "plan", "plans", false},
    {"report", "reports", "rapport", "rapports", false},
    {"government", "governments", "gouvernement", "gouvernements", false},
    {"minister", "ministers", "ministre", "ministres", false},
    {"farmer", "farmers", "agriculteur", "agriculteurs", false},
    {"neighbor", "neighbors", "voisin", "voisins", false},
    {"computer", "computers", "ordinateur", "ordinateurs", false},
    {"train", "trains", "train", "trains", false},
    {"boat", "boats", "bateau", "bateaux", false},
    {"project", "projects", "projet", "projets", false},
    {"country", "countries", "pays", "pays", false},
    {"problem", "problems", "problème", "problèmes", false},
    {"newspaper", "newspapers", "journal", "journaux", false},
    {"museum", "museums", "musée", "musées", false},
    {"hotel", "hotels", "hôtel", "hôtels", false},
    {"bicycle", "bicycles", "vélo", "vélos", false},
    {"agreement", "agreements", "accord", "accords", false},
    {"environment", "environments", "environnement", "environnements", false},
    {"equipment", "equipments", "équipement", "équipements", false},
    {"future", "futures", "avenir", "avenirs", false},
    {"man", "men", "homme", "hommes", false},
    {"treaty", "treaties", "traité", "traités", false},
    {"contract", "contracts", "contrat", "contrats", false},
    {"program", "programs", "programme", "programmes", false},
    {"house", "houses", "maison", "maisons", true},
    {"area", "areas", "zone", "zones", true},
    {"car", "cars", "voiture", "voitures", true},
    {"city", "cities", "ville", "villes", true},
    {"letter", "letters", "lettre", "lettres", true},
    {"table", "tables", "table", "tables", true},
    {"door", "doors", "porte", "portes", true},
    {"school", "schools", "école", "écoles", true},
    {"company", "companies", "entreprise", "entreprises", true},
    {"apple", "apples", "pomme", "pommes", true},
    {"girl", "girls", "fille", "filles", true},
    {"woman", "women", "femme", "femmes", true},
    {"policy", "policies", "politique", "politiques", true},
    {"economy", "economies", "économie", "économies", true},
    {"commission", "commissions", "commission", "commissions", true},
    {"union", "unions", "union", "unions", true},
    {"window", "windows", "fenêtre", "fenêtres", true},
    {"song", "songs", "chanson", "chansons", true},
    {"flower", "flowers", "fleur", "fleurs", true},
    {"road", "roads", "route", "routes", true},
    {"river", "rivers", "rivière", "rivières", true},
    {"bank", "banks", "banque", "banques", true},
    {"idea", "ideas", "idée", "idées", true},
    {"question", "questions", "question", "questions", true},
    {"region", "regions", "région", "régions", true},
    {"law", "laws", "loi", "lois", true},
    {"army", "armies", "armée", "armées", true},
    {"chair", "chairs", "chaise", "chaises", true},
    {"family", "families", "famille", "familles", true},
    {"weapon", "weapons", "arme", "armes", true},
    {"decision", "decisions", "décision", "décisions", true},
    {"factory", "factories", "usine", "usines", true},
};

// Abstract nouns: singular, and bare in English where French keeps the article
// ("destruction of the equipment" -> "la destruction de l' équipement").
struct AbstractNoun {
  const char *en, *fr;
  bool fem;
};
const AbstractNoun kAbstractNouns[] = {
    {"destruction", "destruction", true},    {"protection", "protection", true}, {"production", "production", true},
    {"construction", "construction", true},  {"security", "sécurité", true},     {"education", "éducation", true},
    {"development", "développement", false}, {"reform", "réforme", true},
};

// Adjectives placed after the noun in French (reversed when there are two).
struct Adjective {
  const char *en, *m_sg, *f_sg, *m_pl, *f_pl;
};
const Adjective kAdjectives[] = {
    {"european", "européen", "européenne", "européens", "européennes"},
    {"economic", "économique", "économique", "économiques", "économiques"},
    {"red", "rouge", "rouge", "rouges", "rouges"},
    {"green", "vert", "verte", "verts", "vertes"},
    {"black", "noir", "noire", "noirs", "noires"},
    {"white", "blanc", "blanche", "blancs", "blanches"},
    {"blue", "bleu", "bleue", "bleus", "bleues"},
    {"important", "important", "importante", "importants", "importantes"},
    {"political", "politique", "politique", "politiques", "politiques"},
    {"social", "social", "sociale", "sociaux", "sociales"},
    {"national", "national", "nationale", "nationaux", "nationales"},
    {"international", "international", "internationale", "internationaux", "internationales"},
    {"public", "public", "publique", "publics", "publiques"},
    {"french", "français", "française", "français", "françaises"},
    {"english", "anglais", "anglaise", "anglais", "anglaises"},
    {"german", "allemand", "allemande", "allemands", "allemandes"},
    {"italian", "italien", "italienne", "italiens", "italiennes"},
    {"modern", "moderne", "moderne", "modernes", "modernes"},
    {"happy", "heureux", "heureuse", "heureux", "heureuses"},
    {"tired", "fatigué", "fatiguée", "fatigués", "fatiguées"},
    {"rich", "riche", "riche", "riches", "riches"},
    {"difficult", "difficile", "difficile", "difficiles", "difficiles"},
    {"famous", "célèbre", "célèbre", "célèbres", "célèbres"},
    {"quiet", "calme", "calme", "calmes", "calmes"},
    {"strange", "étrange", "étrange", "étranges", "étranges"},
    {"intelligent", "intelligent", "intelligente", "intelligents", "intelligentes"},
    {"free", "libre", "libre", "libres", "libres"},
    {"dangerous", "dangereux", "dangereuse", "dangereux", "dangereuses"},
    {"yellow", "jaune", "jaune", "jaunes", "jaunes"},
    {"round", "rond", "ronde", "ronds", "rondes"},
    {"cultural", "culturel", "culturelle", "culturels", "culturelles"},
    {"agricultural", "agricole", "agricole", "agricoles", "agricoles"},
    {"industrial", "industriel", "industrielle", "industriels", "industrielles"},
    {"financial", "financier", "financière", "financiers", "financières"},
    {"marine", "marin", "marine", "marins", "marines"},
    {"chemical", "chimique", "chimique", "chimiques", "chimiques"},
    {"known", "connu", "connue", "connus", "connues"},
    {"nuclear", "nucléaire", "nucléaire", "nucléaires", "nucléaires"},
    {"military", "militaire", "militaire", "militaires", "militaires"},
};

// Adjectives placed before the noun in French; m_sg_vowel before a vowel ("un nouvel accord").
struct PreAdjective {
  const char *en, *m_sg, *m_sg_vowel, *f_sg, *m_pl, *f_pl;
};
const PreAdjective kPreAdjectives[] = {
    {"new", "nouveau", "nouvel", "nouvelle", "nouveaux", "nouvelles"},
    {"old", "vieux", "vieil", "vieille", "vieux", "vieilles"},
    {"small", "petit", "petit", "petite", "petits", "petites"},
    {"big", "grand", "grand", "grande", "grands", "grandes"},
    {"good", "bon", "bon", "bonne", "bons", "bonnes"},
    {"young", "jeune", "jeune", "jeune", "jeunes", "jeunes"},
};

struct Country {
  const char *en, *fr;
  bool fem;
};
const Country kCountries[] = {
    {"syria", "syrie", true},     {"france", "france", true},      {"canada", "canada", false},
    {"italy", "italie", true},    {"spain", "espagne", true},      {"germany", "allemagne", true},
    {"japan", "japon", false},    {"china", "chine", true},        {"brazil", "brésil", false},
    {"mexico", "mexique", false}, {"portugal", "portugal", false}, {"egypt", "égypte", true},
    {"iran", "iran", false},      {"belgium", "belgique", true},   {"morocco", "maroc", false},
    {"russia", "russie", true},   {"india", "inde", true},         {"greece", "grèce", true},
    {"norway", "norvège", true},  {"peru", "pérou", false},
};

// Present-tense verbs (3rd person) with their infinitive (after "can" / "will").
struct Verb {
  const char *en_3sg, *en_base, *fr_3sg, *fr_3pl, *fr_inf;
  bool transitive;
};
const Verb kVerbs[] = {
    {"sees", "see", "voit", "voient", "voir", true},
    {"likes", "like", "aime", "aiment", "aimer", true},
    {"watches", "watch", "regarde", "regardent", "regarder", true},
    {"finds", "find", "trouve", "trouvent", "trouver", true},
    {"visits", "visit", "visite", "visitent", "visiter", true},
    {"knows", "know", "connaît", "connaissent", "connaître", true},
    {"wants", "want", "veut", "veulent", "vouloir", true},
    {"buys", "buy", "achète", "achètent", "acheter", true},
    {"sells", "sell", "vend", "vendent", "vendre", true},
    {"reads", "read", "lit", "lisent", "lire", true},
    {"writes", "write", "écrit", "écrivent", "écrire", true},
    {"loves", "love", "adore", "adorent", "adorer", true},
    {"describes", "describe", "décrit", "décrivent", "décrire", true},
    {"builds", "build", "construit", "construisent", "construire", true},
    {"follows", "follow", "suit", "suivent", "suivre", true},
    {"hears", "hear", "entend", "entendent", "entendre", true},
    {"understands", "understand", "comprend", "comprennent", "comprendre", true},
    {"takes", "take", "prend", "prennent", "prendre", true},
    {"opens", "open", "ouvre", "ouvrent", "ouvrir", true},
    {"supports", "support", "soutient", "soutiennent", "soutenir", true},
    {"leaves", "leave", "quitte", "quittent", "quitter", true},
    {"protects", "protect", "protège", "protègent", "protéger", true},
    {"helps", "help", "aide", "aident", "aider", true},
    {"changes", "change", "change", "changent", "changer", true},
    {"produces", "produce", "produit", "produisent", "produire", true},
    {"destroys", "destroy", "détruit", "détruisent", "détruire", true},
    {"sleeps", "sleep", "dort", "dorment", "dormir", false},
    {"works", "work", "travaille", "travaillent", "travailler", false},
    {"arrives", "arrive", "arrive", "arrivent", "arriver", false},
    {"sings", "sing", "chante", "chantent", "chanter", false},
    {"waits", "wait", "attend", "attendent", "attendre", false},
};

// Transitive verbs in the past: active "signed" -> "a signé", passive "was signed" -> "a été signé(e)(s)".
struct PastVerb {
  const char *en_base, *en_past, *en_participle, *m_sg, *f_sg, *m_pl, *f_pl;
};
const PastVerb kPastVerbs[] = {
    {"sign", "signed", "signed", "signé", "signée", "signés", "signées"},
    {"adopt", "adopted", "adopted", "adopté", "adoptée", "adoptés", "adoptées"},
    {"approve", "approved", "approved", "approuvé", "approuvée", "approuvés", "approuvées"},
    {"reject", "rejected", "rejected", "rejeté", "rejetée", "rejetés", "rejetées"},
    {"publish", "published", "published", "publié", "publiée", "publiés", "publiées"},
    {"build", "built", "built", "construit", "construite", "construits", "construites"},
    {"sell", "sold", "sold", "vendu", "vendue", "vendus", "vendues"},
    {"open", "opened", "opened", "ouvert", "ouverte", "ouverts", "ouvertes"},
    {"write", "wrote", "written", "écrit", "écrite", "écrits", "écrites"},
    {"destroy", "destroyed", "destroyed", "détruit", "détruite", "détruits", "détruites"},
    {"change", "changed", "changed", "changé", "changée", "changés", "changées"},
    {"produce", "produced", "produced", "produit", "produite", "produits", "produites"},
    {"find", "found", "found", "trouvé", "trouvée", "trouvés", "trouvées"},
    {"see", "saw", "seen", "vu", "vue", "vus", "vues"},
    {"protect", "protected", "protected", "protégé", "protégée", "protégés", "protégées"},
    {"support", "supported", "supported", "soutenu", "soutenue", "soutenus", "soutenues"},
    {"visit", "visited", "visited", "visité", "visitée", "visités", "visitées"},
    {"take", "took", "taken", "pris", "prise", "pris", "prises"},
};

struct Possessive {
  const char *en, *m_sg, *f_sg, *pl;
};
const Possessive kPossessives[] = {
    {"my", "mon", "ma", "mes"},  {"your", "votre", "votre", "vos"}, {"his", "son", "sa", "ses"},
    {"her", "son", "sa", "ses"}, {"our", "notre", "notre", "nos"},  {"their", "leur", "leur", "leurs"},
};

// Prepositions that attach a noun phrase to a noun; "of" (index 0) contracts (du, des).
struct Preposition {
  const char *en, *fr;
};
const Preposition kPrepositions[] = {
    {"of", "de"}, {"on", "sur"}, {"with", "avec"}, {"for", "pour"}, {"without", "sans"}, {"against", "contre"},
};

// "that"-clause frames without a subject noun phrase. links: "t-s" pairs, "p" marks a possible link.
struct ImpersonalFrame {
  const char *en, *fr, *links;
};
const ImpersonalFrame kImpersonalFrames[] = {
    {"it should be noted that", "il convient de noter que", "0-0 1-1 1-2p 2-2 3-3 4-4"},
    {"it is clear that", "il est clair que", "0-0 1-1 2-2 3-3"},
    {"it is true that", "il est vrai que", "0-0 1-1 2-2 3-3"},
    {"it is important to note that", "il est important de noter que", "0-0 1-1 2-2 3-3 4-4 5-5"},
    {"we know that", "nous savons que", "0-0 1-1 2-2"},
    {"we think that", "nous pensons que", "0-0 1-1 2-2"},
};

// "NP means that ...": present (3sg / 3pl) or past ("said" -> "a dit"; fr_participle set).
struct ReportingVerb {
  const char *en_sg, *en_pl, *fr_sg, *fr_pl, *fr_participle;
};
const ReportingVerb kReportingVerbs[] = {
    {"means", "mean", "signifie", "signifient", nullptr},
    {"shows", "show", "montre", "montrent", nullptr},
    {"says", "say", "dit", "disent", nullptr},
    {"proves", "prove", "prouve", "prouvent", nullptr},
    {"said", "said", nullptr, nullptr, "dit"},
    {"explained", "explained", nullptr, nullptr, "expliqué"},
};

// Verbs of a quotation's speaker: '" ... , " the man said' -> '" ... " , a dit l' homme'.
struct SpeechVerb {
  const char *en, *fr_participle;
};
const SpeechVerb kSpeechVerbs[] = {
    {"said", "dit"}, {"asked", "demandé"}, {"explained", "expliqué"}, {"added", "ajouté"}, {"replied", "répondu"},
};

const char* const kMonthsEn[12] = {"january", "february", "march",     "april",   "may",      "june",
                                   "july",    "august",   "september", "october", "november", "december"};
const char* const kMonthsFr[12] = {"janvier", "février", "mars",      "avril",   "mai",      "juin",
                                   "juillet", "août",    "septembre", "octobre", "novembre", "décembre"};
constexpr int kFirstYear = 1980, kNumYears = 40;  // "in 1992" -> "en 1992"

}  // namespace
}  // namespace en_fr
}  // namespace seq2seq
}  // namespace attnviz
