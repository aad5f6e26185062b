// attnviz core: attention kernels. See kernels.h for shapes and contracts.
//
// Layout of the fast GEMM (both builds):
//   B is packed into column panels of P columns (P = the selected tile variant's panel width),
//   k-block by k-block: panel p of block k0 holds B[k0 .. k0+kc, p*P .. p*P+P] contiguously
//   ([kc][P], zero-padded past n), so the micro-kernel streams it with unit stride and no tail
//   checks. A is read in place (rows are contiguous). A block kernel (kernels_tiles_*.cpp, or the
//   relaxed-SIMD module in the browser) keeps an MR x (1 or 2 panels) tile of C in registers.
//   Loop nest: k-block (KC) -> row block (MC, a multiple of MR) -> [block kernel: panel -> rows].
#include "core/kernels.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "core/kernels_exp.h"

#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#endif

namespace attnviz {
namespace kernels {
namespace {

using namespace exp_constants;  // NOLINT: the exp's constants, shared with the AVX twins

constexpr int kLanes = 4;  // softmax and exp vectors: SIMD128, or SSE2 natively (every x86-64 CPU)
// k-block: a B panel of KC * P floats stays in L1 with the MR rows of A it meets: 8 KB for
// P = 8 and 16 (KC = 256), 16 KB for P = 32 (KC = 128; 256 measured ~5 % slower with AVX-512).
inline int KcFor(int panel) {
  return panel > 16 ? 128 : 256;
}
#ifdef __wasm_simd128__
constexpr int kBlockRuleUntilTimed = 1;  // AttentionForward's row block before any is timed: 256 rows
#else
constexpr int kBlockRuleUntilTimed = 0;  // 128 KiB of scores (see there)
#endif
constexpr int kMC = 64;  // row block of A kept hot in L2 while all panels pass (rounded down to a multiple of MR)

typedef float Pack4 __attribute__((vector_size(16)));
typedef float Pack4u __attribute__((vector_size(16), aligned(4)));  // unaligned access

// dst[kk * nr + jj] = src_row_jj[kk] for 4 rows (row stride ld) and kc values: 4 x 4 transposes
// in registers (SSE2 natively, SIMD128 in WASM), a scalar tail for kc % 4.
inline void PackTransposed4(const float* src, int ld, int kc, float* dst, int nr) {
  const float* r0 = src;
  const float* r1 = src + ld;
  const float* r2 = src + 2 * (size_t)ld;
  const float* r3 = src + 3 * (size_t)ld;
  int kk = 0;
  for (; kk + 4 <= kc; kk += 4) {
    const Pack4 a = *reinterpret_cast<const Pack4u*>(r0 + kk), b = *reinterpret_cast<const Pack4u*>(r1 + kk);
    const Pack4 c = *reinterpret_cast<const Pack4u*>(r2 + kk), d = *reinterpret_cast<const Pack4u*>(r3 + kk);
    const Pack4 ab_lo = __builtin_shufflevector(a, b, 0, 4, 1, 5), cd_lo = __builtin_shufflevector(c, d, 0, 4, 1, 5);
    const Pack4 ab_hi = __builtin_shufflevector(a, b, 2, 6, 3, 7), cd_hi = __builtin_shufflevector(c, d, 2, 6, 3, 7);
    *reinterpret_cast<Pack4u*>(dst + (kk + 0) * nr) = __builtin_shufflevector(ab_lo, cd_lo, 0, 1, 4, 5);
    *reinterpret_cast<Pack4u*>(dst + (kk + 1) * nr) = __builtin_shufflevector(ab_lo, cd_lo, 2, 3, 6, 7);
    *reinterpret_cast<Pack4u*>(dst + (kk + 2) * nr) = __builtin_shufflevector(ab_hi, cd_hi, 0, 1, 4, 5);
    *reinterpret_cast<Pack4u*>(dst + (kk + 3) * nr) = __builtin_shufflevector(ab_hi, cd_hi, 2, 3, 6, 7);
  }
  for (; kk < kc; ++kk) {
    float* o = dst + kk * nr;
    o[0] = r0[kk], o[1] = r1[kk], o[2] = r2[kk], o[3] = r3[kk];
  }
}

// Packs one k-block [k0, k0 + kc) of B (or of B^T when trans_b: b is then [n, ldb] and B^T[kk][j]
// = b[j, k0 + kk]) into column panels of nr floats, zero-padded past n. Not trans: each panel row
// is a contiguous copy; trans: 4 x 4 register transposes (contiguous reads and writes both).
void Pack(bool trans_b, int n, int k0, int kc, const float* b, int ldb, float* packed, int nr) {
  const int n_panels = (n + nr - 1) / nr;
  for (int p = 0; p < n_panels; ++p) {
    float* dst = packed + (size_t)p * kc * nr;
    const int j0 = p * nr, cols = std::min(nr, n - j0);
    if (!trans_b) {
      for (int kk = 0; kk < kc; ++kk) {
        const float* src = b + (size_t)(k0 + kk) * ldb + j0;
        float* row = dst + (size_t)kk * nr;
        int jj = 0;
        // 4 floats per move (a full panel row: 2 to 8 moves), not a memcpy call per row
        for (; jj + 4 <= cols; jj += 4)
          *reinterpret_cast<Pack4u*>(row + jj) = *reinterpret_cast<const Pack4u*>(src + jj);
        for (; jj < cols; ++jj) row[jj] = src[jj];
        for (; jj < nr; ++jj) row[jj] = 0.0f;
      }
      continue;
    }
    int jj = 0;
    for (; jj + 4 <= cols; jj += 4) PackTransposed4(b + (size_t)(j0 + jj) * ldb + k0, ldb, kc, dst + jj, nr);
    for (; jj < cols; ++jj) {
      const float* src = b + (size_t)(j0 + jj) * ldb + k0;
      for (int kk = 0; kk < kc; ++kk) dst[kk * nr + jj] = src[kk];
    }
    for (; jj < nr; ++jj)
      for (int kk = 0; kk < kc; ++kk) dst[kk * nr + jj] = 0.0f;
  }
}

#ifdef __wasm_simd128__
using Vec = v128_t;
inline Vec VLoad(const float* p) {
  return wasm_v128_load(p);
}
inline void VStore(float* p, Vec v) {
  wasm_v128_store(p, v);
}
inline Vec VSplat(float x) {
  return wasm_f32x4_splat(x);
}
inline Vec VAdd(Vec a, Vec b) {
  return wasm_f32x4_add(a, b);
}
inline Vec VSub(Vec a, Vec b) {
  return wasm_f32x4_sub(a, b);
}
inline Vec VMul(Vec a, Vec b) {
  return wasm_f32x4_mul(a, b);
}
inline Vec VMax(Vec a, Vec b) {
  return wasm_f32x4_pmax(a, b);
}  // a < b ? b : a (one maxps)

// Constants of the vector exp, gathered once per loop. (Loading them from a global that the
// compiler cannot fold, to stop clang rematerializing v128.const at each use, measured no
// faster under V8 than letting it fold them.)
struct ExpConstants {
  v128_t lo, hi, log2e, magic, ln2_hi, ln2_lo, p1, p2, p3, p4, p5, one, bias, q0, q1, q2, q3;
  v128_t lo2, e1, e2, e3, e4, e5;  // Exp2V
};
inline ExpConstants LoadExpConstants() {
  return ExpConstants{
      wasm_f32x4_splat(kExpLo), wasm_f32x4_splat(kExpHi),  wasm_f32x4_splat(kLog2e), wasm_f32x4_splat(kRoundMagic),
      wasm_f32x4_splat(kLn2Hi), wasm_f32x4_splat(kLn2Lo),  wasm_f32x4_splat(kP1),    wasm_f32x4_splat(kP2),
      wasm_f32x4_splat(kP3),    wasm_f32x4_splat(kP4),     wasm_f32x4_splat(kP5),    wasm_f32x4_splat(1.0f),
      wasm_i32x4_splat(127),    wasm_f32x4_splat(kQ0),     wasm_f32x4_splat(kQ1),    wasm_f32x4_splat(kQ2),
      wasm_f32x4_splat(kQ3),    wasm_f32x4_splat(kExp2Lo), wasm_f32x4_splat(kE1),    wasm_f32x4_splat(kE2),
      wasm_f32x4_splat(kE3),    wasm_f32x4_splat(kE4),     wasm_f32x4_splat(kE5)};
}

// 4 lanes of ExpScalar. V8 lowers pmin/pmax to single minps/maxps (min/max need NaN
// fix-ups), and 2^n comes from the bits of t = x log2e + 1.5 * 2^23: bits(t) = bits(M) + n,
// so (bits(t) + 127) << 23 is the exponent field of 2^n (bits(M) << 23 vanishes).
// kNonPositive: the softmax's exp. The caller guarantees x <= 0 or -inf (scores minus the row
// max), which saves the upper clamp, and divides the results by a sum >= 1, so the polynomial
// one degree shorter of kernels_exp.h serves (kSoftmaxMaxRelError): 22 vector operations instead
// of 24, the exp pass ~10 % faster under V8 (docs/PERFORMANCE.md, machine 2).
template <bool kNonPositive = false>
inline v128_t ExpV(v128_t x, const ExpConstants& c) {
  if (!kNonPositive) x = wasm_f32x4_pmin(x, c.hi);
  x = wasm_f32x4_pmax(x, c.lo);  // -inf -> -88 -> exactly 0 below; NaN stays NaN
  const v128_t t = wasm_f32x4_add(wasm_f32x4_mul(x, c.log2e), c.magic);
  const v128_t n = wasm_f32x4_sub(t, c.magic);  // round(x log2e), ties to even
  v128_t r, p;
  if (kNonPositive) {
    r = wasm_f32x4_sub(x, wasm_f32x4_mul(n, c.ln2_hi));
    r = wasm_f32x4_sub(r, wasm_f32x4_mul(n, c.ln2_lo));
    p = wasm_f32x4_add(wasm_f32x4_mul(c.q3, r), c.q2);
    p = wasm_f32x4_add(wasm_f32x4_mul(p, r), c.q1);
    p = wasm_f32x4_add(wasm_f32x4_mul(p, r), c.q0);
  } else {
    r = wasm_f32x4_sub(x, wasm_f32x4_mul(n, c.ln2_hi));
    r = wasm_f32x4_sub(r, wasm_f32x4_mul(n, c.ln2_lo));
    p = wasm_f32x4_add(wasm_f32x4_mul(c.p1, r), c.p2);
    p = wasm_f32x4_add(wasm_f32x4_mul(p, r), c.p3);
    p = wasm_f32x4_add(wasm_f32x4_mul(p, r), c.p4);
    p = wasm_f32x4_add(wasm_f32x4_mul(p, r), c.p5);
  }
  const v128_t r2 = wasm_f32x4_mul(r, r);
  v128_t y = wasm_f32x4_add(wasm_f32x4_add(wasm_f32x4_mul(p, r2), r), c.one);
  const v128_t e = wasm_i32x4_shl(wasm_i32x4_add(t, c.bias), 23);
  return wasm_f32x4_mul(y, e);
}

// 2^x for x <= 0 or -inf (SoftmaxRowsLog2): t and 2^n as in ExpV, r = x - n exactly, 2^r by
// Horner on kernels_exp.h's E (16 operations, ExpV<true> 21).
inline v128_t Exp2V(v128_t x, const ExpConstants& c) {
  x = wasm_f32x4_pmax(x, c.lo2);  // -inf -> -127 -> exactly 0 below; NaN stays NaN
  const v128_t t = wasm_f32x4_add(x, c.magic);
  const v128_t r = wasm_f32x4_sub(x, wasm_f32x4_sub(t, c.magic));
  v128_t p = wasm_f32x4_add(wasm_f32x4_mul(c.e5, r), c.e4);
  p = wasm_f32x4_add(wasm_f32x4_mul(p, r), c.e3);
  p = wasm_f32x4_add(wasm_f32x4_mul(p, r), c.e2);
  p = wasm_f32x4_add(wasm_f32x4_mul(p, r), c.e1);
  const v128_t y = wasm_f32x4_add(wasm_f32x4_mul(p, r), c.one);
  return wasm_f32x4_mul(y, wasm_i32x4_shl(wasm_i32x4_add(t, c.bias), 23));
}

inline float HorizontalMax(Vec v) {
  v = wasm_f32x4_max(v, wasm_i32x4_shuffle(v, v, 2, 3, 0, 1));
  v = wasm_f32x4_max(v, wasm_i32x4_shuffle(v, v, 1, 0, 3, 2));
  return wasm_f32x4_extract_lane(v, 0);
}
inline float HorizontalSum(Vec v) {
  v = wasm_f32x4_add(v, wasm_i32x4_shuffle(v, v, 2, 3, 0, 1));
  v = wasm_f32x4_add(v, wasm_i32x4_shuffle(v, v, 1, 0, 3, 2));
  return wasm_f32x4_extract_lane(v, 0);
}

#else  // native: GCC vector extensions, SSE2 (4 lanes); AVX2 / AVX-512 twins in kernels_tiles_*.cpp
#define KT_LANES 4
#include "core/kernels_vec_native.h"
#endif

// Packs all of B (every k-block) into panels of nr columns; block k0 starts at k0 * n_panels * nr.
void PackAll(bool trans_b, int n, int k, const float* b, int ldb, PackedFloats* buf, int nr) {
  const int n_panels = (n + nr - 1) / nr;
  const size_t need = (size_t)n_panels * nr * k;
  if (buf->size() < need) buf->resize(need);  // grows once, then reused
  const int kc_max = KcFor(nr);
  for (int k0 = 0; k0 < k; k0 += kc_max)
    Pack(trans_b, n, k0, std::min(kc_max, k - k0), b, ldb, buf->data() + (size_t)k0 * n_panels * nr, nr);
}

// C [m, n] = alpha * A [m, k] * B, B already packed by PackAll for tile.panel.
void GemmPacked(int m, int n, int k, float alpha, const float* a, int lda, const float* packed, float* c, int ldc,
                const TileVariant& tile) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    for (int i = 0; i < m; ++i) std::fill(c + (size_t)i * ldc, c + (size_t)i * ldc + n, 0.0f);
    return;
  }
  const int n_panels = (n + tile.panel - 1) / tile.panel;
  const int mc = std::max(tile.mr, kMC / tile.mr * tile.mr);
  const int kc_max = KcFor(tile.panel);
  for (int k0 = 0; k0 < k; k0 += kc_max) {
    const int kc = std::min(kc_max, k - k0);
    const float* block = packed + (size_t)k0 * n_panels * tile.panel;
    for (int i0 = 0; i0 < m; i0 += mc)
      tile.fn(std::min(mc, m - i0), n, kc, alpha, a + (size_t)i0 * lda + k0, lda, block, c + (size_t)i0 * ldc, ldc,
              k0 > 0 ? 1 : 0);
  }
}

template <bool kTransB>
void GemmFast(int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb, float* c, int ldc,
              Workspace* ws) {
  if (m <= 0 || n <= 0) return;
  const TileVariant& tile = SelectedTile();
  if (k > 0) PackAll(kTransB, n, k, b, ldb, &ws->packed_b, tile.panel);
  GemmPacked(m, n, k, alpha, a, lda, ws->packed_b.data(), c, ldc, tile);
}

}  // namespace

