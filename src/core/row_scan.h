// attnviz core: the passes over a weights matrix before it goes to the GPU.
//
// The heatmap shader scales per row by each row's maximum, and the GPU must not see NaN or
// infinities. RowsToHalves (the renderer's, since stop 33) gives each row's maximum and scale and
// its weights as halves, non-finite ones as 0; ScanRows, the maxima alone, was the R32F upload's
// read-only pass (bench/decode_bench.cpp keeps it as that baseline).
#pragma once
#include <cstddef>
#include <cstdint>

namespace attnviz {

// row_max[r] = max(0, the largest finite weight of row r) for rows x cols weights, rows in a row
// (cols apart). Returns false if some weight is NaN or infinite: row_max then holds what a copy
// with those weights as 0 would give. Branch-free over the float bits: a weight's bits as a signed
// integer order every finite float >= 0 as the floats do, and every negative float below 0.
bool ScanRows(const float* data, int rows, int cols, float* row_max);

// A weights texture's rows made ready for the GPU in one pass per row (the row still in L1 for its
// second read): rows_out[2 r] = row r's maximum as ScanRows gives it, rows_out[2 r + 1] = its scale
// s (the smallest power of two >= its largest finite |w|; 1 for a row of zeros), dst[r cols + c] =
// half(w / s) (core/half.h: NaN and infinities as 0). Returns false if some weight is not finite.
bool RowsToHalves(const float* data, int rows, int cols, float* rows_out, uint16_t* dst);

// *lo and *hi = the smallest and the largest finite of n weights; false (and both untouched) when
// none is finite. Figures use it for their colour range and the width of printed numbers.
bool FiniteRange(const float* data, size_t n, float* lo, float* hi);

}  // namespace attnviz
