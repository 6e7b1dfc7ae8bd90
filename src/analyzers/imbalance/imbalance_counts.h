// ImbalanceCounts: what LIME's load-imbalance analysis needs from a run, per
// thread and per parallel-section segment (the part of a thread's execution
// between two of its section-closing synchronization points, docs/metrics.md
// "Parallel section"):
//
//   - control-flow edge counts: when block b starts right after block p in
//     the same thread and the same call frame, edge (p, b) counts one; the
//     first block of a segment comes from the pseudo block 0 (the section
//     entry). A source that reports function entries and exits
//     (enter_function, exit_function) keeps each frame's last block: a
//     callee's first block follows the calling block, and the block after the
//     call follows the calling block again, never the callee's last one, so
//     a decision whose condition calls a function is the caller's;
//   - per memory instruction: its executions and its misses in a simulated
//     private L1 and L2 and the shared last-level cache (cache_simulator.h),
//     every set of each cache simulated (exact) or a sample of them with
//     each miss counted for the sets it stands for (ImbalanceConfig::
//     cache_sampling, CacheSampling).
//
// The counts of the open segment live in per-thread hash tables; closing a
// segment appends them to the thread's logs (SegmentEdge and
// SegmentInstruction records numbered by the thread's segment ordinal) and
// empties the tables. A segment whose counts are exactly those of a segment
// the thread logged in full before (found by a hash of the counts, then
// compared record by record) is logged as one SegmentRepeat instead, so a
// loop of many identical small sections costs a few bytes per instance.
// Each thread updates only its own state, without locks; the shared cache is
// the one structure threads touch together.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "analyzers/imbalance/cache_simulator.h"
#include "analyzers/imbalance/imbalance_records.h"
#include "analyzers/state/paged_hash_table.h"
#include "analyzers/state/per_thread_slot.h"
#include "analyzers/state/record_log.h"
#include "common/analyses.h"
#include "common/run_capture.h"

namespace weft {

struct ImbalanceConfig {
  unsigned max_threads = 1024;
  CacheGeometry cache;
  // Per thread and log: 1 MiB chunks of closed-segment records. Records
  // beyond are dropped and the capture says so.
  size_t max_log_chunks = 64;
  // 1 in this many sets of every simulated cache is simulated, each of
  // their misses counting this many (a power of two; CacheSampling). 1: every
  // set, the exact model (the default here; `weft record`'s is its
  // imbalance_cache_sampling setting, src/common/analyses.h).
  uint32_t cache_sampling = 1;
  // In a long run, the memory instructions of 1 in this many section
  // instances are analyzed (SampledSegments; docs/metrics.md, "Sampled
  // section instances"); the others count their control flow only. 1: every
  // instance (the default here; `weft record`'s is its
  // imbalance_instance_sampling setting).
  uint32_t segment_sampling = 1;
  // Where instances are sampled (segment_sampling > 1), a segment whose
  // memory is counted is counted whole for its first kWholeCycles cycles of
  // this many basic blocks, then in stretches: of each cycle's eighths, one
  // counted kStretchRate times, the one before it warming the caches, the
  // others skipped (ImbalanceCounts::next_stretch; docs/metrics.md,
  // "Stretches of long instances"). 0: whole (the default here; `weft
  // record`'s is its imbalance_stretch_blocks setting).
  uint64_t stretch_blocks = 0;
};

// Set sampling of the simulated caches (docs/metrics.md, "Simulated
// caches"): a line's class is its number modulo C, the largest power of two
// (at most 64) dividing every level's set count, so the lines of one set of
// any level are all of one class. The lines of 1 in `rate` classes, chosen by
// a fixed hash, go through L1, L2 and the LLC as in the exact model, filling
// exactly the sets they would; the others are not simulated, and each
// simulated miss counts `rate`. Rate 1, or a geometry with fewer classes than
// the rate asks for, simulates every line (the effective rate says which).
class CacheSampling {
 public:
  CacheSampling() = default;
  CacheSampling(const CacheGeometry& cache, uint32_t rate);

  bool simulated(uint64_t line) const { return (classes_ >> (line & class_mask_)) & 1; }
  uint64_t rate() const { return rate_; }  // misses per simulated miss

