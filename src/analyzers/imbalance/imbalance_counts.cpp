#include "analyzers/imbalance/imbalance_counts.h"

#include <algorithm>

#include "analyzers/state/per_thread_slot.h"

namespace weft {

CacheSampling::CacheSampling(const CacheGeometry& cache, uint32_t rate) {
  // The classes: the largest power of two dividing every level's set count.
  unsigned class_bits = 6;
  bool any_level = false;
  for (const CacheLevelGeometry& level : cache.levels) {
    CacheSets sets;
    if (!sets.configure(level.size_bytes, level.ways, cache.line_bytes)) continue;
    any_level = true;
    const unsigned bits = static_cast<unsigned>(__builtin_ctzll(sets.sets()));
    class_bits = bits < class_bits ? bits : class_bits;
  }
  const uint64_t classes = uint64_t{1} << class_bits;
  if (!any_level || rate <= 1 || (rate & (rate - 1)) != 0) return;
  rate_ = rate < classes ? rate : classes;
  if (rate_ == 1) return;
  class_mask_ = classes - 1;
  // The classes / rate classes of smallest hash.
  classes_ = 0;
  for (uint64_t k = 0; k < classes / rate_; ++k) {
    uint64_t best = 0;
    size_t best_hash = ~size_t{0};
    for (uint64_t c = 0; c < classes; ++c) {
      const size_t h = hash_key(c + 0x5eed);
      if (!((classes_ >> c) & 1) && h <= best_hash) {
        best = c;
        best_hash = h;
      }
    }
    classes_ |= uint64_t{1} << best;
  }
}

ImbalanceCounts::ImbalanceCounts(const ImbalanceConfig& config)
    : config_(config),
      sampling_(config.cache, config.cache_sampling),
      threads_(config.max_threads) {
  line_shift_ = static_cast<unsigned>(__builtin_ctz(config.cache.line_bytes));
  // (An absent L1: warm() finds no present() L1 and remembers nothing.)
  remembers_warm_lines_ = config.cache.levels[0].ways >= kWarmLines;
  llc_.configure(config.cache.levels[2], config.cache.line_bytes);
}

ImbalanceCounts::~ImbalanceCounts() = default;

ImbalanceCounts::ThreadState* ImbalanceCounts::attach(uint32_t tid) {
  return threads_.attach(tid, [&](ThreadState& t) {
    t.tid = tid;
    t.frames = static_cast<uint64_t*>(reserve_zeroed(kMaxFrames * sizeof(uint64_t)));
    if (!t.frames) return false;
    // A missing private level (absent from the topology) just misses.
    t.l1.configure(config_.cache.levels[0], config_.cache.line_bytes);
    t.l2.configure(config_.cache.levels[1], config_.cache.line_bytes);
    t.edge_log.set_max_chunks(config_.max_log_chunks);
    t.instruction_log.set_max_chunks(config_.max_log_chunks);
    t.repeat_log.set_max_chunks(config_.max_log_chunks);
    t.weight_log.set_max_chunks(config_.max_log_chunks);
    if (config_.segment_sampling > 1) t.stretch_blocks = config_.stretch_blocks;
    begin_whole(t);
    return true;
  });
}

void ImbalanceCounts::close_segment(ThreadState& t) {
  if (t.edges.size() != 0 || t.instructions.size() != 0) log_counts(t);
  if (t.memory_weight != 1)
    t.weight_log.append(SegmentMemoryWeight{t.tid, t.segment, t.memory_weight});
  resume_segment(t);
  t.edges.zero();
  t.instructions.zero();
  // Held events continue into the next segment from their own last block.
  if (!t.held.active) t.previous_block = 0;
  // The calling frames resume in the next segment, from its entry.
  for (uint32_t i = 0; i < t.depth && i < kMaxFrames; ++i) t.frames[i] = 0;
  ++t.segment;
}

void ImbalanceCounts::simulate(ThreadState& t, InstructionCount& c, uint64_t line) {
  const unsigned missed = look_up(t, line);
  for (unsigned level = 0; level < missed; ++level)
    c.misses[level] += sampling_.rate() * t.memory_increment;
}

// A cycle is 8 eighths: one that counts, each execution and miss for the
// cycle's kStretchRate eighths; the one before it, which only warms the
// caches (they see every access again, so the counted eighth finds the
// lines the program reuses); the others skipped, the caches too (they keep
// what the last warm-up left). Which eighth counts is a hash of the cycle's
// number, the same in every thread: a fixed one falls on the same point of
// a loop whose period divides the cycle (a tiled loop of 2^18 iterations
// per tile counted only its tiles' last rows), and threads that run alike
// code are compared on alike samples.
void ImbalanceCounts::next_stretch(ThreadState& t) {
  t.stretched_segments += !t.stretching;
  if (!t.stretching || ++t.stretch_eighth == kStretchRate) {
    t.stretching = true;
    t.stretch_eighth = 0;
    const uint64_t h = (t.stretch_cycle++ + 1) * 0x9e3779b97f4a7c15ULL;
    t.counted_eighth = static_cast<uint8_t>(1 + (h >> 32) % (kStretchRate - 1));
  }
  const bool counted = t.stretch_eighth == t.counted_eighth;
  t.memory_increment = counted ? kStretchRate : 0;
  t.memory_idle = !counted && t.stretch_eighth + 1 != t.counted_eighth;  // not warming
  t.stretch_countdown = std::max<uint64_t>(t.stretch_blocks / kStretchRate, 1);
}

void ImbalanceCounts::warm(ThreadState& t, uint64_t line) {
  look_up(t, line);
  if (remembers_warm_lines_ && t.l1.present()) t.warm_lines[t.next_warm_line++ % kWarmLines] = line;
}

unsigned ImbalanceCounts::look_up(ThreadState& t, uint64_t line) {
  if (t.l1.access(line)) {
    t.last_line = line;
    return 0;
  }
  if (t.l1.present()) t.last_line = line;
  if (t.l2.access(line)) return 1;
  return llc_.access(line) ? 2 : 3;
}

void ImbalanceCounts::finish_thread(ThreadState& t) {
  t.l1.clear();
  t.l2.clear();
  t.last_line = ~uint64_t{0};
  forget_warm_lines(t);
  t.edges.clear();
  t.instructions.clear();
  t.logged.clear();
  if (!t.held.active) {
    release(t.held.entries, sizeof(HeldEntries));
    t.held.entries = nullptr;
  }
}

void ImbalanceCounts::compact_thread(ThreadState& t) {
  if (t.logged.size() != 0) t.logged.clear();  // its positions into the logs
  t.edge_log.compact();
  t.instruction_log.compact();
  t.repeat_log.compact();
  t.weight_log.compact();
  forget_pages(t.frames, kMaxFrames * sizeof(uint64_t));
}

namespace {

// The entry of `key` among the `used` first of `held`, added if new; the
// open segment's (`open`) once every held one is taken.
template <class Entry, size_t N>
Entry* find_or_hold(Entry (*held_entries)[N], uint32_t& used, const decltype(Entry::key)& key,
                    PagedHashTable<Entry>& open) {
  if (held_entries == nullptr) return open.find_or_insert(key);
  Entry(&held)[N] = *held_entries;
  for (uint32_t i = 0; i < used; ++i)
    if (held[i].key == key) return &held[i];
  if (used == N) return open.find_or_insert(key);
  Entry& e = held[used++];
  e = Entry{};
  e.key = key;
  return &e;
}

// Adds the `used` first of `held` into the open segment's table with `add`;
// what the table cannot take counts as dropped (`weight` events each).
template <class Entry, size_t N, class Weight, class Add>
void spill_held(const Entry (&held)[N], uint32_t used, PagedHashTable<Entry>& open,
                uint64_t& dropped, Weight weight, Add add) {
  for (uint32_t i = 0; i < used; ++i) {
    if (Entry* e = open.find_or_insert(held[i].key))
      add(*e, held[i]);
    else
      dropped += weight(held[i]);
  }
}

uint64_t mix(uint64_t h, uint64_t value) { return hash_key(h ^ (value * 0x9e3779b97f4a7c15ULL)); }

}  // namespace

ImbalanceCounts::EdgeCount* ImbalanceCounts::held_edge(ThreadState& t, const EdgeCount::Key& key) {
  return find_or_hold(t.held.entries ? &t.held.entries->edges : nullptr, t.held.edges_used, key,
                      t.edges);
}

ImbalanceCounts::InstructionCount* ImbalanceCounts::held_instruction(ThreadState& t, uint64_t pc) {
  return find_or_hold(t.held.entries ? &t.held.entries->instructions : nullptr,
                      t.held.instructions_used, pc, t.instructions);
}

void ImbalanceCounts::release_held(ThreadState& t) {
  HeldEvents& h = t.held;
  if (!h.active) return;
  h.active = false;
  h.floor = 0;
  if (h.entries == nullptr) return;  // nothing held: they went to the open segment
  spill_held(
      h.entries->edges, h.edges_used, t.edges, t.dropped,
      [](const EdgeCount& e) { return e.count; },
      [](EdgeCount& e, const EdgeCount& held) {
        e.count += held.count;
        e.to_instructions = held.to_instructions;
      });
  spill_held(
      h.entries->instructions, h.instructions_used, t.instructions, t.dropped,
      [](const InstructionCount& c) { return c.executions; },
      [](InstructionCount& c, const InstructionCount& held) {
        c.executions += held.executions;
        for (int level = 0; level < 3; ++level) c.misses[level] += held.misses[level];
      });
  h.edges_used = h.instructions_used = 0;
}

// A hash of the open segment's counts, independent of the tables' slot
// order: the sum of one hash per entry.
uint64_t ImbalanceCounts::counts_key(ThreadState& t) {
  uint64_t edges = 0;
  t.edges.for_each([&](const EdgeCount& e) {
    edges += mix(mix(mix(mix(1, e.key.from), e.key.to), e.count), e.to_instructions);
  });
  uint64_t instructions = 0;
  t.instructions.for_each([&](const InstructionCount& c) {
    instructions +=
        mix(mix(mix(mix(mix(2, c.key), c.executions), c.misses[0]), c.misses[1]), c.misses[2]);
  });
  const uint64_t key = mix(mix(edges, t.edges.size()), instructions ^ t.instructions.size());
  return key != 0 ? key : 1;
}

// Whether the open segment's counts are exactly those of `earlier`: as many
// entries, and each of its records found with the same counts.
bool ImbalanceCounts::has_counts_of(ThreadState& t, const LoggedSegment& earlier) {
  if (t.edges.size() != earlier.edges || t.instructions.size() != earlier.instructions)
    return false;
  return t.edge_log.all_of(earlier.edge_at, earlier.edges,
                           [&](const SegmentEdge& r) {
                             const EdgeCount* e = t.edges.find({r.from, r.to});
                             return e != nullptr && e->count == r.count &&
                                    e->to_instructions == r.to_instructions;
                           }) &&
         t.instruction_log.all_of(
             earlier.instruction_at, earlier.instructions, [&](const SegmentInstruction& r) {
               const InstructionCount* c = t.instructions.find(r.pc);
               return c != nullptr && c->executions == r.executions &&
                      c->misses[0] == r.l1_misses && c->misses[1] == r.l2_misses &&
                      c->misses[2] == r.llc_misses;
             });
}

void ImbalanceCounts::log_counts(ThreadState& t) {
  const uint64_t key = counts_key(t);
  const LoggedSegment* earlier = t.logged.find(key);
  if (earlier != nullptr && has_counts_of(t, *earlier)) {
    t.repeat_log.append(SegmentRepeat{t.tid, t.segment, earlier->segment});
    return;
  }
  LoggedSegment logged{key,
                       t.segment,
                       static_cast<uint32_t>(t.edges.size()),
                       static_cast<uint32_t>(t.instructions.size()),
                       t.edge_log.end(),
                       t.instruction_log.end()};
  const uint64_t dropped_before = t.edge_log.dropped() + t.instruction_log.dropped();
  t.edges.for_each([&](const EdgeCount& e) {
    t.edge_log.append(
        SegmentEdge{t.tid, t.segment, e.key.from, e.key.to, e.count, e.to_instructions});
  });
  t.instructions.for_each([&](const InstructionCount& c) {
    t.instruction_log.append(SegmentInstruction{t.tid, t.segment, c.key, c.executions, c.misses[0],
                                                c.misses[1], c.misses[2]});
  });
  // Only a segment logged whole can be repeated; the first with a key keeps it.
  if (earlier != nullptr || t.logged.size() >= kMaxLoggedSegments ||
      t.edge_log.dropped() + t.instruction_log.dropped() != dropped_before)
    return;
  if (LoggedSegment* slot = t.logged.find_or_insert(key)) *slot = logged;
}

uint64_t ImbalanceCounts::dropped() const {
  uint64_t n = 0;
  for_each_thread([&](const ThreadState& t) {
    n += t.dropped + t.edge_log.dropped() + t.instruction_log.dropped() + t.repeat_log.dropped() +
         t.weight_log.dropped();
  });
  return n;
}

uint64_t ImbalanceCounts::repeated_segments() const {
  uint64_t n = 0;
  for_each_thread([&](const ThreadState& t) { n += t.repeat_log.size(); });
  return n;
}

uint64_t ImbalanceCounts::unmeasured_segments() const {
  uint64_t n = 0;
  for_each_thread([&](const ThreadState& t) {
    t.weight_log.for_each([&](const SegmentMemoryWeight& w) { n += w.weight == 0; });
  });
  return n;
}

uint64_t ImbalanceCounts::stretched_segments() const {
  uint64_t n = 0;
  for_each_thread([&](const ThreadState& t) { n += t.stretched_segments; });
  return n;
}

}  // namespace weft
