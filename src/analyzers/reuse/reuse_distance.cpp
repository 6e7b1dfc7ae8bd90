#include "analyzers/reuse/reuse_distance.h"

#include <algorithm>

namespace weft {

void ReuseDistanceAnalyzer::sampled_access(ThreadState& t, uint64_t pc, uint64_t granule,
                                           uint64_t locality) {
  constexpr unsigned kNear = PairReuseTrace::RecentGranules::kSize;
  const unsigned near = t.trace.visit_recent(granule);
  const unsigned shift = t.sample_shift;
  const uint64_t weight = uint64_t{1} << shift;
  if (!granule_in_sample(granule, shift)) {
    // A short distance is exact for every granule; a longer one (and a first
    // access) is measured on the sample only, which stands for the rest.
    if (near < kNear) count(t, pc, locality | reuse_bin(near), near, 1);
    return;
  }
  const uint64_t traced = t.trace.record(granule);
  if (near < kNear) {
    count(t, pc, locality | reuse_bin(near), near, 1);
  } else if (traced == PairReuseTrace::kFirstEvent) {
    count(t, pc, locality | kColdBin, 0, weight);
  } else if (traced < PairReuseTrace::kOutOfMemory) {
    // The sample's distance scaled by the rate; at least kNear, which the
    // recent granules rule out.
    const uint64_t distance = std::max<uint64_t>(kNear, traced << shift);
    count(t, pc, locality | reuse_bin(distance), distance, weight);
  } else {
    t.dropped += weight;
  }
  if (traced == PairReuseTrace::kFirstEvent && ++t.traced > budget_) lower_rate(t);
}

void ReuseDistanceAnalyzer::lower_rate(ThreadState& t) {
  while (t.traced > budget_ && t.sample_shift < 48) {
    const unsigned shift = ++t.sample_shift;
    // The recent granules are exact while every granule was traced.
    if (shift == 1) t.trace.fill_recent();
    t.trace.retain([shift](uint64_t granule) { return granule_in_sample(granule, shift); });
    t.traced = t.trace.capped() ? 0 : t.trace.distinct_granules();
  }
}

void ReuseDistanceAnalyzer::declare(const DistributionDeclaration& d) {
  if (!d.valid() || d.count == 0) return;
  const uint64_t size = d.element_size * d.count;
  if (size / d.element_size != d.count || d.base + size < d.base) return;
  const unsigned g = config_.granularity_log2;
  const uint64_t end = d.base + size;
  for (uint64_t granule = d.base >> g; (granule << g) < end; ++granule) {
    const uint64_t first_byte = std::max(d.base, granule << g);
    std::atomic<uint32_t>* cell = owners_.word(first_byte);
    if (!cell) return;
    cell->store(d.owner((first_byte - d.base) / d.element_size) + 1, std::memory_order_relaxed);
  }
}

void ReuseDistanceAnalyzer::finish_thread(uint32_t tid) {
  ThreadState* t = states_.find(tid);
  if (!t) return;
  t->trace.~PairReuseTrace();
  new (&t->trace) PairReuseTrace(0);
  t->traced = 0;
}

}  // namespace weft
