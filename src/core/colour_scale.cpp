#include "core/colour_scale.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace attnviz {

float ColourT(ColourScale scale, float w, float vmin, float vmax, float row_max) {
  float t;
  if (scale == ColourScale::PerRow) {
    t = row_max > 0 ? w / row_max : 0.0f;
  } else if (scale == ColourScale::Log) {
    const float lo = std::log(std::max(vmin, 1e-12f)), hi = std::log(std::max(vmax, 1e-12f));
    t = (std::log(std::max(w, 1e-12f)) - lo) / std::max(hi - lo, 1e-12f);
  } else {
    t = (w - vmin) / std::max(vmax - vmin, 1e-12f);
  }
  return std::isnan(t) ? 0.0f : std::clamp(t, 0.0f, 1.0f);
}

namespace {

void Text(ColourTick* t, const char* fmt, double v) {
  std::snprintf(t->text, sizeof(t->text), fmt, v);
}

int EndTicks(ColourScale scale, float vmin, float vmax, ColourTick out[]) {
  ColourTick three[3];
  RangeTicks(scale, vmin, vmax, three);
  out[0] = three[0], out[1] = three[2];
  return 2;
}

// Multiples of the finest round step (1, 2 or 5 x 10^k) of which [lo, hi] holds at most max_ticks.
int LinearTicks(double lo, double hi, int max_ticks, ColourTick out[]) {
  const double span = hi - lo;
  double step = std::pow(10.0, std::floor(std::log10(span / max_ticks)));
  for (int i = 0; i < 12; ++i) {  // 1, 2, 5, 10, 20, ...: a count <= max_ticks comes within three
    if (std::floor(hi / step + 1e-9) - std::ceil(lo / step - 1e-9) + 1 <= max_ticks) break;
    const double unit = std::pow(10.0, std::floor(std::log10(step) + 1e-9)), m = step / unit;
    step = (m < 1.5 ? 2 : m < 3.5 ? 5 : 10) * unit;
  }
  int n = 0;
  for (double k = std::ceil(lo / step - 1e-9); n < max_ticks && k * step <= hi + step * 1e-9; k += 1) {
    const double v = k * step;
    out[n].t = (float)std::clamp((v - lo) / span, 0.0, 1.0);
    Text(&out[n], "%.4g", std::fabs(v) < step * 1e-6 ? 0.0 : v);
    ++n;
  }
  return n;
}

// Powers of ten in [lo, hi]: from the highest down, every k-th when there are more than max_ticks.
int DecadeTicks(double lo, double hi, int max_ticks, ColourTick out[]) {
  const double a = std::log10(lo), b = std::log10(hi);
  const int d0 = (int)std::ceil(a - 1e-9), d1 = (int)std::floor(b + 1e-9);
  if (d1 < d0) return 0;
  const int stride = std::max(1, (d1 - d0 + max_ticks - 2) / (max_ticks - 1));
  int n = 0;
  for (int d = d1 - ((d1 - d0) / stride) * stride; d <= d1 && n < max_ticks; d += stride) {
    out[n].t = (float)std::clamp((d - a) / (b - a), 0.0, 1.0);
    Text(&out[n], "%g", std::pow(10.0, d));
    ++n;
  }
  return n;
}

}  // namespace

int ColourTicks(ColourScale scale, float vmin, float vmax, int max_ticks, ColourTick out[kMaxColourTicks]) {
  max_ticks = std::clamp(max_ticks, 2, kMaxColourTicks);
  if (scale == ColourScale::PerRow) {
    EndTicks(scale, vmin, vmax, out);
    if (max_ticks < 3) return 2;
    out[2] = out[1];
    out[1].t = 0.5f;
    Text(&out[1], "%g", 0.5);
    return 3;
  }
  const double lo = scale == ColourScale::Log ? std::max(vmin, 1e-12f) : vmin, hi = vmax;
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi)) return EndTicks(scale, vmin, vmax, out);
  const int n = scale == ColourScale::Log ? DecadeTicks(lo, hi, max_ticks, out) : LinearTicks(lo, hi, max_ticks, out);
  return n >= 2 ? n : EndTicks(scale, vmin, vmax, out);
}

void RangeTicks(ColourScale scale, float vmin, float vmax, ColourTick out[3]) {
  const bool row = scale == ColourScale::PerRow, log = scale == ColourScale::Log;
  out[0].t = 0, out[1].t = 0.5f, out[2].t = 1;
  Text(&out[0], "%.3g", row ? 0.0 : (double)vmin);
  Text(&out[1], "%.3g",
       row   ? 0.5
       : log ? std::sqrt((double)std::max(vmin, 1e-12f) * vmax)
             : 0.5 * ((double)vmin + vmax));
  if (row)
    std::snprintf(out[2].text, sizeof(out[2].text), "row max");
  else
    Text(&out[2], "%.3g", (double)vmax);
}

}  // namespace attnviz