 private:
  uint64_t classes_ = ~uint64_t{0};  // bit c: class c is simulated
  uint64_t class_mask_ = 0;
  uint64_t rate_ = 1;
};

class ImbalanceCounts {
 public:
  struct EdgeCount {
    struct Key {
      uint64_t from = 0;  // 0: the segment's entry
      uint64_t to = 0;
      bool operator==(const Key&) const = default;
    };
    Key key;
    uint64_t count = 0;
    uint64_t to_instructions = 0;  // instructions of block `to`, 0 when the source does not know
  };
  struct InstructionCount {
    uint64_t key = 0;  // pc
    uint64_t executions = 0;
    uint64_t misses[3] = {0, 0, 0};  // L1, L2, LLC
  };

  // A segment logged in full, by a hash of its counts (never 0): where its
  // records are in the thread's logs.
  struct LoggedSegment {
    uint64_t key = 0;
    uint32_t segment = 0;
    uint32_t edges = 0;
    uint32_t instructions = 0;
    RecordLog<SegmentEdge>::Position edge_at;
    RecordLog<SegmentInstruction>::Position instruction_at;
  };

  // Lines a segment whose memory is not counted remembers as L1 hits
  // (ThreadState::warm_lines; only with an L1 of at least as many ways).
  static constexpr uint32_t kWarmLines = 4;
  // Call frames whose last block is kept; deeper frames are counted only
  // (their returns restore nothing).
  static constexpr uint32_t kMaxFrames = 1024;
  // Segments per thread a later one can repeat (beyond, new counts are
  // logged in full every time).
  static constexpr size_t kMaxLoggedSegments = size_t{1} << 16;

  // Events held back while the caller cannot tell yet which segment they
  // belong to (a spin wait: what the thread does after its latest read of
  // the flag is the next segment's work if that read ended the wait, and
  // the spin loop's own if it did not). Few distinct edges and memory
  // instructions run between two reads of a flag; beyond these, events go
  // to the open segment directly (spilled).
  static constexpr uint32_t kHeldEdges = 32;
  static constexpr uint32_t kHeldInstructions = 8;
  struct HeldEntries {
    EdgeCount edges[kHeldEdges];
    InstructionCount instructions[kHeldInstructions];
  };
  struct HeldEvents {
    bool active = false;
    // The call depth the holding began at, lowered by the returns since:
    // a return below it resumes at the segment's entry, as after a closing
    // point inside a call.
    uint32_t floor = 0;
    uint32_t edges_used = 0;
    uint32_t instructions_used = 0;
    // Packed memory taken at the thread's first hold (most threads never
    // spin) and given back at its exit: 1.4 KB an exited thread does not
    // keep. Null (out of memory): events go to the open segment directly.
    HeldEntries* entries = nullptr;
  };

  struct ThreadState {
    ThreadState() = default;
    ~ThreadState() {
      release(frames, kMaxFrames * sizeof(uint64_t));
      release(held.entries, sizeof(HeldEntries));
    }
    ThreadState(const ThreadState&) = delete;
    ThreadState& operator=(const ThreadState&) = delete;
    uint32_t tid = 0;
    uint32_t segment = 0;  // ordinal of the open segment
    uint64_t previous_block = 0;
    // The calling frames' last blocks (0: the frame's block was in an
    // earlier segment, so the caller resumes at the section entry).
    uint32_t depth = 0;
    // [kMaxFrames], reserved at attach (touched as deep as the calls go),
    // its pages freed at the thread's exit.
    uint64_t* frames = nullptr;
    uint64_t last_line = ~uint64_t{0};  // the line of the thread's latest cache lookup
    // In a segment whose memory is not counted, the lines of its latest
    // lookups (kWarmLines, the open segment's only): L1 hits still, fewer
    // lookups than the L1 has ways having come after them. A re-read of one
    // skips its lookup, losing only the recency update (the caches only need
    // the right lines present): a stencil's rows alternate, and each went out
    // of line to its lookup.
    uint64_t warm_lines[kWarmLines] = {~uint64_t{0}, ~uint64_t{0}, ~uint64_t{0}, ~uint64_t{0}};
    uint32_t next_warm_line = 0;
    PagedHashTable<EdgeCount> edges;
    PagedHashTable<InstructionCount> instructions;
    PrivateCache l1;
    PrivateCache l2;
    RecordLog<SegmentEdge> edge_log;
    RecordLog<SegmentInstruction> instruction_log;
    // Segments a later one may repeat (looked up when a segment closes).
    PagedHashTable<LoggedSegment, kFewRecentEntries> logged;
    RecordLog<SegmentRepeat> repeat_log;
    uint64_t dropped = 0;  // events lost to memory exhaustion
    HeldEvents held;
    // How many segments the open segment's memory counts stand for (sampled
    // section instances; 0: its memory instructions are not analyzed); the
    // next segment's, once the open one closes.
    uint32_t memory_weight = 1;
    uint32_t next_memory_weight = 1;
    // What one counted execution adds where the thread stands in its open
    // segment: 1 (the segment whole), kStretchRate (a counted stretch), 0
    // (nothing counted: a segment of weight 0, or a stretch that warms the
    // caches or, with memory_idle, skips them too).
    uint32_t memory_increment = 1;
    bool memory_idle = false;
    bool stretching = false;          // past the segment's whole part
    uint8_t stretch_eighth = 0;       // of the open cycle
    uint8_t counted_eighth = 0;       // the open cycle's counted one (1..7)
    uint32_t stretch_cycle = 0;       // cycles begun (over the thread's run)
    uint64_t stretched_segments = 0;  // segments that reached their stretches
    // Basic blocks left before the next stretch begins (~0: none), and the
    // cycle's length (ImbalanceConfig::stretch_blocks; 0: segments whole).
    uint64_t stretch_countdown = ~uint64_t{0};
    uint64_t stretch_blocks = 0;
    RecordLog<SegmentMemoryWeight> weight_log;  // the segments of weight != 1
  };