#include "core/kernels_softmax_impl.h"  // SoftmaxRowsImpl, on the Vec operations above

const char* KernelIsa() {
#ifdef __wasm_simd128__
  return "wasm-simd128";
#else
  return "native";
#endif
}

int PanelWidth() {
  return SelectedTile().panel;
}

// ---------------------------------------------------------------------------
// GEMM
// ---------------------------------------------------------------------------
void GemmNN(int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb, float* c, int ldc,
            Workspace* ws) {
  GemmFast<false>(m, n, k, alpha, a, lda, b, ldb, c, ldc, ws);
}

void GemmNT(int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb, float* c, int ldc,
            Workspace* ws) {
  GemmFast<true>(m, n, k, alpha, a, lda, b, ldb, c, ldc, ws);
}

// Reference twins accumulate in double: they are the yardstick, not the hot path.
void GemmNNRef(int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb, float* c, int ldc) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0.0;
      for (int p = 0; p < k; ++p) s += (double)a[(size_t)i * lda + p] * b[(size_t)p * ldb + j];
      c[(size_t)i * ldc + j] = (float)(alpha * s);
    }
}

void GemmNTRef(int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb, float* c, int ldc) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0.0;
      for (int p = 0; p < k; ++p) s += (double)a[(size_t)i * lda + p] * b[(size_t)j * ldb + p];
      c[(size_t)i * ldc + j] = (float)(alpha * s);
    }
}

