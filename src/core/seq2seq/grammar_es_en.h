// attnviz seq2seq: the Spanish -> English grammar as derivations (internal; see corpus.h).
// Four families, after the examples of TensorFlow's "Neural machine translation with attention":
//   weather      hace mucho frío aquí .          -> it's very cold here .
//   identity     esta es mi vida .               -> this is my life .      (mi casa nueva -> my new house)
//   location     ¿ todavía están en casa ?       -> are they still at home ?   (pro-drop, inversion)
//   infinitive   trata de averiguarlo .          -> try to figure it out .     (one clitic word, three English words)
// Same contract as grammar_en_fr.h: Sample() draws every choice with positive probability and
// rejects invalid derivations, so the grammar generates exactly the valid derivations.
#pragma once
#include <string>

#include "core/seq2seq/grammar_internal.h"

namespace attnviz {
namespace seq2seq {
namespace es_en {

enum class Family { Weather, Identity, Location, Infinitive };
enum class WeatherMood { Statement, Negated, Question, Past };
enum class Adverb { None, Still, NoLonger, Not };  // todavía / ya no / no

// A noun phrase of the identity and infinitive families: det noun [adjective].
struct Noun {
  int det = 0;   // index into kDeterminers (el/la, un/una, mi, tu, nuestro)
  int noun = 0;  // index into kNouns
  bool plural = false;
  int adjective = -1;  // index into kAdjectives (after the noun in Spanish, before it in English); -1: none
};

struct Sentence {
  Family family = Family::Weather;
  // weather: [¿] [no] hace|hacía [mucho] W [adverb] (. | ?)
  WeatherMood mood = WeatherMood::Statement;
  bool very = false;    // mucho -> very
  int weather = 0;      // index into kWeather
  int time_place = -1;  // index into kTimePlace (aquí, hoy, ...); -1: none
  // identity: DEM es NP  |  NP es ADJ
  bool demonstrative = true;  // "esta es mi vida" (true) or "mi vida es difícil" (false)
  bool near = true;           // este (this) or ese (that)
  Noun np;                    // identity; infinitive object
  int predicate = 0;          // index into kAdjectives ("mi vida es difícil")
  // location: [¿] [SUBJ] [todavía | ya no | no] ESTAR [SUBJ] en PLACE (. | ?)
  int person = 0;  // index into kPersons
  bool explicit_subject = false;
  Adverb adverb = Adverb::None;
  bool question = false;
  int place = 0;  // index into kPlaces
  // infinitive: FRAME [no] (clitic | verb NP | intransitive verb)
  int frame = 0;         // index into kFrames
  bool negated = false;  // trata de no hacerlo -> try not to do it
  int clitic = -1;       // index into kClitics ("averiguarlo"); -1: a verb instead
  int verb = 0;          // index into kVerbs (transitive ones take np)
  bool period = false;   // a final "." on both sides (statements only; questions end in "?")
};

Sentence Sample(Rng* rng);
bool Valid(const Sentence& s);
SentencePair Realize(const Sentence& s);

// Lookups by Spanish word, for derivations written by hand; -1 if absent.
int WeatherIndex(const std::string& es);
int TimePlaceIndex(const std::string& es);
int DeterminerIndex(const std::string& es_masculine);  // "el", "un", "mi", "tu", "nuestro"
int NounIndex(const std::string& es_singular);
int PersonIndex(const std::string& es_verb);  // "están"
int PlaceIndex(const std::string& es_noun);   // "casa"
int FrameIndex(const std::string& es);        // "trata de"
int CliticIndex(const std::string& es);       // "averiguarlo"

}  // namespace es_en
}  // namespace seq2seq
}  // namespace attnviz
