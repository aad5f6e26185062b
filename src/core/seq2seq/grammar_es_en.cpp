// attnviz seq2seq: the Spanish -> English grammar (see grammar_es_en.h).
#include "core/seq2seq/grammar_es_en.h"

#include <cstdlib>

namespace attnviz {
namespace seq2seq {
namespace es_en {

using internal::Builder;
using internal::Count;
using internal::EnVowelSound;

namespace {

// ---------------------------------------------------------------------------
// lexicon
// ---------------------------------------------------------------------------
struct Weather {
  const char *es, *en;
};
const Weather kWeather[] = {{"frío", "cold"}, {"calor", "hot"}, {"viento", "windy"}, {"sol", "sunny"}};

struct TimePlace {
  const char *es, *en;
  bool past_only;
};
const TimePlace kTimePlace[] = {{"aquí", "here", false},      {"allí", "there", false}, {"hoy", "today", false},
                                {"afuera", "outside", false}, {"ahora", "now", false},  {"ayer", "yesterday", true}};

struct NounEntry {
  const char *es_sg, *es_pl, *en_sg, *en_pl;
  bool fem;
};
const NounEntry kNouns[] = {
    {"vida", "vidas", "life", "lives", true},
    {"casa", "casas", "house", "houses", true},
    {"libro", "libros", "book", "books", false},
    {"perro", "perros", "dog", "dogs", false},
    {"coche", "coches", "car", "cars", false},
    {"familia", "familias", "family", "families", true},
    {"ciudad", "ciudades", "city", "cities", true},
    {"amigo", "amigos", "friend", "friends", false},
    {"problema", "problemas", "problem", "problems", false},
    {"idea", "ideas", "idea", "ideas", true},
    {"trabajo", "trabajos", "job", "jobs", false},
    {"escuela", "escuelas", "school", "schools", true},
    {"madre", "madres", "mother", "mothers", true},
    {"padre", "padres", "father", "fathers", false},
    {"hermano", "hermanos", "brother", "brothers", false},
    {"hermana", "hermanas", "sister", "sisters", true},
    {"mesa", "mesas", "table", "tables", true},
    {"cuarto", "cuartos", "room", "rooms", false},
    {"historia", "historias", "story", "stories", true},
    {"canción", "canciones", "song", "songs", true},
};

// Spanish forms: masculine singular, feminine singular, masculine plural, feminine plural.
struct Determiner {
  const char *m_sg, *f_sg, *m_pl, *f_pl;
  const char* en;  // nullptr: "a" / "an" (singular only)
};
const Determiner kDeterminers[] = {
    {"el", "la", "los", "las", "the"},
    {"un", "una", nullptr, nullptr, nullptr},
    {"mi", "mi", "mis", "mis", "my"},
    {"tu", "tu", "tus", "tus", "your"},
    {"nuestro", "nuestra", "nuestros", "nuestras", "our"},
};

struct AdjectiveEntry {
  const char *m_sg, *f_sg, *m_pl, *f_pl, *en;
};
const AdjectiveEntry kAdjectives[] = {
    {"nuevo", "nueva", "nuevos", "nuevas", "new"},
    {"viejo", "vieja", "viejos", "viejas", "old"},
    {"pequeño", "pequeña", "pequeños", "pequeñas", "small"},
    {"grande", "grande", "grandes", "grandes", "big"},
    {"favorito", "favorita", "favoritos", "favoritas", "favorite"},
    {"bonito", "bonita", "bonitos", "bonitas", "beautiful"},
    {"difícil", "difícil", "difíciles", "difíciles", "difficult"},
    {"importante", "importante", "importantes", "importantes", "important"},
};

struct Person {
  const char *pronoun_es, *estar, *pronoun_en, *be;
  bool pro_drop;  // may be left out ("están" alone is "they are")
};
const Person kPersons[] = {
    {"yo", "estoy", "i", "am", true},           {"tú", "estás", "you", "are", true},
    {"él", "está", "he", "is", true},           {"ella", "está", "she", "is", false},
    {"nosotros", "estamos", "we", "are", true}, {"ellos", "están", "they", "are", true},
};

struct Place {
  const char *es_article, *es, *en_article, *en;  // "en casa" -> "at home", "en la oficina" -> "at the office"
};
const Place kPlaces[] = {
    {nullptr, "casa", nullptr, "home"}, {"el", "trabajo", nullptr, "work"},     {"la", "escuela", nullptr, "school"},
    {"la", "oficina", "the", "office"}, {"el", "hospital", "the", "hospital"},  {"la", "playa", "the", "beach"},
    {"el", "parque", "the", "park"},    {"la", "biblioteca", "the", "library"},
};

// Infinitive frames; links "t-s" (target-source word indices), "p" marks a possible link.
struct FrameEntry {
  const char *es, *en, *links;
  bool negatable;  // "trata de no hacerlo" -> "try not to do it"
};
const FrameEntry kFrames[] = {
    {"trata de", "try to", "0-0 1-1", true},
    {"tratemos de", "let's try to", "0-0 1-0 2-1", true},
    {"quiero", "i want to", "0-0 1-0 2-0", false},
    {"necesito", "i need to", "0-0 1-0 2-0", false},
    {"vamos a", "let's", "0-0 0-1p", false},
    {"puedo", "i can", "0-0 1-0", false},
    {"tienes que", "you have to", "0-0 1-0 2-1", false},
    {"voy a", "i'm going to", "0-0 1-0 2-1", false},
};

// An infinitive with an enclitic pronoun: one Spanish word, every English word linked to it.
struct Clitic {
  const char *es, *en;
};
const Clitic kClitics[] = {
    {"averiguarlo", "figure it out"},
    {"hacerlo", "do it"},
    {"entenderlo", "understand it"},
    {"encontrarlo", "find it"},
    {"olvidarlo", "forget it"},
    {"arreglarlo", "fix it"},
    {"leerlo", "read it"},
    {"comprarlo", "buy it"},
    {"verlo", "see it"},
    {"venderlo", "sell it"},
    {"terminarlo", "finish it"},
};

struct VerbEntry {
  const char *es, *en;
  bool transitive;
};
const VerbEntry kVerbs[] = {
    {"leer", "read", true},      {"comprar", "buy", true},    {"ver", "see", true},         {"vender", "sell", true},
    {"encontrar", "find", true}, {"arreglar", "fix", true},   {"terminar", "finish", true}, {"olvidar", "forget", true},
    {"dormir", "sleep", false},  {"trabajar", "work", false}, {"descansar", "rest", false},
};

std::vector<std::string> Words(const char* text) {
  std::vector<std::string> out;
  std::string cur;
  for (const char* p = text;; ++p) {
    if (*p == ' ' || *p == '\0') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
      if (*p == '\0') break;
    } else {
      cur.push_back(*p);
    }
  }
  return out;
}

const char* Form4(const char* m_sg, const char* f_sg, const char* m_pl, const char* f_pl, bool fem, bool plural) {
  return plural ? (fem ? f_pl : m_pl) : (fem ? f_sg : m_sg);
}

// ---------------------------------------------------------------------------
// realization
// ---------------------------------------------------------------------------
struct NounSource {
  int det = -1, noun = -1, adj = -1;
};
NounSource EmitSpanishNoun(Builder* b, const Noun& n) {
  const NounEntry& e = kNouns[n.noun];
  const Determiner& d = kDeterminers[n.det];
  NounSource s;
  s.det = b->Src(Form4(d.m_sg, d.f_sg, d.m_pl, d.f_pl, e.fem, n.plural));
  s.noun = b->Src(n.plural ? e.es_pl : e.es_sg);
  if (n.adjective >= 0) {
    const AdjectiveEntry& a = kAdjectives[n.adjective];
    s.adj = b->Src(Form4(a.m_sg, a.f_sg, a.m_pl, a.f_pl, e.fem, n.plural));
  }
  return s;
}
void EmitEnglishNoun(Builder* b, const Noun& n, const NounSource& s) {
  const NounEntry& e = kNouns[n.noun];
  const std::string first = n.adjective >= 0 ? kAdjectives[n.adjective].en : e.en_sg;
  const char* det = kDeterminers[n.det].en;
  b->Link(b->Tgt(det ? det : (EnVowelSound(first) ? "an" : "a")), s.det);
  if (n.adjective >= 0) b->Link(b->Tgt(kAdjectives[n.adjective].en), s.adj);
  b->Link(b->Tgt(n.plural ? e.en_pl : e.en_sg), s.noun);
}

void EmitPhrasePair(Builder* b, const char* es, const char* en, const char* links) {
  std::vector<int> src, tgt;
  for (const std::string& w : Words(es)) src.push_back(b->Src(w));
  for (const std::string& w : Words(en)) tgt.push_back(b->Tgt(w));
  for (const std::string& l : Words(links)) {
    const int t = std::atoi(l.c_str());
    const int s = std::atoi(l.c_str() + l.find('-') + 1);
    b->Link(tgt[t], src[s], l.back() != 'p');
  }
}

void RealizeWeather(Builder* b, const Sentence& s) {
  int no = -1, very = -1, tp = -1;
  if (s.mood == WeatherMood::Question) b->Src("¿");
  if (s.mood == WeatherMood::Negated) no = b->Src("no");
  const int hace = b->Src(s.mood == WeatherMood::Past ? "hacía" : "hace");
  if (s.very) very = b->Src("mucho");
  const int w = b->Src(kWeather[s.weather].es);
  if (s.time_place >= 0) tp = b->Src(kTimePlace[s.time_place].es);
  switch (s.mood) {
    case WeatherMood::Statement:
    case WeatherMood::Negated:
      b->Link(b->Tgt("it's"), hace);
      if (no >= 0) b->Link(b->Tgt("not"), no);
      break;
    case WeatherMood::Question:
      b->Link(b->Tgt("is"), hace);
      b->Link(b->Tgt("it"), hace);
      break;
    case WeatherMood::Past:
      b->Link(b->Tgt("it"), hace);
      b->Link(b->Tgt("was"), hace);
      break;
  }
  if (very >= 0) b->Link(b->Tgt("very"), very);
  b->Link(b->Tgt(kWeather[s.weather].en), w);
  if (tp >= 0) b->Link(b->Tgt(kTimePlace[s.time_place].en), tp);
}

void RealizeIdentity(Builder* b, const Sentence& s) {
  const NounEntry& e = kNouns[s.np.noun];
  if (s.demonstrative) {  // esta es mi vida -> this is my life
    const char* dem = s.near ? Form4("este", "esta", "estos", "estas", e.fem, s.np.plural)
                             : Form4("ese", "esa", "esos", "esas", e.fem, s.np.plural);
    const int d = b->Src(dem);
    const int cop = b->Src(s.np.plural ? "son" : "es");
    const NounSource n = EmitSpanishNoun(b, s.np);
    b->Link(b->Tgt(s.near ? (s.np.plural ? "these" : "this") : (s.np.plural ? "those" : "that")), d);
    b->Link(b->Tgt(s.np.plural ? "are" : "is"), cop);
    EmitEnglishNoun(b, s.np, n);
    return;
  }
  // mi vida es difícil -> my life is difficult
  const NounSource n = EmitSpanishNoun(b, s.np);
  const int cop = b->Src(s.np.plural ? "son" : "es");
  const AdjectiveEntry& a = kAdjectives[s.predicate];
  const int adj = b->Src(Form4(a.m_sg, a.f_sg, a.m_pl, a.f_pl, e.fem, s.np.plural));
  EmitEnglishNoun(b, s.np, n);
  b->Link(b->Tgt(s.np.plural ? "are" : "is"), cop);
  b->Link(b->Tgt(a.en), adj);
}

void RealizeLocation(Builder* b, const Sentence& s) {
  const Person& p = kPersons[s.person];
  int subj = -1, adv = -1, ya = -1;
  if (s.question) b->Src("¿");
  if (s.explicit_subject && !s.question) subj = b->Src(p.pronoun_es);
  if (s.adverb == Adverb::Still) adv = b->Src("todavía");
  if (s.adverb == Adverb::NoLonger) ya = b->Src("ya");
  if (s.adverb == Adverb::NoLonger || s.adverb == Adverb::Not) adv = b->Src("no");
  const int estar = b->Src(p.estar);
  if (s.explicit_subject && s.question) subj = b->Src(p.pronoun_es);
  const int en = b->Src("en");
  const Place& place = kPlaces[s.place];
  const int art = place.es_article ? b->Src(place.es_article) : -1;
  const int noun = b->Src(place.es);
  const int pronoun_src = subj >= 0 ? subj : estar;
  if (s.question) {  // are they still at home ?
    b->Link(b->Tgt(p.be), estar);
    b->Link(b->Tgt(p.pronoun_en), pronoun_src);
  } else {  // they are still at home .
    b->Link(b->Tgt(p.pronoun_en), pronoun_src);
    b->Link(b->Tgt(p.be), estar);
  }
  if (s.adverb == Adverb::Still) b->Link(b->Tgt("still"), adv);
  if (s.adverb == Adverb::Not) b->Link(b->Tgt("not"), adv);
  if (s.adverb == Adverb::NoLonger) {
    b->Link(b->Tgt("no"), adv);
    b->Link(b->Tgt("longer"), ya);
  }
  b->Link(b->Tgt("at"), en);
  if (place.en_article) b->Link(b->Tgt(place.en_article), art);
  b->Link(b->Tgt(place.en), noun);
}

void RealizeInfinitive(Builder* b, const Sentence& s) {
  const FrameEntry& f = kFrames[s.frame];
  if (s.negated) {  // trata de no hacerlo -> try not to do it: "not" goes before the frame's last English word
    // The frame opens the sentence, so its word indices are the sentence's.
    Builder frame;
    EmitPhrasePair(&frame, f.es, f.en, f.links);
    for (const std::string& w : frame.p.source) b->Src(w);
    const int no = b->Src("no");
    for (size_t i = 0; i < frame.p.target.size(); ++i) {
      if (i + 1 == frame.p.target.size()) b->Link(b->Tgt("not"), no);
      b->Tgt(frame.p.target[i]);
    }
    for (const Link& l : frame.p.links) {
      const int t = l.target + (l.target + 1 == static_cast<int>(frame.p.target.size()) ? 1 : 0);
      b->Link(t, l.source, l.sure);
    }
  } else {
    EmitPhrasePair(b, f.es, f.en, f.links);
  }
  if (s.clitic >= 0) {
    const int c = b->Src(kClitics[s.clitic].es);
    for (const std::string& w : Words(kClitics[s.clitic].en)) b->Link(b->Tgt(w), c);
    return;
  }
  const VerbEntry& v = kVerbs[s.verb];
  const int verb = b->Src(v.es);
  b->Link(b->Tgt(v.en), verb);
  if (v.transitive) {
    const NounSource n = EmitSpanishNoun(b, s.np);
    EmitEnglishNoun(b, s.np, n);
  }
}

// ---------------------------------------------------------------------------
// sampling
// ---------------------------------------------------------------------------
Noun SampleNoun(Rng* rng) {
  Noun n;
  n.noun = rng->Uniform(Count(kNouns));
  n.plural = rng->Chance(0.3f);
  n.det = rng->Uniform(Count(kDeterminers));
  if (n.plural && n.det == 1) n.det = 0;  // no plural indefinite ("unos")
  if (rng->Chance(0.35f)) n.adjective = rng->Uniform(Count(kAdjectives));
  return n;
}

Sentence SampleOnce(Rng* rng) {
  Sentence s;
  const float f = rng->Float();
  s.family = f < 0.2f    ? Family::Weather
             : f < 0.5f  ? Family::Identity
             : f < 0.75f ? Family::Location
                         : Family::Infinitive;
  s.mood = static_cast<WeatherMood>(rng->Uniform(4));
  s.very = rng->Chance(0.5f);
  s.weather = rng->Uniform(Count(kWeather));
  s.time_place = rng->Chance(0.7f) ? rng->Uniform(Count(kTimePlace)) : -1;
  s.demonstrative = rng->Chance(0.6f);
  s.near = rng->Chance(0.6f);
  s.np = SampleNoun(rng);
  s.predicate = rng->Uniform(Count(kAdjectives));
  s.person = rng->Uniform(Count(kPersons));
  s.explicit_subject = !kPersons[s.person].pro_drop || rng->Chance(0.3f);
  s.adverb = static_cast<Adverb>(rng->Uniform(4));
  s.question = rng->Chance(0.4f);
  s.place = rng->Uniform(Count(kPlaces));
  s.frame = rng->Uniform(Count(kFrames));
  s.negated = kFrames[s.frame].negatable && rng->Chance(0.25f);
  s.clitic = rng->Chance(0.55f) ? rng->Uniform(Count(kClitics)) : -1;
  s.verb = rng->Uniform(Count(kVerbs));
  const bool question =
      (s.family == Family::Weather && s.mood == WeatherMood::Question) || (s.family == Family::Location && s.question);
  s.period = !question && rng->Chance(0.6f);
  return s;
}

bool In(int v, int n) {
  return v >= 0 && v < n;
}

}  // namespace

bool Valid(const Sentence& s) {
  switch (s.family) {
    case Family::Weather:
      if (!In(s.weather, Count(kWeather))) return false;
      if (s.time_place != -1) {
        if (!In(s.time_place, Count(kTimePlace))) return false;
        if (kTimePlace[s.time_place].past_only && s.mood != WeatherMood::Past) return false;
      }
      return !(s.period && s.mood == WeatherMood::Question);
    case Family::Identity:
      if (!In(s.np.noun, Count(kNouns)) || !In(s.np.det, Count(kDeterminers))) return false;
      if (s.np.plural && !kDeterminers[s.np.det].en) return false;
      if (s.np.adjective != -1 && !In(s.np.adjective, Count(kAdjectives))) return false;
      return s.demonstrative || In(s.predicate, Count(kAdjectives));
    case Family::Location:
      if (!In(s.person, Count(kPersons)) || !In(s.place, Count(kPlaces))) return false;
      if (!kPersons[s.person].pro_drop && !s.explicit_subject) return false;
      if (s.question && (s.adverb == Adverb::Not || s.period)) return false;
      return true;
    case Family::Infinitive:
      if (!In(s.frame, Count(kFrames))) return false;
      if (s.negated && !kFrames[s.frame].negatable) return false;
      if (s.clitic != -1) return In(s.clitic, Count(kClitics));
      if (!In(s.verb, Count(kVerbs))) return false;
      if (!kVerbs[s.verb].transitive) return true;
      return In(s.np.noun, Count(kNouns)) && In(s.np.det, Count(kDeterminers)) &&
             (!s.np.plural || kDeterminers[s.np.det].en) &&
             (s.np.adjective == -1 || In(s.np.adjective, Count(kAdjectives)));
  }
  return false;
}

SentencePair Realize(const Sentence& s) {
  Builder b;
  switch (s.family) {
    case Family::Weather:
      RealizeWeather(&b, s);
      break;
    case Family::Identity:
      RealizeIdentity(&b, s);
      break;
    case Family::Location:
      RealizeLocation(&b, s);
      break;
    case Family::Infinitive:
      RealizeInfinitive(&b, s);
      break;
  }
  const bool question =
      (s.family == Family::Weather && s.mood == WeatherMood::Question) || (s.family == Family::Location && s.question);
  if (question) b.Src("?"), b.Tgt("?");
  if (s.period) b.Src("."), b.Tgt(".");
  return b.p;
}

Sentence Sample(Rng* rng) {
  for (;;) {
    Sentence s = SampleOnce(rng);
    if (Valid(s)) return s;
  }
}

namespace {
template <typename T, size_t N, typename Key>
int Find(const T (&table)[N], Key key, const std::string& word) {
  for (size_t i = 0; i < N; ++i)
    if (word == key(table[i])) return static_cast<int>(i);
  return -1;
}
}  // namespace

int WeatherIndex(const std::string& w) {
  return Find(
      kWeather, [](const Weather& x) { return x.es; }, w);
}
int TimePlaceIndex(const std::string& w) {
  return Find(
      kTimePlace, [](const TimePlace& x) { return x.es; }, w);
}
int DeterminerIndex(const std::string& w) {
  return Find(
      kDeterminers, [](const Determiner& x) { return x.m_sg; }, w);
}
int NounIndex(const std::string& w) {
  return Find(
      kNouns, [](const NounEntry& x) { return x.es_sg; }, w);
}
int PersonIndex(const std::string& w) {
  return Find(
      kPersons, [](const Person& x) { return x.estar; }, w);
}
int PlaceIndex(const std::string& w) {
  return Find(
      kPlaces, [](const Place& x) { return x.es; }, w);
}
int FrameIndex(const std::string& w) {
  return Find(
      kFrames, [](const FrameEntry& x) { return x.es; }, w);
}
int CliticIndex(const std::string& w) {
  return Find(
      kClitics, [](const Clitic& x) { return x.es; }, w);
}

}  // namespace es_en

namespace internal {

SentencePair GenerateEsEn(Rng* rng) {
  return es_en::Realize(es_en::Sample(rng));
}

void BuildEsEnVocabs(Vocab* source, Vocab* target) {
  using namespace es_en;
  *source = Vocab();
  *target = Vocab();
  for (const char* w : {"¿",    "?",     ".",     "no",  "hace", "hacía", "mucho", "es",      "son", "este",
                        "esta", "estos", "estas", "ese", "esa",  "esos",  "esas",  "todavía", "ya",  "en"})
    source->Add(w);
  for (const char* w : {"?", ".", "it's", "it", "is", "was", "not", "very", "this", "these", "that", "those", "are",
                        "still", "no", "longer", "at", "a", "an"})
    target->Add(w);
  for (const Weather& w : kWeather) source->Add(w.es), target->Add(w.en);
  for (const TimePlace& t : kTimePlace) source->Add(t.es), target->Add(t.en);
  for (const NounEntry& n : kNouns)
    source->Add(n.es_sg), source->Add(n.es_pl), target->Add(n.en_sg), target->Add(n.en_pl);
  for (const Determiner& d : kDeterminers) {
    for (const char* f : {d.m_sg, d.f_sg, d.m_pl, d.f_pl})
      if (f) source->Add(f);
    if (d.en) target->Add(d.en);
  }
  for (const AdjectiveEntry& a : kAdjectives) {
    for (const char* f : {a.m_sg, a.f_sg, a.m_pl, a.f_pl}) source->Add(f);
    target->Add(a.en);
  }
  for (const Person& p : kPersons)
    source->Add(p.pronoun_es), source->Add(p.estar), target->Add(p.pronoun_en), target->Add(p.be);
  for (const Place& p : kPlaces) {
    if (p.es_article) source->Add(p.es_article);
    source->Add(p.es);
    if (p.en_article) target->Add(p.en_article);
    target->Add(p.en);
  }
  for (const FrameEntry& f : kFrames) {
    for (const std::string& w : Words(f.es)) source->Add(w);
    for (const std::string& w : Words(f.en)) target->Add(w);
  }
  for (const Clitic& c : kClitics) {
    source->Add(c.es);
    for (const std::string& w : Words(c.en)) target->Add(w);
  }
  for (const VerbEntry& v : kVerbs) source->Add(v.es), target->Add(v.en);
}

}  // namespace internal
}  // namespace seq2seq
}  // namespace attnviz