// ---------------------------------------------------------------------------
// Exp
// ---------------------------------------------------------------------------
namespace {
// 2^n from t = n + 1.5 * 2^23 (the scalar exps' rounding): bits(t) = bits(M) + n, so
// (bits(t) + 127) << 23 is the exponent field of 2^n (no float->int conversion).
float Pow2OfRounded(float t) {
  uint32_t bits;
  std::memcpy(&bits, &t, sizeof bits);
  bits = (bits + 127u) << 23;
  float p;
  std::memcpy(&p, &bits, sizeof p);
  return p;
}
}  // namespace

float ExpScalar(float x) {
  x = x > kExpHi ? kExpHi : x;
  x = x < kExpLo ? kExpLo : x;               // -inf -> -88 -> exactly 0 (2^-127 has exponent field 0); NaN stays NaN
  const float t = x * kLog2e + kRoundMagic;  // bits(t) = bits(M) + n, n = round(x log2e)
  const float n = t - kRoundMagic;
  float r = x - n * kLn2Hi;
  r = r - n * kLn2Lo;
  float p = kP1;
  p = p * r + kP2;
  p = p * r + kP3;
  p = p * r + kP4;
  p = p * r + kP5;
  const float y = p * (r * r) + r + 1.0f;
  return y * Pow2OfRounded(t);
}

