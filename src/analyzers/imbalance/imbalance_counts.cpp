#include "analyzers/imbalance/imbalance_counts.h"

#include "analyzers/state/per_thread_slot.h"

namespace weft {

ImbalanceCounts::ImbalanceCounts(const ImbalanceConfig& config)
    : config_(config), threads_(config.max_threads) {
  line_shift_ = static_cast<unsigned>(__builtin_ctz(config.cache.line_bytes));
  llc_.configure(config.cache.levels[2], config.cache.line_bytes);
}

ImbalanceCounts::~ImbalanceCounts() = default;

ImbalanceCounts::ThreadState* ImbalanceCounts::attach(uint32_t tid) {
  return threads_.attach(tid, [&](ThreadState& t) {
    t.tid = tid;
    // A missing private level (absent from the topology) just misses.
    t.l1.configure(config_.cache.levels[0], config_.cache.line_bytes);
    t.l2.configure(config_.cache.levels[1], config_.cache.line_bytes);
    t.edge_log.set_max_chunks(config_.max_log_chunks);
    t.instruction_log.set_max_chunks(config_.max_log_chunks);
    return true;
  });
}

void ImbalanceCounts::close_segment(ThreadState& t) {
  t.edges.for_each([&](const EdgeCount& e) {
    t.edge_log.append(
        SegmentEdge{t.tid, t.segment, e.key.from, e.key.to, e.count, e.to_instructions});
  });
  t.instructions.for_each([&](const InstructionCount& c) {
    t.instruction_log.append(SegmentInstruction{t.tid, t.segment, c.key, c.executions, c.misses[0],
                                                c.misses[1], c.misses[2]});
  });
  t.edges.zero();
  t.instructions.zero();
  t.previous_block = 0;
  // The calling frames resume in the next segment, from its entry.
  for (uint32_t i = 0; i < t.depth && i < kMaxFrames; ++i) t.frames[i] = 0;
  ++t.segment;
}

uint64_t ImbalanceCounts::dropped() const {
  uint64_t n = 0;
  for_each_thread([&](const ThreadState& t) {
    n += t.dropped + t.edge_log.dropped() + t.instruction_log.dropped();
  });
  return n;
}

}  // namespace weft
