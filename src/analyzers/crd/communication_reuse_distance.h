// Communication reuse distance (docs/metrics.md, "CRD"): for each ordered pair
// (writer i, reader j), the communication events of that pair (true
// communication and reuse alike) form one whole-run trace of granules; the
// distance of an event is the number of distinct granules in that trace since
// the previous event on the same granule.
//
// Every event of pair (i, j) is detected by the reader j (counts are made at
// the read), so pair (i, j)'s trace is a subsequence of j's own accesses, in
// j's program order: each reader owns its pairs' state and updates it without
// synchronization.
//
// A pair's state is a PairReuseTrace: the last event time of each granule,
// and a Fenwick tree over event times with a mark at each granule's latest
// event. The distance of an event on granule g is the number of marks after
// g's previous time, i.e. the distinct granules seen since: O(log n) exact.
// When the times run out of room the marks are renumbered densely, so a
// pair's memory is proportional to its distinct granules, not to the length
// of the run (bound: kBytesPerGranuleBound per distinct granule), and can be
// capped: a pair that reaches `max_granules_per_pair` distinct granules stops
// measuring, its later events are counted as unmeasured (exact up to the cap,
// with the remainder reported).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "analyzers/state/paged_hash_table.h"

namespace weft {

// One pair's trace of granules, with exact distances.
class PairReuseTrace {
 public:
  static constexpr uint64_t kFirstEvent = ~uint64_t{0};      // the granule's first event
  static constexpr uint64_t kUnmeasured = ~uint64_t{0} - 1;  // the pair was capped
  static constexpr uint64_t kOutOfMemory = ~uint64_t{0} - 2;
  // Worst case, per distinct granule: a time slot and a tree node for up to
  // 4 slots (8 + 4 bytes each) and a hash slot at load >= 1/4 (16 bytes each).
  static constexpr size_t kBytesPerGranuleBound = 4 * (8 + 4) + 4 * 16;
  static constexpr uint64_t kInitialSlots = 256;

  explicit PairReuseTrace(uint64_t max_granules) : max_granules_(max_granules) {}
  ~PairReuseTrace();
  PairReuseTrace(const PairReuseTrace&) = delete;
  PairReuseTrace& operator=(const PairReuseTrace&) = delete;

  // Appends one event on `granule` (any value but ~0) and returns its
  // distance, or kFirstEvent, kUnmeasured, kOutOfMemory.
  uint64_t record(uint64_t granule);

  uint64_t distinct_granules() const { return distinct_; }
  bool capped() const { return capped_; }
  size_t memory_bytes() const;

 private:
  struct GranuleTime {
    uint64_t key = 0;  // granule + 1
    uint64_t time = 0;
  };

  // Number of marks at times [0, time].
  uint64_t marks_through(uint64_t time) const;
  void add_mark(uint64_t time, int32_t delta);
  // Renumbers the live marks 0..distinct-1 in time order, into room for at
  // least twice as many.
  bool compact();
  void release_slots();

  uint64_t max_granules_;  // 0: no cap
  uint64_t slots_ = 0;     // times available before the next compaction
  uint64_t now_ = 0;       // the next event's time
  uint64_t distinct_ = 0;  // marks in the tree
  uint64_t last_key_ = 0;  // granule + 1 of the latest event
  bool capped_ = false;
  uint32_t* tree_ = nullptr;        // Fenwick tree, 1-based, slots_ + 1 entries
  uint64_t* granule_at_ = nullptr;  // [time] granule + 1 whose latest event is at time, else 0
  PagedHashTable<GranuleTime> last_time_;
};

// The distances one reader measured, per (instruction, writer, distance).
struct PcWriterDistanceCount {
  struct Key {
    uint64_t pc_writer = 0;  // (pc << 16) | writer
    uint64_t distance = 0;
    bool operator==(const Key&) const = default;
  };
  Key key;
  uint64_t count = 0;
};

inline size_t hash_key(const PcWriterDistanceCount::Key& key) {
  return hash_key(key.pc_writer ^ (key.distance * 0x9e3779b97f4a7c15ULL));
}

struct CrdConfig {
  unsigned max_threads = 1024;
  uint64_t max_granules_per_pair = uint64_t{1} << 20;  // 0: no cap
};

class CommunicationReuseDistance {
 public:
  // One reader's pairs (indexed by writer) and its distance counts.
  struct ReaderState {
    ~ReaderState() { release(pairs, pair_slots * sizeof(PairReuseTrace*)); }  // not the pairs
    uint32_t tid = 0;
    unsigned pair_slots = 0;
    PairReuseTrace** pairs = nullptr;  // [pair_slots], created on a writer's first event
    PagedHashTable<PcWriterDistanceCount> distances;
    uint64_t dropped = 0;  // events lost to memory exhaustion
  };