float Exp2Scalar(float x) {
  x = x < kExp2Lo ? kExp2Lo : x;  // -inf -> -127 -> exactly 0; NaN stays NaN
  const float t = x + kRoundMagic;
  const float r = x - (t - kRoundMagic);  // exact
  const float p = (((kE5 * r + kE4) * r + kE3) * r + kE2) * r + kE1;
  const float y = p * r + 1.0f;
  return y * Pow2OfRounded(t);
}

void ExpFast(const float* x, float* y, int n) {
  int i = 0;
  const ExpConstants c = LoadExpConstants();
  for (; i + kLanes <= n; i += kLanes) VStore(y + i, ExpV(VLoad(x + i), c));
  for (; i < n; ++i) y[i] = ExpScalar(x[i]);
}

// ---------------------------------------------------------------------------
// Softmax
// ---------------------------------------------------------------------------
int SoftmaxRowsRef(float* x, int rows, int cols, int ld, float scale, float* row_max, float* row_sum) {
  int fully_masked = 0;
  const float neg_inf = -std::numeric_limits<float>::infinity();
  for (int i = 0; i < rows; ++i) {
    float* r = x + (size_t)i * ld;
    // pass 1: row max of scale * x
    float m = neg_inf;
    for (int j = 0; j < cols; ++j) m = std::max(m, scale * r[j]);
    if (m == neg_inf) {  // every key masked: zeros, never NaN
      std::fill(r, r + cols, 0.0f);
      if (row_max) row_max[i] = 0.0f;
      if (row_sum) row_sum[i] = 0.0f;
      ++fully_masked;
      continue;
    }
    // pass 2: exponentials and their sum
    double sum = 0.0;
    for (int j = 0; j < cols; ++j) {
      r[j] = std::exp(scale * r[j] - m);
      sum += r[j];
    }
    // pass 3: normalise (sum >= 1 because the max entry contributes exp(0))
    const float inv = sum > 0.0 ? (float)(1.0 / sum) : 0.0f;
    for (int j = 0; j < cols; ++j) r[j] *= inv;
    if (row_max) row_max[i] = m;
    if (row_sum) row_sum[i] = (float)sum;
  }
  return fully_masked;
}

