// Hand-built reuse histograms and runs for the prediction's tests.
#pragma once

#include <cmath>
#include <initializer_list>
#include <string>
#include <utility>

#include "findings/reuse_prediction.h"

namespace weft {

// `count` accesses at `distance`.
inline void add(ReuseDistanceHistogram& h, uint64_t distance, uint64_t count) {
  const uint32_t b = reuse_bin(distance);
  if (h.counts.size() <= b) {
    h.counts.resize(b + 1, 0);
    h.distance_sums.resize(b + 1, 0);
  }
  h.counts[b] += count;
  h.distance_sums[b] += static_cast<double>(distance * count);
}

// A histogram of (distance, count) pairs, with `cold` first touches.
inline ReuseDistanceHistogram histogram(
    std::initializer_list<std::pair<uint64_t, uint64_t>> distances, uint64_t cold = 0) {
  ReuseDistanceHistogram h;
  for (const auto& [distance, count] : distances) add(h, distance, count);
  h.cold = cold;
  return h;
}

// `count` accesses spread evenly over the distances [low, high].
inline void spread(ReuseDistanceHistogram& h, uint64_t low, uint64_t high, uint64_t count) {
  for (uint64_t d = low; d <= high; ++d) add(h, d, count / (high - low + 1));
}

inline InstructionReuse row(uint64_t offset, uint32_t thread, ReuseDistanceHistogram h) {
  InstructionReuse r;
  r.pc = 0x400000 + offset;
  r.module = "/somewhere/kernel";
  r.module_offset = offset;
  r.function = "kernel";
  r.file = "kernel.c";
  r.line = static_cast<uint32_t>(offset);
  r.thread = thread;
  r.locality = ReuseLocality::Remote;
  r.histogram = std::move(h);
  return r;
}

// One thread, one instruction whose far pattern's distances grow as the
// square root of the size (bins double with the distances) and a near one
// that stays at distance 2.
inline ReuseRun sqrt_run(double size, uint64_t scale, bool with_far = true) {
  ReuseDistanceHistogram h = histogram({{2, 400}});
  if (with_far) spread(h, 64 * scale, 72 * scale - 1, 800);
  ReuseRun run;
  run.name = "run";
  run.threads = 1;
  run.size = size;
  run.histograms.push_back(row(0x10, 0, h));
  return run;
}

// A 2-D grid of T threads: corners reuse at distance 8 only, edges also at
// [64,71]*scale, interior threads also at [256,287]*scale; thread 0 (the
// main thread, also the top-left corner) has its own pattern at distance 2.
inline ReuseRun grid_run(uint32_t threads, double size, uint64_t scale) {
  const uint32_t n = static_cast<uint32_t>(std::lround(std::sqrt(threads)));
  ReuseRun run;
  run.name = "grid" + std::to_string(threads);
  run.threads = threads;
  run.size = size;
  for (uint32_t t = 0; t < threads; ++t) {
    const uint32_t r = t / n, c = t % n;
    const int boundary = (r == 0 || r == n - 1) + (c == 0 || c == n - 1);
    ReuseDistanceHistogram h;
    if (t == 0) {
      h = histogram({{2, 50}});
    } else {
      h = histogram({{8, 640}});
      if (boundary < 2) spread(h, 64 * scale, 72 * scale - 1, 640);
      if (boundary == 0) spread(h, 256 * scale, 288 * scale - 1, 640);
    }
    run.histograms.push_back(row(0x30, t, h));
  }
  return run;
}

}  // namespace weft