  explicit ImbalanceCounts(const ImbalanceConfig& config);
  ~ImbalanceCounts();
  ImbalanceCounts(const ImbalanceCounts&) = delete;
  ImbalanceCounts& operator=(const ImbalanceCounts&) = delete;

  const ImbalanceConfig& config() const { return config_; }

  // The state of thread `tid`, created on first call; nullptr beyond
  // max_threads or when out of memory.
  ThreadState* attach(uint32_t tid);

  // Block `pc` starts; `instructions` is its static size when the source
  // knows it (0 otherwise: the profile builder fills it from the binary).
  void block(ThreadState& t, uint64_t pc, uint64_t instructions) {
    if (__builtin_expect(--t.stretch_countdown == 0, 0)) next_stretch(t);
    EdgeCount* e = __builtin_expect(t.held.active, 0)
                       ? held_edge(t, {t.previous_block, pc})
                       : t.edges.find_or_insert({t.previous_block, pc});
    t.previous_block = pc;
    if (__builtin_expect(e == nullptr, 0)) {
      ++t.dropped;
      return;
    }
    ++e->count;
    e->to_instructions = instructions;
  }

  // block(t, pc, 0) when it only adds to an edge the thread took recently
  // (true); otherwise nothing is changed (false): call block(). For an
  // inline caller (the compile-time source's hooks).
  static bool block_fast(ThreadState& t, uint64_t pc) {
    if (__builtin_expect(t.held.active | (t.stretch_countdown <= 1), 0)) return false;
    EdgeCount* e = t.edges.find_recent({t.previous_block, pc});
    if (__builtin_expect(e == nullptr, 0)) return false;
    --t.stretch_countdown;
    t.previous_block = pc;
    ++e->count;
    e->to_instructions = 0;
    return true;
  }

  // The thread calls a function: its frame's last block is kept.
  static void enter_function(ThreadState& t) {
    if (t.depth < kMaxFrames) t.frames[t.depth] = t.previous_block;
    ++t.depth;
  }
  // The function returns: the block after the call follows the calling
  // block. A return without a known entry (a frame deeper than kMaxFrames,
  // or entered before the source reported entries) keeps the current block.
  static void exit_function(ThreadState& t) {
    if (t.depth == 0) return;
    --t.depth;
    if (__builtin_expect(t.depth < t.held.floor, 0)) {
      t.held.floor = t.depth;
      t.previous_block = 0;
    } else if (t.depth < kMaxFrames) {
      t.previous_block = t.frames[t.depth];
    }
  }

