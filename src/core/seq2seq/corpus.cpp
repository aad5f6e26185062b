// attnviz seq2seq: the en-fr grammar and the dates task (see corpus.h).
#include "core/seq2seq/corpus.h"

#include <unordered_set>

namespace attnviz {
namespace seq2seq {

namespace {

// ---------------------------------------------------------------------------
// en-fr lexicon
// ---------------------------------------------------------------------------
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
};

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

struct Verb {
  const char *en_3sg, *en_base, *fr_3sg, *fr_3pl;
  bool transitive;
};
const Verb kVerbs[] = {
    {"sees", "see", "voit", "voient", true},
    {"likes", "like", "aime", "aiment", true},
    {"watches", "watch", "regarde", "regardent", true},
    {"finds", "find", "trouve", "trouvent", true},
    {"visits", "visit", "visite", "visitent", true},
    {"knows", "know", "connaît", "connaissent", true},
    {"wants", "want", "veut", "veulent", true},
    {"buys", "buy", "achète", "achètent", true},
    {"sells", "sell", "vend", "vendent", true},
    {"reads", "read", "lit", "lisent", true},
    {"writes", "write", "écrit", "écrivent", true},
    {"loves", "love", "adore", "adorent", true},
    {"describes", "describe", "décrit", "décrivent", true},
    {"builds", "build", "construit", "construisent", true},
    {"follows", "follow", "suit", "suivent", true},
    {"hears", "hear", "entend", "entendent", true},
    {"understands", "understand", "comprend", "comprennent", true},
    {"takes", "take", "prend", "prennent", true},
    {"opens", "open", "ouvre", "ouvrent", true},
    {"supports", "support", "soutient", "soutiennent", true},
    {"leaves", "leave", "quitte", "quittent", true},
    {"protects", "protect", "protège", "protègent", true},
    {"helps", "help", "aide", "aident", true},
    {"sleeps", "sleep", "dort", "dorment", false},
    {"works", "work", "travaille", "travaillent", false},
    {"arrives", "arrive", "arrive", "arrivent", false},
    {"sings", "sing", "chante", "chantent", false},
    {"waits", "wait", "attend", "attendent", false},
};

struct Possessive {
  const char *en, *m_sg, *f_sg, *pl;
};
const Possessive kPossessives[] = {
    {"my", "mon", "ma", "mes"},  {"your", "votre", "votre", "vos"}, {"his", "son", "sa", "ses"},
    {"her", "son", "sa", "ses"}, {"our", "notre", "notre", "nos"},  {"their", "leur", "leur", "leurs"},
};

template <typename T, size_t N>
constexpr int Count(const T (&)[N]) {
  return static_cast<int>(N);
}

// French elision: a vowel or a mute h (all h-words of this lexicon are mute).
bool FrVowel(const std::string& w) {
  if (w.empty()) return false;
  const unsigned char c = static_cast<unsigned char>(w[0]);
  if (c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u' || c == 'h') return true;
  return c == 0xC3 && w.size() > 1;  // é è ê â î ô ... (every accented initial here is a vowel)
}
// English "an": written vowel, except the "you"-sounding eu-/uni-.
bool EnVowelSound(const std::string& w) {
  if (w.empty()) return false;
  if (w.compare(0, 2, "eu") == 0 || w.compare(0, 3, "uni") == 0) return false;
  const char c = w[0];
  return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u';
}

// A sentence under construction: tokens on both sides and the links between them.
struct Builder {
  SentencePair p;
  int Src(const std::string& w) {
    p.source.push_back(w);
    return static_cast<int>(p.source.size()) - 1;
  }
  int Tgt(const std::string& w) {
    p.target.push_back(w);
    return static_cast<int>(p.target.size()) - 1;
  }
  void Link(int t, int s, bool sure = true) { p.links.push_back({t, s, sure}); }
};

enum class DetKind { The, A, Possessive };

// Noun phrase description (English order: det adj... noun [of NP2]).
struct NounPhrase {
  bool country = false;
  int country_index = 0;
  int noun = 0;
  bool plural = false;
  DetKind det = DetKind::The;
  int possessive = 0;
  std::vector<int> adjectives;  // English order
  bool grammatical_fem() const { return country ? kCountries[country_index].fem : kNouns[noun].fem; }
};

NounPhrase SampleNounPhrase(Rng* rng, bool allow_country, bool allow_indefinite, int max_adjectives) {
  NounPhrase np;
  if (allow_country && rng->Chance(0.15f)) {
    np.country = true;
    np.country_index = rng->Uniform(Count(kCountries));
    return np;
  }
  np.noun = rng->Uniform(Count(kNouns));
  np.plural = rng->Chance(0.35f);
  const float d = rng->Float();
  np.det = d < 0.5f ? DetKind::The : (d < 0.7f && allow_indefinite ? DetKind::A : DetKind::Possessive);
  if (d >= 0.5f && d < 0.7f && !allow_indefinite) np.det = DetKind::The;
  np.possessive = rng->Uniform(Count(kPossessives));
  const float a = rng->Float();
  const int n_adj = max_adjectives <= 0 ? 0 : (a < 0.45f ? 0 : (a < 0.8f || max_adjectives < 2 ? 1 : 2));
  while (static_cast<int>(np.adjectives.size()) < n_adj) {
    const int adj = rng->Uniform(Count(kAdjectives));
    bool dup = false;
    for (int x : np.adjectives) dup = dup || x == adj;
    if (!dup) np.adjectives.push_back(adj);
  }
  return np;
}

const char* AdjForm(const Adjective& a, bool fem, bool plural) {
  return plural ? (fem ? a.f_pl : a.m_pl) : (fem ? a.f_sg : a.m_sg);
}

// Emits the English side of an NP; returns source indices {det (or -1), adj..., noun}.
struct NpSource {
  int det = -1;
  std::vector<int> adj;
  int noun = -1;
};
NpSource EmitEnglish(Builder* b, const NounPhrase& np) {
  NpSource s;
  if (np.country) {
    s.noun = b->Src(kCountries[np.country_index].en);
    return s;
  }
  const Noun& n = kNouns[np.noun];
  const std::string first_word = np.adjectives.empty() ? n.en_sg : kAdjectives[np.adjectives[0]].en;
  switch (np.det) {
    case DetKind::The:
      s.det = b->Src("the");
      break;
    case DetKind::A:
      s.det = b->Src(np.plural ? "some" : (EnVowelSound(first_word) ? "an" : "a"));
      break;
    case DetKind::Possessive:
      s.det = b->Src(kPossessives[np.possessive].en);
      break;
  }
  for (int a : np.adjectives) s.adj.push_back(b->Src(kAdjectives[a].en));
  s.noun = b->Src(np.plural ? n.en_pl : n.en_sg);
  return s;
}

// French determiner of an NP (country or noun), before any "de" contraction.
std::string FrenchDeterminer(const NounPhrase& np) {
  const bool fem = np.grammatical_fem();
  const std::string head = np.country ? kCountries[np.country_index].fr : kNouns[np.noun].fr_sg;
  if (np.country || np.det == DetKind::The) {
    if (np.plural) return "les";
    if (FrVowel(head)) return "l'";
    return fem ? "la" : "le";
  }
  if (np.det == DetKind::A) return np.plural ? "des" : (fem ? "une" : "un");
  const Possessive& p = kPossessives[np.possessive];
  if (np.plural) return p.pl;
  if (fem && !FrVowel(head)) return p.f_sg;
  return p.m_sg;  // masculine, or feminine before a vowel (mon école)
}

// Emits the French side of an NP; `of_index` >= 0 when the NP follows English "of" (source index).
void EmitFrench(Builder* b, const NounPhrase& np, const NpSource& src, int of_index) {
  const std::string det = FrenchDeterminer(np);
  // The article slot: for a country, the article translates the country name itself.
  const int art_src = np.country ? src.noun : src.det;
  if (of_index >= 0) {
    if (det == "le" || det == "les") {  // de + le -> du, de + les -> des
      const int t = b->Tgt(det == "le" ? "du" : "des");
      b->Link(t, of_index);
      b->Link(t, art_src, false);
    } else {
      b->Link(b->Tgt("de"), of_index);
      b->Link(b->Tgt(det), art_src);
    }
  } else {
    b->Link(b->Tgt(det), art_src);
  }
  if (np.country) {
    b->Link(b->Tgt(kCountries[np.country_index].fr), src.noun);
    return;
  }
  const Noun& n = kNouns[np.noun];
  b->Link(b->Tgt(np.plural ? n.fr_pl : n.fr_sg), src.noun);
  for (int k = static_cast<int>(np.adjectives.size()) - 1; k >= 0; --k)  // reversed order after the noun
    b->Link(b->Tgt(AdjForm(kAdjectives[np.adjectives[k]], n.fem, np.plural)), src.adj[k]);
}

// NP with an optional "of" complement: "the president of syria" -> "le président de la syrie".
struct FullNp {
  NounPhrase head;
  bool has_of = false;
  NounPhrase complement;
};
FullNp SampleFullNp(Rng* rng, bool allow_of, int max_adjectives) {
  FullNp f;
  f.head = SampleNounPhrase(rng, true, true, max_adjectives);
  if (allow_of && !f.head.country && rng->Chance(0.25f)) {
    f.has_of = true;
    f.head.adjectives.resize(std::min<size_t>(f.head.adjectives.size(), 1));
    f.complement = SampleNounPhrase(rng, true, false, 1);
  }
  return f;
}
struct FullNpSource {
  NpSource head, complement;
  int of = -1;
};
FullNpSource EmitFullEnglish(Builder* b, const FullNp& f) {
  FullNpSource s;
  s.head = EmitEnglish(b, f.head);
  if (f.has_of) {
    s.of = b->Src("of");
    s.complement = EmitEnglish(b, f.complement);
  }
  return s;
}
void EmitFullFrench(Builder* b, const FullNp& f, const FullNpSource& s) {
  EmitFrench(b, f.head, s.head, -1);
  if (f.has_of) EmitFrench(b, f.complement, s.complement, s.of);
}
bool IsPlural(const FullNp& f) {
  return !f.head.country && f.head.plural;
}

SentencePair GenerateEnFr(Rng* rng) {
  Builder b;
  const float kind = rng->Float();
  if (kind < 0.1f) {  // a bare noun phrase (like the probe)
    const FullNp np = SampleFullNp(rng, true, 2);
    EmitFullFrench(&b, np, EmitFullEnglish(&b, np));
    return b.p;
  }
  const bool transitive = kind >= 0.22f;
  const bool negated = rng->Chance(0.3f);
  int verb = 0;
  do verb = rng->Uniform(Count(kVerbs));
  while (kVerbs[verb].transitive != transitive);
  const FullNp subject = SampleFullNp(rng, true, 2);
  FullNp object;
  if (transitive) object = SampleFullNp(rng, !subject.has_of, subject.has_of ? 1 : 2);
  const bool plural = IsPlural(subject);
  const Verb& v = kVerbs[verb];

  // English: subject [does/do not] verb [object]
  const FullNpSource s_subj = EmitFullEnglish(&b, subject);
  int s_aux = -1, s_not = -1, s_verb = -1;
  if (negated) {
    s_aux = b.Src(plural ? "do" : "does");
    s_not = b.Src("not");
    s_verb = b.Src(v.en_base);
  } else {
    s_verb = b.Src(plural ? v.en_base : v.en_3sg);
  }
  FullNpSource s_obj;
  if (transitive) s_obj = EmitFullEnglish(&b, object);

  // French: subject [ne/n'] verb [pas] [object]
  EmitFullFrench(&b, subject, s_subj);
  const std::string fr_verb = plural ? v.fr_3pl : v.fr_3sg;
  if (negated) {
    const int t = b.Tgt(FrVowel(fr_verb) ? "n'" : "ne");
    b.Link(t, s_not);
    b.Link(t, s_aux, false);
  }
  const int tv = b.Tgt(fr_verb);
  b.Link(tv, s_verb);
  if (negated) {
    b.Link(tv, s_aux, false);
    b.Link(b.Tgt("pas"), s_not);
  }
  if (transitive) EmitFullFrench(&b, object, s_obj);
  return b.p;
}

// ---------------------------------------------------------------------------
// dates
// ---------------------------------------------------------------------------
const char* const kMonths[12] = {"january", "february", "march",     "april",   "may",      "june",
                                 "july",    "august",   "september", "october", "november", "december"};
const char* const kMonthAbbr[12] = {"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"};
constexpr int kFirstYear = 1950, kLastYear = 2049;

std::string Ordinal(int d) {
  const char* suffix = "th";
  if (d % 10 == 1 && d != 11) suffix = "st";
  if (d % 10 == 2 && d != 12) suffix = "nd";
  if (d % 10 == 3 && d != 13) suffix = "rd";
  return std::to_string(d) + suffix;
}
std::string TwoDigits(int x) {
  return (x < 10 ? "0" : "") + std::to_string(x);
}
int DaysIn(int month, int year) {
  static const int kDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month == 2 && leap ? 29 : kDays[month - 1];
}

SentencePair MakeDate(int format, int day, int month, int year) {
  Builder b;
  int s_day = -1, s_month = -1, s_year = -1;
  const std::string y = std::to_string(year);
  switch (format) {
    case 0:  // the 3rd of march 1999
      b.Src("the");
      s_day = b.Src(Ordinal(day));
      b.Src("of");
      s_month = b.Src(kMonths[month - 1]);
      s_year = b.Src(y);
      break;
    case 1:  // march 3 , 1999
      s_month = b.Src(kMonths[month - 1]);
      s_day = b.Src(std::to_string(day));
      b.Src(",");
      s_year = b.Src(y);
      break;
    case 2:  // 3 march 1999
      s_day = b.Src(std::to_string(day));
      s_month = b.Src(kMonths[month - 1]);
      s_year = b.Src(y);
      break;
    case 3:  // mar 3 1999
      s_month = b.Src(kMonthAbbr[month - 1]);
      s_day = b.Src(std::to_string(day));
      s_year = b.Src(y);
      break;
    case 4:  // 3 / 3 / 1999 (day / month / year)
      s_day = b.Src(std::to_string(day));
      b.Src("/");
      s_month = b.Src(std::to_string(month));
      b.Src("/");
      s_year = b.Src(y);
      break;
    default:  // march the 3rd , 1999
      s_month = b.Src(kMonths[month - 1]);
      b.Src("the");
      s_day = b.Src(Ordinal(day));
      b.Src(",");
      s_year = b.Src(y);
      break;
  }
  b.Link(b.Tgt(y), s_year);
  b.Tgt("-");
  b.Link(b.Tgt(TwoDigits(month)), s_month);
  b.Tgt("-");
  b.Link(b.Tgt(TwoDigits(day)), s_day);
  return b.p;
}
constexpr int kDateFormats = 6;

SentencePair GenerateDate(Rng* rng) {
  const int year = kFirstYear + rng->Uniform(kLastYear - kFirstYear + 1);
  const int month = 1 + rng->Uniform(12);
  const int day = 1 + rng->Uniform(DaysIn(month, year));
  return MakeDate(rng->Uniform(kDateFormats), day, month, year);
}

}  // namespace

const char* TaskName(Task t) {
  return t == Task::Dates ? "dates" : "en-fr";
}

bool ParseTask(const std::string& name, Task* out) {
  if (name == "en-fr") return *out = Task::EnFr, true;
  if (name == "dates") return *out = Task::Dates, true;
  return false;
}

bool IsPunctuation(const std::string& token) {
  return token == "-" || token == "," || token == "/" || token == "." || token == ";";
}

void BuildVocabs(Task task, Vocab* source, Vocab* target) {
  *source = Vocab();
  *target = Vocab();
  if (task == Task::Dates) {
    for (const char* w : {"the", "of", ",", "/"}) source->Add(w);
    for (int m = 0; m < 12; ++m) source->Add(kMonths[m]), source->Add(kMonthAbbr[m]);
    for (int d = 1; d <= 31; ++d) source->Add(std::to_string(d)), source->Add(Ordinal(d));
    target->Add("-");
    for (int d = 1; d <= 31; ++d) target->Add(TwoDigits(d));
    for (int y = kFirstYear; y <= kLastYear; ++y) source->Add(std::to_string(y)), target->Add(std::to_string(y));
    return;
  }
  for (const char* w : {"the", "a", "an", "some", "of", "does", "do", "not"}) source->Add(w);
  for (const Possessive& p : kPossessives)
    source->Add(p.en), target->Add(p.m_sg), target->Add(p.f_sg), target->Add(p.pl);
  for (const char* w : {"le", "la", "l'", "les", "un", "une", "des", "du", "de", "ne", "n'", "pas"}) target->Add(w);
  for (const Noun& n : kNouns) source->Add(n.en_sg), source->Add(n.en_pl), target->Add(n.fr_sg), target->Add(n.fr_pl);
  for (const Adjective& a : kAdjectives) {
    source->Add(a.en);
    for (const char* f : {a.m_sg, a.f_sg, a.m_pl, a.f_pl}) target->Add(f);
  }
  for (const Country& c : kCountries) source->Add(c.en), target->Add(c.fr);
  for (const Verb& v : kVerbs)
    source->Add(v.en_3sg), source->Add(v.en_base), target->Add(v.fr_3sg), target->Add(v.fr_3pl);
}

SentencePair GeneratePair(Task task, Rng* rng) {
  return task == Task::Dates ? GenerateDate(rng) : GenerateEnFr(rng);
}

SentencePair ProbePair(Task task) {
  if (task == Task::Dates) return MakeDate(0, 3, 3, 1999);
  Builder b;
  const int the = b.Src("the"), european = b.Src("european"), economic = b.Src("economic"), area = b.Src("area");
  b.Link(b.Tgt("la"), the);
  b.Link(b.Tgt("zone"), area);
  b.Link(b.Tgt("économique"), economic);
  b.Link(b.Tgt("européenne"), european);
  return b.p;
}

Status GenerateCorpus(Task task, uint64_t seed, int n_train, int n_heldout, Corpus* out) {
  if (n_train < 0 || n_heldout < 0 || n_train + n_heldout > 2000000)
    return Status::Error("GenerateCorpus: sizes must be in [0, 2000000]");
  Corpus c;
  c.task = task;
  c.seed = seed;
  BuildVocabs(task, &c.source_vocab, &c.target_vocab);
  Rng rng(seed);
  std::unordered_set<std::string> seen;
  // The held-out set is drawn first so it does not depend on n_train; the probe never trains.
  seen.insert(Join(ProbePair(task).source));
  int attempts = 0;
  const int max_attempts = 50 * (n_train + n_heldout) + 1000;
  for (std::vector<SentencePair>* set : {&c.heldout, &c.train}) {
    const int want = set == &c.heldout ? n_heldout : n_train;
    while (static_cast<int>(set->size()) < want) {
      if (++attempts > max_attempts) return Status::Error("GenerateCorpus: grammar too small for the requested sizes");
      SentencePair p = GeneratePair(task, &rng);
      if (!seen.insert(Join(p.source)).second) continue;
      set->push_back(std::move(p));
    }
  }
  *out = std::move(c);
  return Status::Ok();
}

}  // namespace seq2seq
}  // namespace attnviz