namespace {
int SoftmaxOfTile(float* x, int rows, int cols, int ld, float scale, float* row_max, float* row_sum, int log2) {
  const TileVariant& tile = SelectedTile();  // AVX2 / AVX-512 / relaxed variants bring their own softmax
  if (tile.softmax) return tile.softmax(x, rows, cols, ld, scale, row_max, row_sum, log2);
  return SoftmaxRowsImpl(x, rows, cols, ld, scale, row_max, row_sum, log2);
}
}  // namespace

int SoftmaxRows(float* x, int rows, int cols, int ld, float scale, float* row_max, float* row_sum) {
  return SoftmaxOfTile(x, rows, cols, ld, scale, row_max, row_sum, 0);
}

int SoftmaxRowsLog2(float* x, int rows, int cols, int ld, float scale, float* row_max, float* row_sum) {
  return SoftmaxOfTile(x, rows, cols, ld, scale, row_max, row_sum, 1);
}

int SoftmaxRowsLog2Unshifted(float* x, int rows, int cols, int ld, float scale, float* row_max, float* row_sum) {
  return SoftmaxOfTile(x, rows, cols, ld, scale, row_max, row_sum, 2);
}

// ---------------------------------------------------------------------------
// AttentionForward
// ---------------------------------------------------------------------------
namespace {
// AttentionForward keeps a row block's base-2 softmax while every row's largest score is within
// this in log2 units: float32 rounds the scores that matter (those near the row's largest) there
// by at most ~2^-17, as it rounds scores of the same size in natural units.
constexpr float kLog2ScoreLimit = 64.0f;

bool RowMaxesWithin(const float* row_max, int rows, float limit) {
  for (int i = 0; i < rows; ++i)
    if (!(std::fabs(row_max[i]) <= limit)) return false;  // NaN too
  return true;
}

std::atomic<bool> g_unshifted{true};  // SetUnshiftedSoftmax
std::atomic<int> g_block_rows{0};     // SetAttentionBlockRows

// The largest squared Euclidean norm of rows x[i, 0 .. d) (row stride d). A NaN anywhere makes
// it NaN and an infinity infinite, so that a bound built on it fails its <= test.
float MaxRowNormSquared(const float* x, int rows, int d) {
  float best = 0.0f;
  for (int i = 0; i < rows; ++i) {
    const float* r = x + (size_t)i * d;
    Vec acc = VSplat(0.0f);
    int j = 0;
    for (; j + kLanes <= d; j += kLanes) {
      const Vec v = VLoad(r + j);
      acc = VAdd(acc, VMul(v, v));
    }
    float sum = HorizontalSum(acc);
    for (; j < d; ++j) sum += r[j] * r[j];
    best = (sum > best || sum != sum) ? sum : best;  // a NaN sticks: nothing compares greater
  }
  return best;
}

// Whether Cauchy-Schwarz keeps every score of q [rows, d] against keys whose largest squared norm
// is k_norm2 within kUnshiftedLog2Limit in log2 units: |scale_log2 q_i . k_j| <= |scale_log2| |q_i|
// |k_j|. The 1e-3 margin covers the rounding of the products and norms (~d 2^-24 relative).
bool ScoresBounded(const float* q, int rows, int d, float scale_log2, float k_norm2) {
  const double q_norm2 = MaxRowNormSquared(q, rows, d);
  const double bound = std::fabs((double)scale_log2) * std::sqrt(q_norm2 * (double)k_norm2) * 1.001;
  return bound <= kUnshiftedLog2Limit;  // false for NaN and infinity
}
}  // namespace