  // Holds the thread's next events back (HeldEvents), discarding those held
  // so far: they start from the segment's entry.
  static void hold(ThreadState& t) {
    if (__builtin_expect(t.held.entries == nullptr, 0))
      t.held.entries = static_cast<HeldEntries*>(reserve_packed(sizeof(HeldEntries)));
    t.held.active = true;
    t.held.floor = t.depth;
    t.held.edges_used = 0;
    t.held.instructions_used = 0;
    t.previous_block = 0;
  }
  // Adds the held events to the open segment and stops holding.
  void release_held(ThreadState& t);

  // One execution of memory instruction `pc` on [addr, addr + size): one
  // cache lookup per line it touches.
  // In a segment whose memory is not counted, the access's lines still go
  // through the simulated caches (counting nothing), so that a counted
  // segment finds them as the program left them: an LLC of the size of a
  // loop's data keeps it only while the loops run between two of its
  // executions are simulated too (docs/metrics.md, "Simulated caches").
  void access(ThreadState& t, uint64_t pc, uint64_t addr, uint64_t size) {
    if (t.memory_increment == 0) {
      if (t.memory_idle) return;
      for (uint64_t line = addr >> line_shift_, last = last_line_of(addr, size); line <= last;
           ++line)
        if (needs_lookup(t, line) && !warm_hit(t, line)) warm(t, line);
      return;
    }
    InstructionCount* c = __builtin_expect(t.held.active, 0) ? held_instruction(t, pc)
                                                             : t.instructions.find_or_insert(pc);
    if (__builtin_expect(c == nullptr, 0)) {
      ++t.dropped;
      return;
    }
    c->executions += t.memory_increment;
    const uint64_t first = addr >> line_shift_;
    const uint64_t last = last_line_of(addr, size);
    // The line this thread accessed last is the most recent of its L1 set:
    // a hit that changes nothing (streams touch each line several times).
    // (Without an L1 every lookup misses: last_line then stays ~0.)
    for (uint64_t line = first; line <= last; ++line)
      if (needs_lookup(t, line)) simulate(t, *c, line);
  }

  // access(t, pc, addr, size) when it only counts an execution of an
  // instruction found recently on one line that needs no cache lookup
  // (true); otherwise nothing is changed (false): call access().
  bool access_fast(ThreadState& t, uint64_t pc, uint64_t addr, uint64_t size) const {
    const uint64_t line = addr >> line_shift_;
    if (__builtin_expect(last_line_of(addr, size) != line, 0)) return false;
    if (needs_lookup(t, line))
      return t.memory_increment == 0 && (t.memory_idle || warm_hit(t, line));
    if (t.memory_increment == 0) return true;
    if (__builtin_expect(t.held.active, 0)) return false;
    InstructionCount* c = t.instructions.find_recent(pc);
    if (__builtin_expect(c == nullptr, 0)) return false;
    c->executions += t.memory_increment;
    return true;
  }

  // How many segments the memory counts of the thread's next segment (the
  // one a close_segment or a resume_segment begins) stand for: 0, they are
  // not counted; 1, itself; N, a sample's.
  static void weigh_next_segment(ThreadState& t, uint32_t weight) { t.next_memory_weight = weight; }
  // The thread resumes after waiting: its next segment begins.
  static void resume_segment(ThreadState& t) {
    t.memory_weight = t.next_memory_weight;
    begin_whole(t);
    forget_warm_lines(t);  // the lookups since may have evicted them
  }

  // Stretches of a long segment (ImbalanceConfig::stretch_blocks).
  static constexpr uint64_t kWholeCycles = kImbalanceWholeStretchCycles;
  static constexpr uint32_t kStretchRate = kImbalanceStretchRate;

  // Ends the thread's open segment: its counts go to the logs, in full or
  // as a repeat of an earlier segment (a segment of weight other than 1
  // also logs a SegmentMemoryWeight).
  void close_segment(ThreadState& t);

  // The thread ended (its last segment closed): its caches and open-segment
  // tables are freed, only its logs stay (what an exited thread keeps,
  // docs/performance.md). Events after it still count, in tables that grow
  // again and caches that miss.
  static void finish_thread(ThreadState& t);
  // After finish_thread: its logs move into packed memory of their size,
  // the pages of its call frames are freed.
  static void compact_thread(ThreadState& t);