  // One row of the results: `count` events of pair (writer, reader) at `pc`
  // had this distance (kUnmeasured for events of a capped pair).
  struct Record {
    uint64_t pc;
    uint32_t reader;
    uint32_t writer;
    uint64_t distance;
    uint64_t count;
  };

  explicit CommunicationReuseDistance(const CrdConfig& config);
  ~CommunicationReuseDistance();
  CommunicationReuseDistance(const CommunicationReuseDistance&) = delete;
  CommunicationReuseDistance& operator=(const CommunicationReuseDistance&) = delete;

  const CrdConfig& config() const { return config_; }

  // The state of reader `tid`, created on first call; nullptr beyond max_threads.
  ReaderState* attach(uint32_t tid);

  // One communication event (true or reuse) of pair (writer, reader) on
  // `granule` (an address >> granularity), read at `pc`. First events have
  // no distance and are not recorded. Returns the distance (or one of
  // PairReuseTrace's kFirstEvent, kUnmeasured, kOutOfMemory).
  uint64_t on_event(ReaderState& reader, uint64_t pc, uint32_t writer, uint64_t granule) {
    PairReuseTrace* pair = reader.pairs[writer];
    if (__builtin_expect(pair == nullptr, 0)) pair = create_pair(reader, writer);
    const uint64_t distance = pair ? pair->record(granule) : PairReuseTrace::kOutOfMemory;
    if (distance == PairReuseTrace::kFirstEvent) return distance;
    if (distance == PairReuseTrace::kOutOfMemory) {
      ++reader.dropped;
      return distance;
    }
    PcWriterDistanceCount* c = reader.distances.find_or_insert({(pc << 16) | writer, distance});
    if (c)
      ++c->count;
    else
      ++reader.dropped;
    return distance;
  }

  // The count of events of pair (writer, reader) at `pc` with `distance`
  // (created at 0 if absent, for a caller that counts a repeat of an event
  // just recorded); nullptr when out of memory.
  uint64_t* count_of(ReaderState& reader, uint64_t pc, uint32_t writer, uint64_t distance) {
    PcWriterDistanceCount* c = reader.distances.find_or_insert({(pc << 16) | writer, distance});
    return c ? &c->count : nullptr;
  }

  // Visits every recorded distance count. Call when no reader is updating.
  template <class Visitor>
  void for_each_distance(Visitor&& visit) const {
    for (unsigned tid = 0; tid < config_.max_threads; ++tid) {
      const ReaderState* r = readers_[tid].load(std::memory_order_acquire);
      if (!r) continue;
      r->distances.for_each([&](const PcWriterDistanceCount& c) {
        visit(Record{c.key.pc_writer >> 16, tid, static_cast<uint32_t>(c.key.pc_writer & 0xffff),
                     c.key.distance, c.count});
      });
    }
  }

  uint64_t dropped() const;
  // Pairs that reached the cap.
  uint64_t capped_pairs() const;
  // Memory held by all pairs' traces now.
  size_t memory_bytes() const;

 private:
  PairReuseTrace* create_pair(ReaderState& reader, uint32_t writer);

  CrdConfig config_;
  std::atomic<ReaderState*>* readers_;
};

}  // namespace weft