void SetUnshiftedSoftmax(bool on) {
  g_unshifted.store(on, std::memory_order_relaxed);
}

void SetAttentionBlockRows(int rows) {
  g_block_rows.store(std::max(0, rows), std::memory_order_relaxed);
}

int RowBlockChooser::Pick(int c, double now, bool* timed) {
  std::lock_guard<std::mutex> lock(mutex_);
  Class& k = classes_[std::clamp(c, 0, kClasses - 1)];
  if (k.chosen >= 0 && now - k.chosen_at >= kRetimeSeconds) k = Class{};  // time it again
  *timed = k.chosen < 0;
  if (!*timed) return k.chosen;
  if (k.trials[0] == k.trials[1]) return k.trials[0] == 0 ? fallback_ : 0;
  return k.trials[0] < k.trials[1] ? 0 : 1;
}

void RowBlockChooser::Record(int c, int rule, double seconds_per_score, double now) {
  std::lock_guard<std::mutex> lock(mutex_);
  Class& k = classes_[std::clamp(c, 0, kClasses - 1)];
  if (k.chosen >= 0 || rule < 0 || rule > 1) return;
  k.best[rule] = k.trials[rule] == 0 ? seconds_per_score : std::min(k.best[rule], seconds_per_score);
  if (++k.trials[rule] < kTrials || k.trials[1 - rule] < kTrials) return;
  k.chosen = k.best[1] < k.best[0] ? 1 : 0;
  k.chosen_at = now;
}

