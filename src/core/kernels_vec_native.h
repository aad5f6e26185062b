// attnviz core: the native vector operations of the softmax and exp in GCC vector extensions,
// KT_LANES floats wide (4 SSE2 in kernels.cpp, 8 AVX2 and 16 AVX-512 in kernels_tiles_*.cpp).
// Include inside namespace attnviz::kernels::{anonymous}, after `using namespace exp_constants`
// and with KT_LANES defined; everything has internal linkage and calls no library inline
// function, so AVX copies never stand in for the SSE2 ones at link time.
// (The WASM build defines the same names with SIMD128 intrinsics in kernels.cpp.)
typedef float VN __attribute__((vector_size(KT_LANES * 4)));
typedef float VNu __attribute__((vector_size(KT_LANES * 4), aligned(4)));  // unaligned loads
typedef unsigned VU __attribute__((vector_size(KT_LANES * 4)));

using Vec = VN;
inline Vec VLoad(const float* p) {
  return *reinterpret_cast<const VNu*>(p);
}
inline void VStore(float* p, Vec v) {
  *reinterpret_cast<VNu*>(p) = v;
}
inline Vec VSplat(float x) {
  return x + VN{};
}
inline Vec VAdd(Vec a, Vec b) {
  return a + b;
}
inline Vec VSub(Vec a, Vec b) {
  return a - b;
}
inline Vec VMul(Vec a, Vec b) {
  return a * b;
}
inline Vec VMax(Vec a, Vec b) {
  return a > b ? a : b;
}

struct ExpConstants {};  // native: the compiler hoists vector constants itself
inline ExpConstants LoadExpConstants() {
  return {};
}

// Same algorithm and constants as ExpScalar, KT_LANES at a time. (With -mfma GCC fuses the
// polynomial's multiply-adds; the error stays within kExpMaxRelError, see the tests.)
template <bool kNonPositive = false>
inline Vec ExpV(Vec x, const ExpConstants&) {
  if (!kNonPositive) x = x > VSplat(kExpHi) ? VSplat(kExpHi) : x;
  x = x < VSplat(kExpLo) ? VSplat(kExpLo) : x;  // -inf -> -88 -> exactly 0; NaN stays NaN
  const Vec t = x * kLog2e + kRoundMagic;       // bits(t) = bits(M) + n
  const Vec n = t - kRoundMagic;
  Vec r = x - n * kLn2Hi;
  r = r - n * kLn2Lo;
  Vec p = VSplat(kP1);
  p = p * r + kP2;
  p = p * r + kP3;
  p = p * r + kP4;
  p = p * r + kP5;
  const Vec y = p * (r * r) + r + 1.0f;
  const VU bits = ((VU)t + 127u) << 23;  // same-size vector casts reinterpret bits
  return y * (Vec)bits;
}

inline float HorizontalMax(Vec v) {
  float m = v[0];
  for (int l = 1; l < KT_LANES; ++l) m = v[l] > m ? (float)v[l] : m;
  return m;
}
inline float HorizontalSum(Vec v) {
  float s = 0.0f;
  for (int l = 0; l < KT_LANES; ++l) s += v[l];
  return s;
}
