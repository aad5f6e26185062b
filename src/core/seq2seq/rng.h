// attnviz seq2seq: a small deterministic random number generator.
// xoshiro256** seeded by SplitMix64. Never std:: distributions: their output differs
// between standard libraries, and corpora and initial weights must be identical everywhere.
#pragma once
#include <cstdint>
#include <vector>

namespace attnviz {
namespace seq2seq {

class Rng {
 public:
  explicit Rng(uint64_t seed = 1) { Seed(seed); }  // same seed -> same stream on every platform
  void Seed(uint64_t seed) {                       // re-seed (SplitMix64 expands the seed into 256 bits)
    uint64_t x = seed;
    for (uint64_t& s : s_) {
      x += 0x9E3779B97F4A7C15ull;
      uint64_t z = x;
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      s = z ^ (z >> 31);
    }
  }
  uint64_t Next() {  // 64 random bits (xoshiro256**)
    const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }
  int Uniform(int n) {
    return n <= 1 ? 0 : static_cast<int>(((Next() >> 32) * static_cast<uint64_t>(n)) >> 32);
  }                                                                                  // [0, n)
  float Float() { return static_cast<float>(Next() >> 40) * (1.0f / 16777216.0f); }  // [0, 1), 24 bits
  bool Chance(float p) { return Float() < p; }                                       // true with probability p
  float Symmetric(float a) { return (2.0f * Float() - 1.0f) * a; }                   // uniform in [-a, a)
  template <typename T>
  const T& Pick(const std::vector<T>& v) {
    return v[Uniform(static_cast<int>(v.size()))];
  }  // uniform element
  template <typename T>
  void Shuffle(std::vector<T>* v) {  // Fisher-Yates
    for (int i = static_cast<int>(v->size()) - 1; i > 0; --i) std::swap((*v)[i], (*v)[Uniform(i + 1)]);
  }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace seq2seq
}  // namespace attnviz
