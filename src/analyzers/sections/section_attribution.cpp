#include "analyzers/sections/section_attribution.h"

#include <new>

#include "analyzers/state/page_memory.h"
#include "analyzers/state/per_thread_slot.h"

namespace weft {

SectionAttribution::SectionAttribution(unsigned max_threads) : threads_(max_threads) {}

SectionAttribution::~SectionAttribution() = default;

SectionAttribution::ThreadState* SectionAttribution::attach(uint32_t tid) {
  return threads_.attach(tid, [&](ThreadState& fresh) {
    fresh.tid = tid;
    return true;
  });
}

void SectionAttribution::close(ThreadState& t, uint64_t site) {
  t.open_counts.for_each([&](const PcPeerCounts& open) {
    PcPeerCounts* total = t.counts.find_or_insert(PcPeerCounts::make_key(site, open.peer()));
    if (!total) {
      ++t.dropped;
      return;
    }
    total->raw += open.raw;
    total->rar += open.rar;
    total->inval += open.inval;
  });
  t.open_distances.for_each([&](const PcWriterDistanceCount& open) {
    PcWriterDistanceCount* total = t.distances.find_or_insert(
        {(site << 16) | (open.key.pc_writer & 0xffff), open.key.distance});
    if (total)
      total->count += open.count;
    else
      ++t.dropped;
  });
  t.open_counts.zero();
  t.open_distances.zero();
}

uint64_t SectionAttribution::dropped() const {
  uint64_t n = 0;
  for_each_thread([&](const ThreadState& t) { n += t.dropped; });
  return n;
}

}  // namespace weft