  // Every logged record, thread by thread. Call when no thread is updating.
  template <class Visitor>
  void for_each_edge(Visitor&& visit) const {
    for_each_thread([&](const ThreadState& t) { t.edge_log.for_each(visit); });
  }
  template <class Visitor>
  void for_each_instruction(Visitor&& visit) const {
    for_each_thread([&](const ThreadState& t) { t.instruction_log.for_each(visit); });
  }
  template <class Visitor>
  void for_each_repeat(Visitor&& visit) const {
    for_each_thread([&](const ThreadState& t) { t.repeat_log.for_each(visit); });
  }
  template <class Visitor>
  void for_each_memory_weight(Visitor&& visit) const {
    for_each_thread([&](const ThreadState& t) { t.weight_log.for_each(visit); });
  }

  uint64_t dropped() const;
  // Segments logged as repeats of an earlier one.
  uint64_t repeated_segments() const;
  // Segments whose memory instructions were not analyzed.
  uint64_t unmeasured_segments() const;
  // Segments whose memory was counted in stretches past their whole part.
  uint64_t stretched_segments() const;
  // Misses each simulated miss counts for (1: the exact model).
  uint64_t cache_sampling() const { return sampling_.rate(); }

 private:
  template <class Visitor>
  void for_each_thread(Visitor&& visit) const {
    threads_.for_each(visit);
  }

  // The held entry of an edge or instruction (the open segment's once the
  // held ones are full).
  EdgeCount* held_edge(ThreadState& t, const EdgeCount::Key& key);
  InstructionCount* held_instruction(ThreadState& t, uint64_t pc);

  // Whether `line` goes to the caches: a simulated class's, and not the
  // thread's latest (a hit that changes nothing).
  bool needs_lookup(const ThreadState& t, uint64_t line) const {
    return line != t.last_line && sampling_.simulated(line);
  }
  // The line of an access's last byte.
  uint64_t last_line_of(uint64_t addr, uint64_t size) const {
    return (addr + (size ? size - 1 : 0)) >> line_shift_;
  }
  // One lookup of `line` by `c` in the thread's L1, then on down (out of
  // line: most accesses of a sampled model never get here).
  __attribute__((noinline)) void simulate(ThreadState& t, InstructionCount& c, uint64_t line);
  // The lookup alone: how many levels `line` missed in (0: an L1 hit, 3:
  // every level).
  unsigned look_up(ThreadState& t, uint64_t line);
  // A lookup that counts nothing (a segment whose memory is not counted),
  // remembered in the thread's warm lines.
  __attribute__((noinline)) void warm(ThreadState& t, uint64_t line);
  static bool warm_hit(const ThreadState& t, uint64_t line) {
    static_assert(kWarmLines == 4);
    return (t.warm_lines[0] == line) | (t.warm_lines[1] == line) | (t.warm_lines[2] == line) |
           (t.warm_lines[3] == line);
  }
  static void forget_warm_lines(ThreadState& t) {
    for (uint64_t& line : t.warm_lines) line = ~uint64_t{0};
  }

  // The open segment's memory is counted whole, and its stretches (if it
  // has any) begin after kWholeCycles cycles.
  static void begin_whole(ThreadState& t) {
    t.memory_increment = t.memory_weight != 0 ? 1 : 0;
    t.memory_idle = false;
    t.stretching = false;
    t.stretch_countdown = t.memory_weight != 0 && t.stretch_blocks != 0
                              ? kWholeCycles * t.stretch_blocks
                              : ~uint64_t{0};
  }
  // The open stretch ran its blocks: the next one begins.
  static void next_stretch(ThreadState& t);

  // Logs the counts of the thread's open segment (not empty).
  void log_counts(ThreadState& t);
  static uint64_t counts_key(ThreadState& t);
  static bool has_counts_of(ThreadState& t, const LoggedSegment& earlier);

  ImbalanceConfig config_;
  unsigned line_shift_ = 6;
  bool remembers_warm_lines_ = false;  // L1 sets of at least kWarmLines ways
  CacheSampling sampling_;
  SharedCache llc_;
  PerThreadStates<ThreadState> threads_;
};

inline size_t hash_key(const ImbalanceCounts::EdgeCount::Key& key) {
  return hash_key(key.from * 0x9e3779b97f4a7c15ULL ^ key.to);
}
inline size_t recent_index(const ImbalanceCounts::EdgeCount::Key& key) {
  return recent_index(key.from ^ (key.to >> 3));
}

}  // namespace weft
