// attnviz seq2seq: the English -> French grammar (see grammar_en_fr.h): realization with gold
// links, the grammar's constraints, sampling, the vocabularies.
#include "core/seq2seq/grammar_en_fr.h"

#include <cstdlib>
#include <cstring>

#include "core/seq2seq/grammar_en_fr_lexicon.h"

namespace attnviz {
namespace seq2seq {
namespace en_fr {

using internal::Builder;
using internal::Count;
using internal::EnVowelSound;
using internal::FrVowel;

namespace {

constexpr int kMaxSourceTokens = 18;  // longer derivations are rejected (the figures have 13-15 tokens)

// ---------------------------------------------------------------------------
// noun phrases
// ---------------------------------------------------------------------------
enum class Role { Subject, Object, Reporter, Speaker, Complement, Bare };

bool Feminine(const NpCore& c) {
  switch (c.kind) {
    case NounKind::Common:
      return kNouns[c.noun].fem;
    case NounKind::Country:
      return kCountries[c.noun].fem;
    case NounKind::Abstract:
      return kAbstractNouns[c.noun].fem;
    case NounKind::This:
      return false;
  }
  return false;
}
bool Plural(const NpCore& c) {
  return c.kind == NounKind::Common && c.plural;
}

// Source indices of a noun phrase's words (-1: absent).
struct CoreSource {
  int det = -1, pre = -1, noun = -1;
  std::vector<int> adj;
};
struct NpSource {
  CoreSource head, complement;
  int prep = -1;
};

CoreSource EmitEnglishCore(Builder* b, const NpCore& c) {
  CoreSource s;
  switch (c.kind) {
    case NounKind::Country:
      s.noun = b->Src(kCountries[c.noun].en);
      return s;
    case NounKind::This:
      s.noun = b->Src("this");
      return s;
    case NounKind::Abstract:
      if (c.det == Det::The) s.det = b->Src("the");
      s.noun = b->Src(kAbstractNouns[c.noun].en);
      return s;
    case NounKind::Common:
      break;
  }
  const Noun& n = kNouns[c.noun];
  std::string first = c.plural ? n.en_pl : n.en_sg;
  if (!c.adjectives.empty()) first = kAdjectives[c.adjectives[0]].en;
  if (c.pre_adjective >= 0) first = kPreAdjectives[c.pre_adjective].en;
  switch (c.det) {
    case Det::The:
      s.det = b->Src("the");
      break;
    case Det::A:
      s.det = b->Src(c.plural ? "some" : (EnVowelSound(first) ? "an" : "a"));
      break;
    case Det::Possessive:
      s.det = b->Src(kPossessives[c.possessive].en);
      break;
    case Det::Bare:
      break;
  }
  if (c.pre_adjective >= 0) s.pre = b->Src(kPreAdjectives[c.pre_adjective].en);
  for (int a : c.adjectives) s.adj.push_back(b->Src(kAdjectives[a].en));
  s.noun = b->Src(c.plural ? n.en_pl : n.en_sg);
  return s;
}

NpSource EmitEnglishNp(Builder* b, const Np& np) {
  NpSource s;
  s.head = EmitEnglishCore(b, np.head);
  if (np.prep >= 0) {
    s.prep = b->Src(kPrepositions[np.prep].en);
    s.complement = EmitEnglishCore(b, np.complement);
  }
  return s;
}

const char* PreAdjectiveForm(const PreAdjective& a, bool fem, bool plural, const std::string& noun) {
  if (plural) return fem ? a.f_pl : a.m_pl;
  if (fem) return a.f_sg;
  return FrVowel(noun) ? a.m_sg_vowel : a.m_sg;
}
const char* AdjectiveForm(const Adjective& a, bool fem, bool plural) {
  return plural ? (fem ? a.f_pl : a.m_pl) : (fem ? a.f_sg : a.m_sg);
}
std::string DefiniteArticle(bool fem, bool plural, const std::string& next_word) {
  if (plural) return "les";
  if (FrVowel(next_word)) return "l'";
  return fem ? "la" : "le";
}

// French of a common noun phrase's words after the determiner: pre-adjective, noun, adjectives.
struct FrenchWords {
  std::string pre, noun;
  std::vector<std::string> adj;  // French order (reversed English order)
  const std::string& first() const { return pre.empty() ? noun : pre; }
};
FrenchWords CommonFrench(const NpCore& c) {
  const Noun& n = kNouns[c.noun];
  FrenchWords w;
  w.noun = c.plural ? n.fr_pl : n.fr_sg;
  if (c.pre_adjective >= 0) w.pre = PreAdjectiveForm(kPreAdjectives[c.pre_adjective], n.fem, c.plural, w.noun);
  for (int k = static_cast<int>(c.adjectives.size()) - 1; k >= 0; --k)
    w.adj.push_back(AdjectiveForm(kAdjectives[c.adjectives[k]], n.fem, c.plural));
  return w;
}

// The French determiner of a core. negated_object: indefinite articles become "de" after "ne ... pas".
std::string FrenchDeterminer(const NpCore& c, bool negated_object) {
  switch (c.kind) {
    case NounKind::Country:
      return DefiniteArticle(kCountries[c.noun].fem, false, kCountries[c.noun].fr);
    case NounKind::Abstract:
      return DefiniteArticle(kAbstractNouns[c.noun].fem, false, kAbstractNouns[c.noun].fr);
    case NounKind::This:
      return "";
    case NounKind::Common:
      break;
  }
  const FrenchWords w = CommonFrench(c);
  const bool fem = kNouns[c.noun].fem;
  switch (c.det) {
    case Det::The:
      return DefiniteArticle(fem, c.plural, w.first());
    case Det::A:
    case Det::Bare:
      if (negated_object) return "de";
      if (c.plural) return c.pre_adjective >= 0 ? "de" : "des";  // "de nouvelles armes"
      return fem ? "une" : "un";
    case Det::Possessive: {
      const Possessive& p = kPossessives[c.possessive];
      if (c.plural) return p.pl;
      return fem && !FrVowel(w.first()) ? p.f_sg : p.m_sg;  // "mon école", "ma nouvelle école"
    }
  }
  return "";
}

// Emits a core's French. of_index >= 0: the core follows English "of" (de + le -> du, de + les -> des).
void EmitFrenchCore(Builder* b, const NpCore& c, const CoreSource& src, int of_index, bool negated_object) {
  if (c.kind == NounKind::This) {
    b->Link(b->Tgt("cela"), src.noun);
    return;
  }
  const std::string det = FrenchDeterminer(c, negated_object);
  // The article's source: the English determiner, or the noun itself where English has none
  // ("syria" -> "la syrie", "destruction" -> "la destruction", "weapons" -> "des armes").
  // Where English has a determiner, the French one also has a possible link to the noun, whose
  // gender, number and first sound choose its form (le / la / l' / les): "one must consider the
  // word following [the] to determine whether it should be translated into [le], [la], [les] or
  // [l']" (Bahdanau et al. 2015, section 5.2.2, on "the man" -> "l' homme").
  const int det_src = src.det >= 0 ? src.det : src.noun;
  const int noun_possible = src.det >= 0 ? src.noun : -1;
  if (of_index >= 0 && (det == "le" || det == "les")) {
    const int t = b->Tgt(det == "le" ? "du" : "des");
    b->Link(t, of_index);
    b->Link(t, det_src, false);
    b->Link(t, noun_possible, false);
  } else {
    if (of_index >= 0) b->Link(b->Tgt("de"), of_index);
    const int t = b->Tgt(det);
    b->Link(t, det_src);
    b->Link(t, noun_possible, false);
  }
  if (c.kind == NounKind::Country) {
    b->Link(b->Tgt(kCountries[c.noun].fr), src.noun);
    return;
  }
  if (c.kind == NounKind::Abstract) {
    b->Link(b->Tgt(kAbstractNouns[c.noun].fr), src.noun);
    return;
  }
  const FrenchWords w = CommonFrench(c);
  if (!w.pre.empty()) b->Link(b->Tgt(w.pre), src.pre);
  b->Link(b->Tgt(w.noun), src.noun);
  for (size_t k = 0; k < w.adj.size(); ++k) b->Link(b->Tgt(w.adj[k]), src.adj[src.adj.size() - 1 - k]);
}

void EmitFrenchNp(Builder* b, const Np& np, const NpSource& src, bool negated_object = false) {
  EmitFrenchCore(b, np.head, src.head, -1, negated_object);
  if (np.prep < 0) return;
  if (np.prep == 0) {
    EmitFrenchCore(b, np.complement, src.complement, src.prep, false);
  } else {
    b->Link(b->Tgt(kPrepositions[np.prep].fr), src.prep);
    EmitFrenchCore(b, np.complement, src.complement, -1, false);
  }
}

// ---------------------------------------------------------------------------
// clauses
// ---------------------------------------------------------------------------
bool Transitive(const Clause& c) {
  switch (c.kind) {
    case ClauseKind::Present:
    case ClauseKind::Modal:
    case ClauseKind::Future:
      return kVerbs[c.verb].transitive;
    case ClauseKind::PastActive:
      return true;
    default:
      return false;
  }
}

struct ClauseSource {
  NpSource subject, object;
  int aux = -1;                                      // does / do / did / can / will / was / were / is / are
  int neg = -1;                                      // "not", or "no" of "no longer"
  int longer = -1;                                   // "longer"
  int verb = -1;                                     // the lexical verb (or the adjective of a copula)
  int the = -1, degree = -1, of = -1, of_noun = -1;  // superlative
  int in = -1, month = -1, year = -1;                // time phrase
};

void EmitEnglishPolarity(Builder* b, Polarity p, ClauseSource* s) {
  if (p == Polarity::Not) s->neg = b->Src("not");
  if (p == Polarity::NoLonger) s->neg = b->Src("no"), s->longer = b->Src("longer");
}

ClauseSource EmitEnglishClause(Builder* b, const Clause& c) {
  ClauseSource s;
  s.subject = EmitEnglishNp(b, c.subject);
  const bool pl = Plural(c.subject.head);
  switch (c.kind) {
    case ClauseKind::Present: {
      const Verb& v = kVerbs[c.verb];
      if (c.polarity == Polarity::Not) s.aux = b->Src(pl ? "do" : "does");
      EmitEnglishPolarity(b, c.polarity, &s);
      s.verb = b->Src(c.polarity == Polarity::Not || pl ? v.en_base : v.en_3sg);
      break;
    }
    case ClauseKind::Modal:
    case ClauseKind::Future:
      s.aux = b->Src(c.kind == ClauseKind::Modal ? "can" : "will");
      EmitEnglishPolarity(b, c.polarity, &s);
      s.verb = b->Src(kVerbs[c.verb].en_base);
      break;
    case ClauseKind::PastActive:
      if (c.polarity == Polarity::Not) {
        s.aux = b->Src("did");
        EmitEnglishPolarity(b, c.polarity, &s);
        s.verb = b->Src(kPastVerbs[c.verb].en_base);
      } else {
        s.verb = b->Src(kPastVerbs[c.verb].en_past);
      }
      break;
    case ClauseKind::Passive:
      s.aux = b->Src(pl ? "were" : "was");
      EmitEnglishPolarity(b, c.polarity, &s);
      s.verb = b->Src(kPastVerbs[c.verb].en_participle);
      break;
    case ClauseKind::Copula:
    case ClauseKind::Superlative:
      s.aux = b->Src(pl ? "are" : "is");
      EmitEnglishPolarity(b, c.polarity, &s);
      if (c.kind == ClauseKind::Superlative) s.the = b->Src("the"), s.degree = b->Src(c.most ? "most" : "least");
      s.verb = b->Src(kAdjectives[c.adjective].en);
      if (c.kind == ClauseKind::Superlative) s.of = b->Src("of"), s.of_noun = b->Src(kNouns[c.of_noun].en_pl);
      break;
  }
  if (Transitive(c)) s.object = EmitEnglishNp(b, c.object);
  if (c.year >= 0) {
    s.in = b->Src("in");
    if (c.month >= 0) s.month = b->Src(kMonthsEn[c.month]);
    s.year = b->Src(std::to_string(kFirstYear + c.year));
  }
  return s;
}

// "ne" (elided to "n'" later) before the finite verb; returns its target index or -1.
int EmitFrenchNe(Builder* b, const Clause& c, const ClauseSource& s) {
  if (c.polarity == Polarity::Positive) return -1;
  const int t = b->Tgt("ne");
  b->Link(t, s.neg);
  if (c.polarity == Polarity::NoLonger) b->Link(t, s.longer, false);
  if (c.kind == ClauseKind::Present || c.kind == ClauseKind::PastActive) b->Link(t, s.aux, false);
  return t;
}
// "pas" / "plus" after the finite verb.
void EmitFrenchNegation(Builder* b, const Clause& c, const ClauseSource& s) {
  if (c.polarity == Polarity::Not) b->Link(b->Tgt("pas"), s.neg);
  if (c.polarity == Polarity::NoLonger) {
    const int t = b->Tgt("plus");
    b->Link(t, s.longer);
    b->Link(t, s.neg, false);
  }
}

void EmitFrenchClause(Builder* b, const Clause& c, const ClauseSource& s) {
  EmitFrenchNp(b, c.subject, s.subject);
  const bool pl = Plural(c.subject.head), fem = Feminine(c.subject.head);
  const bool negated = c.polarity != Polarity::Positive;
  EmitFrenchNe(b, c, s);
  switch (c.kind) {
    case ClauseKind::Present: {
      const int t = b->Tgt(pl ? kVerbs[c.verb].fr_3pl : kVerbs[c.verb].fr_3sg);
      b->Link(t, s.verb);
      b->Link(t, s.aux, false);
      EmitFrenchNegation(b, c, s);
      break;
    }
    case ClauseKind::Modal:
    case ClauseKind::Future: {
      const bool modal = c.kind == ClauseKind::Modal;
      b->Link(b->Tgt(modal ? (pl ? "peuvent" : "peut") : (pl ? "vont" : "va")), s.aux);
      EmitFrenchNegation(b, c, s);
      b->Link(b->Tgt(kVerbs[c.verb].fr_inf), s.verb);
      break;
    }
    case ClauseKind::PastActive:
      b->Link(b->Tgt(pl ? "ont" : "a"), negated ? s.aux : s.verb);
      EmitFrenchNegation(b, c, s);
      b->Link(b->Tgt(kPastVerbs[c.verb].m_sg), s.verb);
      break;
    case ClauseKind::Passive: {
      b->Link(b->Tgt(pl ? "ont" : "a"), s.aux);
      EmitFrenchNegation(b, c, s);
      b->Link(b->Tgt("été"), s.aux);
      const PastVerb& v = kPastVerbs[c.verb];
      b->Link(b->Tgt(pl ? (fem ? v.f_pl : v.m_pl) : (fem ? v.f_sg : v.m_sg)), s.verb);
      break;
    }
    case ClauseKind::Copula:
    case ClauseKind::Superlative: {
      b->Link(b->Tgt(pl ? "sont" : "est"), s.aux);
      EmitFrenchNegation(b, c, s);
      if (c.kind == ClauseKind::Superlative) {
        b->Link(b->Tgt(pl ? "les" : (fem ? "la" : "le")), s.the);
        b->Link(b->Tgt(c.most ? "plus" : "moins"), s.degree);
      }
      b->Link(b->Tgt(AdjectiveForm(kAdjectives[c.adjective], fem, pl)), s.verb);
      if (c.kind == ClauseKind::Superlative) {
        // "of environments" -> "de l' environnement": the generic singular, as in the paper's Figure 3(b)
        const Noun& n = kNouns[c.of_noun];
        const std::string art = DefiniteArticle(n.fem, false, n.fr_sg);
        if (art == "le") {
          const int t = b->Tgt("du");
          b->Link(t, s.of);
          b->Link(t, s.of_noun, false);
        } else {
          b->Link(b->Tgt("de"), s.of);
          b->Link(b->Tgt(art), s.of_noun);
        }
        b->Link(b->Tgt(n.fr_sg), s.of_noun);
      }
      break;
    }
  }
  if (Transitive(c)) EmitFrenchNp(b, c.object, s.object, negated);
  if (c.year >= 0) {
    b->Link(b->Tgt("en"), s.in);
    if (c.month >= 0) b->Link(b->Tgt(kMonthsFr[c.month]), s.month);
    b->Link(b->Tgt(std::to_string(kFirstYear + c.year)), s.year);
  }
}

// Splits "a b c" into words.
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

// Emits a fixed phrase pair with its links ("0-0 1-2p": target-source, p = possible).
void EmitPhrasePair(Builder* b, const char* en, const char* fr, const char* links) {
  std::vector<int> src, tgt;
  for (const std::string& w : Words(en)) src.push_back(b->Src(w));
  for (const std::string& w : Words(fr)) tgt.push_back(b->Tgt(w));
  for (const std::string& l : Words(links)) {
    const int t = std::atoi(l.c_str());
    const int s = std::atoi(l.c_str() + l.find('-') + 1);
    b->Link(tgt[t], src[s], l.back() != 'p');
  }
}

// ---------------------------------------------------------------------------
// validity
// ---------------------------------------------------------------------------
bool ValidCore(const NpCore& c, Role role) {
  auto in = [](int v, int n) { return v >= 0 && v < n; };
  switch (c.kind) {
    case NounKind::Country:
      return in(c.noun, Count(kCountries));
    case NounKind::This:
      return role == Role::Subject || role == Role::Reporter;
    case NounKind::Abstract:
      return in(c.noun, Count(kAbstractNouns)) && (c.det == Det::The || c.det == Det::Bare) &&
             (role == Role::Subject || role == Role::Object || role == Role::Reporter);
    case NounKind::Common:
      break;
  }
  if (!in(c.noun, Count(kNouns)) || !in(c.possessive, Count(kPossessives))) return false;
  if (c.pre_adjective != -1 && !in(c.pre_adjective, Count(kPreAdjectives))) return false;
  if (c.adjectives.size() + (c.pre_adjective >= 0 ? 1 : 0) > 2) return false;
  for (size_t i = 0; i < c.adjectives.size(); ++i) {
    if (!in(c.adjectives[i], Count(kAdjectives))) return false;
    for (size_t j = 0; j < i; ++j)
      if (c.adjectives[i] == c.adjectives[j]) return false;
  }
  if (c.det == Det::Bare) return c.plural && role == Role::Object;  // "produce weapons" -> "produire des armes"
  if (role == Role::Complement) return c.det == Det::The || c.det == Det::Possessive;
  return true;
}

bool ValidNp(const Np& np, Role role) {
  if (!ValidCore(np.head, role)) return false;
  if (np.prep == -1) return true;
  if (np.prep < 0 || np.prep >= Count(kPrepositions)) return false;
  if (np.head.kind == NounKind::Abstract) return np.prep == 0 && ValidCore(np.complement, Role::Complement);
  if (np.head.kind != NounKind::Common) return false;
  if (np.head.adjectives.size() + (np.head.pre_adjective >= 0 ? 1 : 0) > 1) return false;
  if (np.complement.kind != NounKind::Common && np.complement.kind != NounKind::Country) return false;
  return ValidCore(np.complement, Role::Complement);
}

bool ValidClause(const Clause& c) {
  if (!ValidNp(c.subject, Role::Subject)) return false;
  const bool past = c.kind == ClauseKind::PastActive || c.kind == ClauseKind::Passive;
  const int n_verbs = past ? Count(kPastVerbs) : Count(kVerbs);
  if (c.verb < 0 || c.verb >= n_verbs) return false;
  if (c.subject.head.kind == NounKind::This &&
      (c.kind == ClauseKind::Passive || c.kind == ClauseKind::Copula || c.kind == ClauseKind::Superlative))
    return false;
  if (c.polarity == Polarity::NoLonger &&
      !(c.kind == ClauseKind::Present || c.kind == ClauseKind::Modal || c.kind == ClauseKind::Future))
    return false;
  if (c.year != -1 && (!past || c.year < 0 || c.year >= kNumYears)) return false;
  if (c.month != -1 && (c.year < 0 || c.month < 0 || c.month >= 12)) return false;
  if (c.adjective < 0 || c.adjective >= Count(kAdjectives) || c.of_noun < 0 || c.of_noun >= Count(kNouns)) return false;
  if (!Transitive(c)) return true;
  if (!ValidNp(c.object, Role::Object)) return false;
  // English has no "some" under negation: "does not buy cars" (bare), never "does not buy some cars".
  return !(c.polarity != Polarity::Positive && c.object.head.kind == NounKind::Common && c.object.head.det == Det::A &&
           c.object.head.plural);
}

// ---------------------------------------------------------------------------
// sampling: every choice gives each value of its range a positive probability
// ---------------------------------------------------------------------------
int Weighted(Rng* rng, std::initializer_list<float> weights) {
  float total = 0;
  for (float w : weights) total += w;
  float x = rng->Float() * total;
  int i = 0;
  for (float w : weights) {
    if (x < w) return i;
    x -= w;
    ++i;
  }
  return i - 1;
}

// complexity: 0 simple ... 2 rich (more adjectives and prepositional phrases).
NpCore SampleCore(Rng* rng, Role role, int complexity) {
  NpCore c;
  const float country = role == Role::Complement ? 0.25f : 0.12f;
  const float abstract = role == Role::Subject || role == Role::Object || role == Role::Reporter ? 0.07f : 0.0f;
  const float this_np = role == Role::Subject || role == Role::Reporter ? 0.06f : 0.0f;
  c.kind = static_cast<NounKind>(Weighted(rng, {1.0f - country - abstract - this_np, country, abstract, this_np}));
  switch (c.kind) {
    case NounKind::Country:
      c.noun = rng->Uniform(Count(kCountries));
      return c;
    case NounKind::Abstract:
      c.noun = rng->Uniform(Count(kAbstractNouns));
      c.det = rng->Chance(0.5f) ? Det::Bare : Det::The;
      return c;
    case NounKind::This:
      return c;
    case NounKind::Common:
      break;
  }
  c.noun = rng->Uniform(Count(kNouns));
  c.plural = rng->Chance(0.35f);
  if (role == Role::Complement) {
    c.det = rng->Chance(0.65f) ? Det::The : Det::Possessive;
  } else {
    c.det = static_cast<Det>(Weighted(rng, {0.5f, 0.18f, 0.22f, role == Role::Object ? 0.08f : 0.0f}));
    if (c.det == Det::Bare) c.plural = true;  // bare objects are plural ("weapons")
  }
  c.possessive = rng->Uniform(Count(kPossessives));
  const float none = complexity == 0 ? 0.75f : 0.55f;
  const int n_adj = Weighted(rng, {none, 0.33f, complexity == 2 ? 0.15f : 0.05f});
  if (n_adj > 0 && rng->Chance(0.25f)) c.pre_adjective = rng->Uniform(Count(kPreAdjectives));
  while (static_cast<int>(c.adjectives.size()) + (c.pre_adjective >= 0 ? 1 : 0) < n_adj) {
    const int a = rng->Uniform(Count(kAdjectives));
    bool dup = false;
    for (int x : c.adjectives) dup = dup || x == a;
    if (!dup) c.adjectives.push_back(a);
  }
  return c;
}

// pp: probability of a prepositional phrase after a common noun (default by complexity).
Np SampleNp(Rng* rng, Role role, int complexity, float pp_common = -1.0f) {
  Np np;
  np.head = SampleCore(rng, role, complexity);
  if (pp_common < 0) pp_common = complexity == 0 ? 0.05f : 0.22f;
  const float pp = np.head.kind == NounKind::Abstract ? 0.45f : pp_common;
  if ((np.head.kind == NounKind::Common || np.head.kind == NounKind::Abstract) && rng->Chance(pp)) {
    np.prep = np.head.kind == NounKind::Abstract ? 0 : Weighted(rng, {0.4f, 0.16f, 0.16f, 0.1f, 0.09f, 0.09f});
    np.complement = SampleCore(rng, Role::Complement, complexity);
  }
  return np;
}

Clause SampleClause(Rng* rng, int complexity) {
  Clause c;
  c.kind = static_cast<ClauseKind>(Weighted(rng, {0.34f, 0.14f, 0.12f, 0.11f, 0.13f, 0.09f, 0.07f}));
  // Participles and adjectives agree with the subject's head noun, not with the nearest noun:
  // "the agreement on the area was signed" -> "l' accord sur la zone a été signé". Such subjects
  // are frequent enough to learn it.
  const bool agrees =
      c.kind == ClauseKind::Passive || c.kind == ClauseKind::Copula || c.kind == ClauseKind::Superlative;
  c.subject = SampleNp(rng, Role::Subject, complexity, agrees ? 0.4f : -1.0f);
  c.polarity = static_cast<Polarity>(Weighted(rng, {0.7f, 0.18f, 0.12f}));
  const bool past = c.kind == ClauseKind::PastActive || c.kind == ClauseKind::Passive;
  c.verb = rng->Uniform(past ? Count(kPastVerbs) : Count(kVerbs));
  c.object = SampleNp(rng, Role::Object, complexity);
  c.adjective = rng->Uniform(Count(kAdjectives));
  c.most = rng->Chance(0.5f);
  c.of_noun = rng->Uniform(Count(kNouns));
  if (past && rng->Chance(0.5f)) {
    c.year = rng->Uniform(kNumYears);
    if (rng->Chance(0.6f)) c.month = rng->Uniform(12);
  }
  return c;
}

Sentence SampleOnce(Rng* rng) {
  Sentence s;
  s.frame = static_cast<Frame>(Weighted(rng, {0.58f, 0.14f, 0.08f, 0.10f, 0.10f}));
  const int complexity = s.frame == Frame::None ? 2 : 1;
  s.impersonal = rng->Uniform(Count(kImpersonalFrames));
  s.reporting_verb = rng->Uniform(Count(kReportingVerbs));
  s.speech_verb = rng->Uniform(Count(kSpeechVerbs));
  s.period = s.frame != Frame::BareNp && rng->Chance(s.frame == Frame::Quote ? 0.7f : 0.5f);
  switch (s.frame) {
    case Frame::BareNp:
      s.bare = SampleNp(rng, Role::Bare, 2);
      break;
    case Frame::Reporting:
      s.reporter = SampleNp(rng, Role::Reporter, 1);
      break;
    case Frame::Quote:
      s.speaker = SampleNp(rng, Role::Speaker, 0);
      break;
    default:
      break;
  }
  if (s.frame != Frame::BareNp) s.clause = SampleClause(rng, complexity);
  return s;
}

}  // namespace

bool Valid(const Sentence& s) {
  switch (s.frame) {
    case Frame::BareNp:
      if (!ValidNp(s.bare, Role::Bare) || s.period) return false;
      break;
    case Frame::None:
      break;
    case Frame::Impersonal:
      if (s.impersonal < 0 || s.impersonal >= Count(kImpersonalFrames)) return false;
      break;
    case Frame::Reporting:
      if (s.reporting_verb < 0 || s.reporting_verb >= Count(kReportingVerbs)) return false;
      if (!ValidNp(s.reporter, Role::Reporter)) return false;
      break;
    case Frame::Quote:
      if (s.speech_verb < 0 || s.speech_verb >= Count(kSpeechVerbs)) return false;
      if (!ValidNp(s.speaker, Role::Speaker)) return false;
      break;
  }
  if (s.frame != Frame::BareNp && !ValidClause(s.clause)) return false;
  return static_cast<int>(Realize(s).source.size()) <= kMaxSourceTokens;
}

SentencePair Realize(const Sentence& s) {
  Builder b;
  switch (s.frame) {
    case Frame::BareNp: {
      const NpSource src = EmitEnglishNp(&b, s.bare);
      EmitFrenchNp(&b, s.bare, src);
      break;
    }
    case Frame::None: {
      const ClauseSource src = EmitEnglishClause(&b, s.clause);
      EmitFrenchClause(&b, s.clause, src);
      break;
    }
    case Frame::Impersonal: {
      const ImpersonalFrame& f = kImpersonalFrames[s.impersonal];
      EmitPhrasePair(&b, f.en, f.fr, f.links);  // first on both sides
      const ClauseSource src = EmitEnglishClause(&b, s.clause);
      EmitFrenchClause(&b, s.clause, src);
      break;
    }
    case Frame::Reporting: {
      const ReportingVerb& v = kReportingVerbs[s.reporting_verb];
      const bool pl = Plural(s.reporter.head);
      const NpSource rep = EmitEnglishNp(&b, s.reporter);
      const int verb = b.Src(pl ? v.en_pl : v.en_sg);
      const int that = b.Src("that");
      const ClauseSource src = EmitEnglishClause(&b, s.clause);
      EmitFrenchNp(&b, s.reporter, rep);
      if (v.fr_participle) {
        b.Link(b.Tgt(pl ? "ont" : "a"), verb);
        b.Link(b.Tgt(v.fr_participle), verb);
      } else {
        b.Link(b.Tgt(pl ? v.fr_pl : v.fr_sg), verb);
      }
      b.Link(b.Tgt("que"), that);
      EmitFrenchClause(&b, s.clause, src);
      break;
    }
    case Frame::Quote: {
      const int open = b.Src("\"");
      const ClauseSource src = EmitEnglishClause(&b, s.clause);
      b.Src(",");
      const int close = b.Src("\"");
      const NpSource speaker = EmitEnglishNp(&b, s.speaker);
      const int said = b.Src(kSpeechVerbs[s.speech_verb].en);
      b.Link(b.Tgt("\""), open);
      EmitFrenchClause(&b, s.clause, src);
      b.Link(b.Tgt("\""), close);
      b.Tgt(",");
      b.Link(b.Tgt(Plural(s.speaker.head) ? "ont" : "a"), said);
      b.Link(b.Tgt(kSpeechVerbs[s.speech_verb].fr_participle), said);
      EmitFrenchNp(&b, s.speaker, speaker);  // inversion: "a dit l' homme"
      break;
    }
  }
  if (s.period) b.Src("."), b.Tgt(".");
  internal::ElideFrench(&b.p.target);
  return b.p;
}

Sentence Sample(Rng* rng) {
  for (;;) {
    Sentence s = SampleOnce(rng);
    if (Valid(s)) return s;
  }
}

// ---------------------------------------------------------------------------
// lookups (for derivations written by hand)
// ---------------------------------------------------------------------------
namespace {
template <typename T, size_t N, typename Key>
int Find(const T (&table)[N], Key key, const std::string& word) {
  for (size_t i = 0; i < N; ++i)
    if (word == key(table[i])) return static_cast<int>(i);
  return -1;
}
}  // namespace

int NounIndex(const std::string& w) {
  return Find(
      kNouns, [](const Noun& x) { return x.en_sg; }, w);
}
int CountryIndex(const std::string& w) {
  return Find(
      kCountries, [](const Country& x) { return x.en; }, w);
}
int AbstractIndex(const std::string& w) {
  return Find(
      kAbstractNouns, [](const AbstractNoun& x) { return x.en; }, w);
}
int AdjectiveIndex(const std::string& w) {
  return Find(
      kAdjectives, [](const Adjective& x) { return x.en; }, w);
}
int PreAdjectiveIndex(const std::string& w) {
  return Find(
      kPreAdjectives, [](const PreAdjective& x) { return x.en; }, w);
}
int PossessiveIndex(const std::string& w) {
  return Find(
      kPossessives, [](const Possessive& x) { return x.en; }, w);
}
int PrepositionIndex(const std::string& w) {
  return Find(
      kPrepositions, [](const Preposition& x) { return x.en; }, w);
}
int VerbIndex(const std::string& w) {
  return Find(
      kVerbs, [](const Verb& x) { return x.en_base; }, w);
}
int PastVerbIndex(const std::string& w) {
  return Find(
      kPastVerbs, [](const PastVerb& x) { return x.en_base; }, w);
}
int ImpersonalIndex(const std::string& w) {
  return Find(
      kImpersonalFrames, [](const ImpersonalFrame& x) { return x.en; }, w);
}
int ReportingVerbIndex(const std::string& w) {
  return Find(
      kReportingVerbs, [](const ReportingVerb& x) { return x.en_sg; }, w);
}
int SpeechVerbIndex(const std::string& w) {
  return Find(
      kSpeechVerbs, [](const SpeechVerb& x) { return x.en; }, w);
}
int MonthIndex(const std::string& w) {
  for (int m = 0; m < 12; ++m)
    if (w == kMonthsEn[m]) return m;
  return -1;
}
int YearIndex(int year) {
  return year >= kFirstYear && year < kFirstYear + kNumYears ? year - kFirstYear : -1;
}

}  // namespace en_fr

namespace internal {

SentencePair GenerateEnFr(Rng* rng) {
  return en_fr::Realize(en_fr::Sample(rng));
}

SentencePair EnFrProbe() {
  using namespace en_fr;
  Sentence s;
  s.frame = Frame::BareNp;
  s.bare.head.noun = NounIndex("area");
  s.bare.head.adjectives = {AdjectiveIndex("european"), AdjectiveIndex("economic")};
  return Realize(s);
}

void BuildEnFrVocabs(Vocab* source, Vocab* target) {
  using namespace en_fr;
  *source = Vocab();
  *target = Vocab();
  for (const char* w :
       {"the", "a",    "an", "some", "of",    "does", "do", "not",  "no",   "longer", "did", "can", "will",
        "was", "were", "is", "are",  "least", "most", "in", "that", "this", "\"",     ",",   "."})
    source->Add(w);
  for (const char* w : {"le",   "la",    "l'",   "les",  "un",      "une",  "des",  "du", "de",  "d'",  "ne",
                        "n'",   "pas",   "plus", "peut", "peuvent", "va",   "vont", "a",  "ont", "été", "est",
                        "sont", "moins", "en",   "que",  "qu'",     "cela", "\"",   ",",  "."})
    target->Add(w);
  for (const Possessive& p : kPossessives)
    source->Add(p.en), target->Add(p.m_sg), target->Add(p.f_sg), target->Add(p.pl);
  for (const Noun& n : kNouns) source->Add(n.en_sg), source->Add(n.en_pl), target->Add(n.fr_sg), target->Add(n.fr_pl);
  for (const AbstractNoun& n : kAbstractNouns) source->Add(n.en), target->Add(n.fr);
  for (const Adjective& a : kAdjectives) {
    source->Add(a.en);
    for (const char* f : {a.m_sg, a.f_sg, a.m_pl, a.f_pl}) target->Add(f);
  }
  for (const PreAdjective& a : kPreAdjectives) {
    source->Add(a.en);
    for (const char* f : {a.m_sg, a.m_sg_vowel, a.f_sg, a.m_pl, a.f_pl}) target->Add(f);
  }
  for (const Country& c : kCountries) source->Add(c.en), target->Add(c.fr);
  for (const Verb& v : kVerbs) {
    source->Add(v.en_3sg), source->Add(v.en_base);
    target->Add(v.fr_3sg), target->Add(v.fr_3pl), target->Add(v.fr_inf);
  }
  for (const PastVerb& v : kPastVerbs) {
    source->Add(v.en_base), source->Add(v.en_past), source->Add(v.en_participle);
    for (const char* f : {v.m_sg, v.f_sg, v.m_pl, v.f_pl}) target->Add(f);
  }
  for (const Preposition& p : kPrepositions) source->Add(p.en), target->Add(p.fr);
  for (const ImpersonalFrame& f : kImpersonalFrames) {
    for (const std::string& w : Words(f.en)) source->Add(w);
    for (const std::string& w : Words(f.fr)) target->Add(w);
  }
  for (const ReportingVerb& v : kReportingVerbs) {
    source->Add(v.en_sg), source->Add(v.en_pl);
    for (const char* f : {v.fr_sg, v.fr_pl, v.fr_participle})
      if (f) target->Add(f);
  }
  for (const SpeechVerb& v : kSpeechVerbs) source->Add(v.en), target->Add(v.fr_participle);
  for (int m = 0; m < 12; ++m) source->Add(kMonthsEn[m]), target->Add(kMonthsFr[m]);
  for (int y = 0; y < kNumYears; ++y)
    source->Add(std::to_string(kFirstYear + y)), target->Add(std::to_string(kFirstYear + y));
}

}  // namespace internal
}  // namespace seq2seq
}  // namespace attnviz
