// attnviz core: the body of SoftmaxRows (kernels.h) on the vector operations Vec, VLoad, VStore,
// VSplat, VAdd, VSub, VMul, VMax, ExpV, Exp2V, ExpScalar, Exp2Scalar, HorizontalMax/Sum and kLanes that the including
// translation unit defines (SIMD128 / SSE2 in kernels.cpp; AVX2 and AVX-512 in
// kernels_tiles_avx2/avx512.cpp). Include inside namespace attnviz::kernels, after them.
// No library inline function is called (see kernels_vec_native.h).
namespace {

// One row's exponentials in place, e = exp(scale * x - m) (kLog2: 2^(scale * x - m)), and their
// sum. !kScale (scale == 1: Attend's and AttentionForward's case) skips a multiply; !kShift (m == 0,
// the unshifted log2 softmax) skips the subtraction. Both are template arguments, so each case is
// its own loop with nothing tested inside it.
template <bool kLog2, bool kShift, bool kScale>
inline float ExpAndSumLoop(float* r, int cols, float scale, float m, const ExpConstants& c) {
  constexpr int W = 2 * kLanes;  // two vectors per step: independent dependency chains
  const Vec vs = VSplat(scale), vmax = VSplat(m);
  Vec acc0 = VSplat(0.0f), acc1 = acc0;
  int j = 0;
  for (; j + W <= cols; j += W) {
    Vec x0 = VLoad(r + j), x1 = VLoad(r + j + kLanes);
    if (kScale) x0 = VMul(vs, x0), x1 = VMul(vs, x1);
    if (kShift) x0 = VSub(x0, vmax), x1 = VSub(x1, vmax);
    const Vec e0 = kLog2 ? Exp2V(x0, c) : ExpV<true>(x0, c), e1 = kLog2 ? Exp2V(x1, c) : ExpV<true>(x1, c);
    VStore(r + j, e0);
    VStore(r + j + kLanes, e1);
    acc0 = VAdd(acc0, e0);
    acc1 = VAdd(acc1, e1);
  }
  float sum = HorizontalSum(VAdd(acc0, acc1));
  for (; j < cols; ++j) {
    r[j] = kLog2 ? Exp2Scalar(scale * r[j] - m) : ExpScalar(scale * r[j] - m);
    sum += r[j];
  }
  return sum;
}

template <bool kLog2, bool kShift = true>
inline float ExpAndSum(float* r, int cols, float scale, float m, const ExpConstants& c) {
  return scale == 1.0f ? ExpAndSumLoop<kLog2, kShift, false>(r, cols, scale, m, c)
                       : ExpAndSumLoop<kLog2, kShift, true>(r, cols, scale, m, c);
}

// log2 != 0: x holds scores in log2 units, the weights are 2^(scale * x - m) / sum (SoftmaxRowsLog2).
// log2 == 2: the same with m = 0 and no max pass (SoftmaxRowsLog2Unshifted: the caller knows every
// scale * x is finite and within +-kUnshiftedLog2Limit, so every 2^x and their sum are normal floats).
inline int SoftmaxRowsImpl(float* x, int rows, int cols, int ld, float scale, float* row_max, float* row_sum,
                           int log2) {
  int fully_masked = 0;
  const float neg_inf = -__builtin_inff();
  constexpr int W = 2 * kLanes;  // two vectors per step: independent dependency chains
  const ExpConstants c = LoadExpConstants();
  for (int i = 0; i < rows; ++i) {
    float* r = x + (long)i * ld;
    int j = 0;
    float m = 0.0f;
    if (log2 != 2) {
      // pass 1: row max (scale > 0, so max(scale * x) = scale * max(x))
      Vec vm0 = VSplat(neg_inf), vm1 = vm0;
      for (; j + W <= cols; j += W) {
        vm0 = VMax(vm0, VLoad(r + j));
        vm1 = VMax(vm1, VLoad(r + j + kLanes));
      }
      m = HorizontalMax(VMax(vm0, vm1));
      for (; j < cols; ++j) m = r[j] > m ? r[j] : m;
      m *= scale;
      if (m == neg_inf) {  // every key masked: zeros, never NaN
        for (j = 0; j < cols; ++j) r[j] = 0.0f;
        if (row_max) row_max[i] = 0.0f;
        if (row_sum) row_sum[i] = 0.0f;
        ++fully_masked;
        continue;
      }
    }
    // pass 2: e = exp(scale * x - m) <= 1 (log2: 2^(scale * x - m)), summed
    const float sum = log2 == 2 ? ExpAndSum<true, false>(r, cols, scale, 0.0f, c)
                      : log2    ? ExpAndSum<true>(r, cols, scale, m, c)
                                : ExpAndSum<false>(r, cols, scale, m, c);
    // pass 3: normalise; sum >= 1 (the max entry gives exp(0) = 1; unshifted: >= 2^-64), guarded anyway
    const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
    const Vec vinv = VSplat(inv);
    for (j = 0; j + kLanes <= cols; j += kLanes) VStore(r + j, VMul(VLoad(r + j), vinv));
    for (; j < cols; ++j) r[j] *= inv;
    if (row_max) row_max[i] = m;
    if (row_sum) row_sum[i] = sum;
  }
  return fully_masked;
}

}  // namespace