int RowBlockChooser::Chosen(int c) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return classes_[std::clamp(c, 0, kClasses - 1)].chosen;
}

RowBlockChooser& AttentionRowBlocks() {
  static RowBlockChooser chooser(kBlockRuleUntilTimed);
  return chooser;
}

namespace {
int RowBlockClass(int n_k) {
  int c = 0;
  while (c < RowBlockChooser::kClasses - 1 && (2 << c) <= n_k) ++c;
  return c;
}
}  // namespace

int AttentionBlockRule(int n_k) {
  return AttentionRowBlocks().Chosen(RowBlockClass(n_k));
}

void AttentionForward(const float* q, const float* k, const float* v, int n_q, int n_k, int d, int d_v, float scale,
                      float* weights, float* out, Workspace* ws) {
  if (n_q <= 0 || n_k <= 0) return;
  if (!weights) {
    if (ws->scores.size() < (size_t)n_q * n_k) ws->scores.resize((size_t)n_q * n_k);
    weights = ws->scores.data();
  }
  // K^T and V are packed once; query rows then go through all three passes in blocks whose
  // score rows stay in cache between the passes instead of streaming n_q x n_k floats through
  // memory three times. How many rows is timed (RowBlockChooser), between 128 KiB of scores and
  // 256 rows, because the measurements disagree: in WASM on machine 1 (stop 20) 16-row blocks at
  // n_k = 2048 ran ~30 % slower than 64-row ones and 256-row ones 1.05-1.09x faster than 64 (the
  // packed K^T and V, n_k x d floats each, streamed for too little work); natively 12-row blocks
  // at n_k = 2048 ran ~30 % faster than 60-row ones (AVX-512, attnviz_bench); on machine 4 64-512
  // rows ran within 0.96-1.07 of 256 (stop 46), and in stop 50, on the same kind of machine while
  // it read a third slower, 16 rows ran 1.07-1.30x as fast as 256 at n_k = 2048 and 0.99-1.14x at
  // 1024 (bench/peers/row_block.mjs, two runs). Calls under kTimedScores scores are not timed: they
  // take the rule kept for their class, or the build's own before any.
  const TileVariant& tile = SelectedTile();
  PackAll(true, n_k, d, k, d, &ws->packed_b, tile.panel);       // K^T [d, n_k]
  PackAll(false, d_v, n_k, v, d_v, &ws->packed_v, tile.panel);  // V [n_k, d_v]
  // Scores in log2 units: the softmax's 2^x is 5 vector operations shorter than e^x (SoftmaxRowsLog2),
  // and this one rounding of scale * log2e moves a weight by no more than the product's own rounding.
  // A row block whose largest scores exceed kLog2ScoreLimit is done again in natural units: large
  // scores that float32 holds exactly there (a worked example's integer dot products, 927 and 929)
  // would lose their last bits once multiplied by log2e; the natural range reduction is exact.
  const float scale_log2 = (float)((double)scale * 1.4426950408889634);
  if (ws->row_max.size() < (size_t)n_q) ws->row_max.resize((size_t)n_q);
  // The softmax's max pass (a read of every score) can go when a bound on the scores proves it
  // unneeded (SoftmaxRowsLog2Unshifted). The bound reads Q and K once, (n_q + n_k) d values, to
  // save that pass over n_q n_k scores, so it is tried only when those are over twice as many.
  const bool try_bound = g_unshifted.load(std::memory_order_relaxed) && (double)n_q * n_k > 2.0 * (n_q + n_k) * d;
  const float k_norm2 = try_bound ? MaxRowNormSquared(k, n_k, d) : 0.0f;
  const int mr = tile.mr;
  const int forced = g_block_rows.load(std::memory_order_relaxed);
  const int rules[2] = {std::min(256, std::max(1, 32768 / n_k)), 256};
  RowBlockChooser& chooser = AttentionRowBlocks();
  const int klass = RowBlockClass(n_k);
  bool timed = false;
  int rule = chooser.fallback();
  if (forced <= 0 && rules[0] != rules[1]) {
    if ((double)n_q * n_k >= RowBlockChooser::kTimedScores)
      rule = chooser.Pick(klass, ProbeSeconds(), &timed);
    else if (const int chosen = chooser.Chosen(klass); chosen >= 0)
      rule = chosen;
  }
  const int block = std::max(mr, (forced > 0 ? forced : rules[rule]) / mr * mr);
  const double t0 = timed ? ProbeSeconds() : 0.0;
  for (int i0 = 0; i0 < n_q; i0 += block) {
    const int rows = std::min(block, n_q - i0);
    float* s = weights + (size_t)i0 * n_k;
    const float* qi = q + (size_t)i0 * d;
    GemmPacked(rows, n_k, d, scale_log2, qi, d, ws->packed_b.data(), s, n_k, tile);  // pass 1: S = scale log2e Q K^T
    bool natural = false;                                                            // pass 2: softmax rows
    if (try_bound && ScoresBounded(qi, rows, d, scale_log2, k_norm2)) {
      SoftmaxRowsLog2Unshifted(s, rows, n_k, n_k, 1.0f, nullptr, nullptr);
    } else {
      SoftmaxRowsLog2(s, rows, n_k, n_k, 1.0f, ws->row_max.data(), nullptr);
      natural = !RowMaxesWithin(ws->row_max.data(), rows, kLog2ScoreLimit);  // large scores: natural units
    }
    if (natural) {
      GemmPacked(rows, n_k, d, scale, qi, d, ws->packed_b.data(), s, n_k, tile);
      SoftmaxRows(s, rows, n_k, n_k, 1.0f, nullptr, nullptr);
    }
    GemmPacked(rows, d_v, n_k, 1.0f, s, n_k, ws->packed_v.data(), out + (size_t)i0 * d_v, d_v,
               tile);  // pass 3: O = P V
  }
  if (!timed) return;
  const double t1 = ProbeSeconds(), seconds = t1 - t0;
  if (seconds >= 10e-6 * std::max(1.0, LastProbe().clock_tick_us))  // >= 10 ticks (and 10 us)
    chooser.Record(klass, rule, seconds / ((double)n_q * n_k), t1);
}

void AttentionForwardRef(const float* q, const float* k, const float* v, int n_q, int n_k, int d, int d_v, float scale,
                         float* weights, float* out) {
  GemmNTRef(n_q, n_k, d, scale, q, d, k, d, weights, n_k);         // pass 1: scores
  SoftmaxRowsRef(weights, n_q, n_k, n_k, 1.0f, nullptr, nullptr);  // pass 2: softmax
  GemmNNRef(n_q, d_v, n_k, 1.0f, weights, n_k, v, d_v, out, d_v);  // pass 3: P V
}

}  // namespace kernels
}  // namespace attnviz
