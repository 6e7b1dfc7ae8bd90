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
//
// Word distances (docs/metrics.md, "Median CRD of the line visits"): beside
// the granule trace each pair keeps a trace of 8-byte words, sampled
// spatially: of each granule, the one word a hash of the granule picks
// (SampledWord). An event on that word also goes to the pair's second
// PairReuseTrace, keyed by the granule (one word per granule), and its
// distance, in sampled words, is counted with kWordDistance set. Every word is
// sampled with probability 8 / granularity, so the views scale distances and
// counts back by granularity / 8 (fixed-rate SHARDS). It is shown as an
// estimate, not concluded from: a hot word weighs 8x or nothing by the luck
// of the sample. One more trace update on one event in eight, never on the
// repeats the communication fast path skips.
//
// Communication epochs (docs/metrics.md, "CRR"): the CRR of a region divides
// its reuses by the true communications of the data it read, wherever their
// first read happened. Each granule of a pair's line trace also holds its
// current epoch (from the reader's true communication of a write to the
// next): the set of instructions that read it and the set of sites of the
// closed parallel sections that read it, interned in the reader's ReuseSets,
// and the reader's section of its latest read. A true communication starts
// an epoch; a reuse adds its instruction (and, in a section after the last
// one, that section's site) to the sets. Each set counts the epochs that
// ended with it; the profile builder turns sets into regions. The reuse
// memo of the communication fast path only skips reads that add nothing
// (the same instruction, granule and section as the event just recorded).
#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>

#include "analyzers/crd/crd_records.h"
#include "analyzers/crd/reuse_sets.h"
#include "analyzers/state/paged_hash_table.h"
#include "common/analyses.h"

namespace weft {

// What the reuse-distance analyzer keeps per granule of a pair, beside its
// time: the granule's current communication epoch.
struct GranuleEpoch {
  uint32_t code = ReuseSets::kNone;     // set of reading instructions; kNone: not tracked
  uint32_t section = ReuseSets::kNone;  // set of closed sections' sites; kNone: none closed yet
  // The reader's section at its latest read (below ReaderState::kMaxSections).
  uint32_t ordinal : 26 = 0;
  // What the epoch stands for, from the section instance it began in
  // (CommunicationReuseDistance::instance_weight): an epoch that began in a
  // sampled instance stands for the epochs of the instances it was chosen
  // for, whenever it ends.
  uint32_t instance_class : 6 = 0;
};

// Whether a trace sampled at rate 2^-shift holds `granule` (fixed-size
// SHARDS: the granules whose hash has its top `shift` bits clear): the reuse
// analysis' threads (the CRD's samples nest, below).
// The hash is sample_hash (a full finalizer): the tables' one-round hash_key
// keeps its top bits alike over runs of tens of neighbouring granules, which
// would take or leave whole stretches of an array together.
inline bool granule_in_sample(uint64_t granule, unsigned shift) {
  return shift == 0 || (sample_hash(granule) >> (64 - shift)) == 0;
}

// The CRD's samples of granules: its line traces' (SHARDS, docs/metrics.md
// "Sampled CRD") and its long-reuse sample ("Long reuses"). Granule g is in
// one at rate 2^-shift when `g * kCrdSampleHash <= crd_sample_limit(shift)`:
// one multiply, which the communication fast path pays on a reuse to send
// the long sample's granules to the slow path in every segment. A
// multiplicative (Weyl) hash spreads neighbouring granules evenly over the
// range (no runs of in or out, as a one-round hash had). One hash for both
// samples nests them: the long sample, at a rate no higher than the line
// traces' when it begins from them mid-run (begin_long_sample), keeps only
// granules whose history the line traces hold, so none of its granules'
// next reads is taken for a first read.
inline constexpr uint64_t kCrdSampleHash = 0xd6e8feb86659fd93ULL;
inline constexpr uint64_t crd_sample_limit(unsigned shift) {
  return shift == 0 ? ~uint64_t{0} : (uint64_t{1} << (64 - shift)) - 1;
}
inline bool granule_in_crd_sample(uint64_t granule, unsigned shift) {
  return granule * kCrdSampleHash <= crd_sample_limit(shift);
}

// A reader's serials number the stretches of its section instances: a
// segment's serial is its ordinal times 2^kCrdStretchSerialBits plus the
// stretch (docs/metrics.md, "Stretches of long instances").
inline constexpr unsigned kCrdStretchSerialBits = 12;

// One pair's trace of granules, with exact distances.
class PairReuseTrace {
 public:
  static constexpr uint64_t kFirstEvent = ~uint64_t{0};      // the granule's first event
  static constexpr uint64_t kUnmeasured = ~uint64_t{0} - 1;  // the pair was capped
  static constexpr uint64_t kOutOfMemory = ~uint64_t{0} - 2;
  // Worst case, per distinct granule: a time slot and a tree node for up to
  // 4 slots (8 + 4 bytes each) and a hash slot at load >= 1/4 (24 bytes each).
  static constexpr size_t kBytesPerGranuleBound = 4 * (8 + 4) + 4 * 24;
  static constexpr uint64_t kInitialSlots = 32;
  // Times are 32-bit: a pair stops (as if capped) before 2^31 granules.
  static constexpr uint64_t kMaxDistinct = (uint64_t{1} << 31) - 1;

  // Its table starts small and packed (PagedHashTable::start_small): a live
  // reader keeps a pair per writer it read, exited writers included.
  explicit PairReuseTrace(uint64_t max_granules) : max_granules_(max_granules) {
    last_time_.start_small();
  }
  ~PairReuseTrace();
  PairReuseTrace(const PairReuseTrace&) = delete;
  PairReuseTrace& operator=(const PairReuseTrace&) = delete;

  // Appends one event on `granule` (any value but ~0) and returns its
  // distance, or kFirstEvent, kUnmeasured, kOutOfMemory. The event that caps
  // the pair returns kUnmeasured and leaves the granules' epochs to visit
  // until release_capped() (or the next record()) frees them.
  uint64_t record(uint64_t granule);

  // The epoch of the granule of the latest record(), after it returned a
  // distance or kFirstEvent.
  GranuleEpoch& last_epoch() { return last_entry_->epoch; }
  // Every granule's epoch (until a capped pair is released).
  template <class Visit>
  void for_each_epoch(Visit&& visit) const {
    last_time_.for_each([&](const GranuleTime& g) { visit(g.epoch); });
  }
  // Frees a capped pair's state; nothing otherwise.
  void release_capped();

  // Forgets every granule `keep(granule)` rejects, with its epoch (a
  // sampled trace whose rate was lowered). False when out of memory: the
  // pair is then capped and released.
  template <class Keep>
  bool retain(Keep&& keep) {
    if (capped_ || tree_ == nullptr) return true;
    uint64_t evicted_count = 0;
    for (uint64_t time = 0; time < now_; ++time) {
      const uint64_t key = granule_at_[time];
      if (key == 0 || keep(key - 1)) continue;
      granule_at_[time] = 0;
      ++evicted_count;
    }
    if (evicted_count == 0) return true;
    distinct_ -= evicted_count;
    return drop_unmarked_entries();
  }

  // The pair's latest distinct granules, the latest first, whether traced or
  // not: an event closer than kSize has its exact distance here, its
  // position (a sampled trace sees too few granules to tell short distances).
  struct RecentGranules {
    static constexpr unsigned kSize = 64;
    uint64_t keys[kSize] = {};  // granule + 1; 0: empty
    // The position of `granule` (kSize when absent), which moves to the front.
    unsigned visit(uint64_t granule) {
      const uint64_t key = granule + 1;
      unsigned at = 0;
      while (at < kSize && keys[at] != key) ++at;
      __builtin_memmove(keys + 1, keys, (at < kSize ? at : kSize - 1) * sizeof(uint64_t));
      keys[0] = key;
      return at;
    }
  };
  // RecentGranules::visit on the pair's recent granules, made on first use
  // (only a sampled trace uses them: an exact pair, and a pair of an exited
  // writer never sampled, do without their 512 bytes); kSize when out of
  // memory.
  unsigned visit_recent(uint64_t granule) {
    RecentGranules* recent = recent_or_made();
    return recent ? recent->visit(granule) : RecentGranules::kSize;
  }
  // The recent granules' keys (granule + 1, the latest first), nullptr
  // before the first visit_recent.
  uint64_t* recent_keys() { return recent_ ? recent_->keys : nullptr; }
  // Fills the recent granules from the trace, exact while it traced every
  // granule (when sampling starts).
  void fill_recent() {
    RecentGranules* recent = recent_or_made();
    if (!recent) return;
    unsigned n = 0;
    for (uint64_t time = now_; time > 0 && n < RecentGranules::kSize && granule_at_; --time)
      if (const uint64_t key = granule_at_[time - 1]) recent->keys[n++] = key;
  }

  // Windows (docs/metrics.md, "Long reuses"): the reader numbers its
  // segments (serials), and asks whether the previous event of a granule
  // came at or after a given segment began. The trace keeps the time of its
  // first event in each of its latest kSegmentStarts segments.
  static constexpr unsigned kSegmentStarts = 16;
  // The next events are in segment `serial` (not below the latest one), and
  // the window asked about begins at segment `from` (at most `serial`).
  // `recent_from`: the first segment of the current run of traced ones. On
  // the first event of a segment after one before it, the recent granules
  // (which miss the untraced segments between) are emptied.
  void enter_segment(uint64_t serial, uint64_t from, uint64_t recent_from = 0) {
    if (starts_ != 0 && start_serial_[(starts_ - 1) % kSegmentStarts] == serial) return;
    if (recent_ && (starts_ == 0 || start_serial_[(starts_ - 1) % kSegmentStarts] < recent_from))
      __builtin_memset(recent_->keys, 0, sizeof(recent_->keys));
    if (starts_ == 0 || (start_serial_[(starts_ - 1) % kSegmentStarts] >> kCrdStretchSerialBits) !=
                            (serial >> kCrdStretchSerialBits)) {
      instance_serial_[instance_starts_ % kSegmentStarts] = serial;
      instance_time_[instance_starts_ % kSegmentStarts] = static_cast<uint32_t>(now_);
      ++instance_starts_;
    }
    start_serial_[starts_ % kSegmentStarts] = serial;
    start_time_[starts_ % kSegmentStarts] = static_cast<uint32_t>(now_);
    ++starts_;
    window_time_ = start_of(from);
    run_time_ = start_of(std::max(from, recent_from));
  }
  // Whether the granule of the latest record() that returned a distance
  // had its previous event in the window (enter_segment), and in the window's
  // part since the current run of traced segments began.
  bool previous_in_window() const { return previous_time_ >= window_time_; }
  bool previous_in_run() const { return previous_time_ >= run_time_; }
  // Visits the traced granules, the one whose latest event is oldest first,
  // and the segment starts among them: visit(granule) and start(serial)
  // before the first granule at or after that segment's start.
  template <class Visit, class Start>
  void for_each_in_order(Visit&& visit, Start&& start) const {
    uint32_t next = starts_ > kSegmentStarts ? starts_ - kSegmentStarts : 0;
    for (uint64_t time = 0; time < now_ && granule_at_; ++time) {
      for (; next < starts_ && start_time_[next % kSegmentStarts] <= time; ++next)
        start(start_serial_[next % kSegmentStarts]);
      if (const uint64_t key = granule_at_[time]) visit(key - 1);
    }
    for (; next < starts_; ++next) start(start_serial_[next % kSegmentStarts]);
  }

  uint64_t distinct_granules() const { return distinct_; }
  bool capped() const { return capped_; }
  size_t memory_bytes() const;

 private:
  struct GranuleTime {
    uint64_t key = 0;  // granule + 1
    uint32_t time = 0;
    GranuleEpoch epoch;
  };

  // The time of the trace's first event at or after segment `from` began
  // (now when none): the oldest start kept when the segments before it
  // were forgotten, which takes fewer events for the window's. The
  // instances' first starts are kept apart from the latest segments': a
  // window begins at an instance (the loop's previous execution), and an
  // instance cut into stretches pushed it out of the latest segments' ring
  // (the window then began at a late stretch of that execution, and its
  // early reads counted as from before the window).
  uint64_t start_of(uint64_t from) const {
    const auto first_at_or_after = [from](const uint64_t* serials, const uint32_t* times,
                                          uint32_t pushed, uint64_t none) -> uint64_t {
      for (uint32_t i = pushed > kSegmentStarts ? pushed - kSegmentStarts : 0; i < pushed; ++i)
        if (serials[i % kSegmentStarts] >= from) return times[i % kSegmentStarts];
      return none;
    };
    return std::min(first_at_or_after(start_serial_, start_time_, starts_, now_),
                    first_at_or_after(instance_serial_, instance_time_, instance_starts_, now_));
  }
  // Number of marks at times [0, time].
  uint64_t marks_through(uint64_t time) const;
  void add_mark(uint64_t time, int32_t delta);
  // Renumbers the live marks 0..distinct-1 in time order, into room for at
  // least twice as many.
  bool compact();
  // After marks were cleared: the entries without a mark go, and the rest
  // are renumbered.
  bool drop_unmarked_entries();
  void release_slots();

  uint64_t max_granules_;              // 0: no cap
  uint64_t slots_ = 0;                 // times available before the next compaction
  uint64_t now_ = 0;                   // the next event's time
  uint64_t distinct_ = 0;              // marks in the tree
  uint64_t last_key_ = 0;              // granule + 1 of the latest event
  GranuleTime* last_entry_ = nullptr;  // its entry (entries move only on an insert)
  bool capped_ = false;
  bool released_ = false;           // capped, and its state freed
  uint32_t* tree_ = nullptr;        // Fenwick tree, 1-based, slots_ + 1 entries
  uint64_t* granule_at_ = nullptr;  // [time] granule + 1 whose latest event is at time, else 0
  // Keyed by granule: a loop's granules change at every event, so two
  // recent entries (the latest) are as good as many.
  PagedHashTable<GranuleTime, 2> last_time_;
  // The segments' starts (enter_segment), a ring of the latest ones; the
  // window's start, and the previous time of the latest record()'s granule.
  uint64_t start_serial_[kSegmentStarts] = {};
  uint32_t start_time_[kSegmentStarts] = {};
  uint32_t starts_ = 0;  // starts pushed
  // The first start of each of the latest instances (serials that differ
  // above their stretch bits).
  uint64_t instance_serial_[kSegmentStarts] = {};
  uint32_t instance_time_[kSegmentStarts] = {};
  uint32_t instance_starts_ = 0;
  uint64_t window_time_ = 0;
  uint64_t run_time_ = 0;
  uint64_t previous_time_ = 0;
  // recent_, made now if it was not (nullptr when out of memory).
  RecentGranules* recent_or_made();

  RecentGranules* recent_ = nullptr;  // packed memory, made on first use
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

// Which 8-byte word of each granule the word trace samples: a hash of the
// granule picks one of its `granularity / 8` words (all granules have one).
struct SampledWord {
  unsigned word_bits = 3;  // log2 of the words per granule; 0: no word trace

  explicit SampledWord(unsigned granularity_log2 = 6)
      : word_bits(granularity_log2 > kWordBytesLog2 ? granularity_log2 - kWordBytesLog2 : 0) {}
  // The offset (in words) of the sampled word of `granule`.
  uint64_t offset(uint64_t granule) const {
    return word_bits ? (granule * 0x9e3779b97f4a7c15ULL) >> (64 - word_bits) : 0;
  }
  // The word offset of `addr` inside its granule.
  uint64_t offset_of(uintptr_t addr) const {
    return (addr >> kWordBytesLog2) & ((uint64_t{1} << word_bits) - 1);
  }
  bool sampled(uintptr_t addr, uint64_t granule) const {
    return word_bits != 0 && offset_of(addr) == offset(granule);
  }
};

// Where a reader stands in its open section instance (stretches,
// CommunicationReuseDistance::next_stretch).
enum class StretchPhase : uint8_t { kNone, kWhole, kWarmUp, kCounted, kSkipped };

struct CrdConfig {
  unsigned max_threads = 1024;
  uint64_t max_granules_per_pair = uint64_t{1} << 20;  // 0: no cap
  // Granules a reader traces over all its pairs before its sampling rate
  // halves (fixed-size SHARDS); 0: every granule traced (exact).
  uint64_t sample_granules = 0;
  // In a long run, the CRD of 1 in this many section instances (each event
  // counting as many), the instance before each traced uncounted
  // (docs/metrics.md, "Sampled section instances"); 1: every instance.
  uint32_t segment_sampling = 1;
  // With segment_sampling > 1: granules a reader's long-reuse sample traces
  // (in every instance) before its rate halves; 0: every granule.
  uint64_t long_sample_granules = 0;
  // With segment_sampling > 1: a reader's long analyzed instance is
  // sampled in time past its first kWholeCycles cycles of this many
  // communication reads (docs/metrics.md, "Stretches of long instances");
  // 0: every analyzed instance whole.
  uint64_t stretch_events = 0;
};

class CommunicationReuseDistance {
 public:
  // An epoch whose latest read was in the open section, ended by a true
  // communication: `count` epochs of `writer` with section set `set`, which
  // gain the open section's site when it closes.
  struct OpenEpochEnds {
    uint64_t key = 0;  // kOpenEnd | writer << 32 | set
    uint64_t count = 0;
  };

  // One reader's pairs (indexed by writer), its distance counts and its
  // communication epochs' sets.
  struct ReaderState {
    ~ReaderState() {                                             // not the pairs
      release(pairs, 3 * pair_slots * sizeof(PairReuseTrace*));  // word_pairs, long_pairs too
      release(sites, site_capacity * sizeof(uint64_t));
    }
    uint32_t tid = 0;
    unsigned pair_slots = 0;
    // [pair_slots], created on a writer's first event; word_pairs likewise,
    // on its first event on a sampled word, long_pairs once the long-reuse
    // sample began (one mapping: word_pairs and long_pairs follow pairs).
    PairReuseTrace** pairs = nullptr;
    PairReuseTrace** word_pairs = nullptr;
    PairReuseTrace** long_pairs = nullptr;
    // Per (instruction, writer, distance), on the slow path only (the reuse
    // memo holds the entries of distances 0 and 1).
    PagedHashTable<PcWriterDistanceCount, 16> distances;
    ReuseSets code_sets;     // tags: reading instructions
    ReuseSets section_sets;  // tags: sites that closed the reader's sections
    PagedHashTable<OpenEpochEnds, kFewRecentEntries> open_ends;  // at epoch ends
    uint64_t* sites = nullptr;  // [site_capacity]: the site that closed section k
    uint32_t site_capacity = 0;
    uint32_t ordinal = 0;  // the open section: how many closed before it
    // Sections numbered at most; past them, the next sections' events join
    // the last one's (as when the sites cannot grow). An epoch keeps the
    // ordinal in 26 bits.
    static constexpr uint32_t kMaxSections = uint32_t{1} << 25;
    uint64_t dropped = 0;  // events lost to memory exhaustion
    // Sampling: the granules whose hash has its top `sample_shift` bits
    // clear are traced (rate 2^-sample_shift); `traced` counts them, over
    // the line traces of all pairs.
    unsigned sample_shift = 0;
    uint64_t traced = 0;
    // Section-instance sampling (docs/metrics.md, "Sampled section
    // instances"): what each event of the open instance stands for (the
    // rate for a sampled instance, 0 in the warm-up instance before it,
    // which is traced but not counted; 1 before sampling began), and the
    // instances whose events the reader did not see at all.
    uint64_t instance_weight = 1;
    uint64_t skipped_segments = 0;
    // Long reuses (docs/metrics.md, "Long reuses"), once an instance was
    // sampled: the open segment's serial, the serial its window begins at
    // (the same loop's previous execution), the first serial of the
    // current run of traced segments, and the long-reuse sample (rate
    // 2^-long_shift, `long_traced` granules over the long pairs).
    // Serials number stretches (below): a segment's is its ordinal times
    // kStretchesPerSegment.
    bool long_sample = false;
    uint64_t segment = 0;
    uint64_t window_from = 0;
    uint64_t traced_from = 0;
    unsigned long_shift = 0;
    uint64_t long_traced = 0;
    uint64_t long_budget = ~uint64_t{0};
    // Stretches of the open instance (docs/metrics.md, "Stretches of long
    // instances"), measured on the reader's clock (its communication reads
    // since the instance began, which the communication analyzer counts):
    // the phase of the one open, the instance's serial and weight, the
    // stretches begun in it, and the current cycle's length and planned end.
    StretchPhase phase = StretchPhase::kNone;  // set by sample_segment
    uint64_t instance_serial = 0;
    uint64_t analyzed_weight = 0;
    uint32_t stretch = 0;
    uint32_t cycles = 0;
    uint64_t cycle_events = 0;
    uint64_t cycle_end = 0;
    uint64_t skipped_stretches = 0;  // over the run
  };

  // Stretches: an instance's first kWholeCycles cycles' worth of events are
  // analyzed whole; then each cycle of `stretch_events` reads is a warm-up
  // of 1/kStretchRate of it (traced, not counted), a counted stretch of as
  // many (each event standing for kStretchRate times the instance's
  // weight), and the rest skipped. The cycle doubles every
  // kCyclesPerDoubling cycles; past the serials an instance has room for,
  // the rest of it is analyzed whole.
  static constexpr uint32_t kStretchRate = kCrdStretchRate;
  // 16 (a million reads at the default): the long-reuse sample, which
  // begins at a reader's first skipped stretch, nests in the line traces'
  // sample (granule_in_crd_sample), so a mid-run start loses no re-read
  // (docs/metrics.md, "Stretches of long instances").
  static constexpr uint32_t kWholeCycles = kCrdWholeStretchCycles;
  static constexpr uint32_t kCyclesPerDoubling = 256;
  static constexpr unsigned kStretchSerialBits = kCrdStretchSerialBits;
  static constexpr uint64_t kStretchesPerSegment = uint64_t{1} << kStretchSerialBits;
  static constexpr uint64_t kNoStretch = ~uint64_t{0};

  // A reader's next section instance (CaptureSession::begin_segment): its
  // events stand for `weight` each (0: traced, not counted); `analyzed`
  // false: the reader sees none of them (the communication analyzer keeps
  // them from it).
  // `serial`: the reader's count of segments, `window_from` the serial of the
  // same loop's previous execution (the window, docs/metrics.md "Long
  // reuses"). The long-reuse sample begins with the first segment, or
  // stretch (enter_stretch), that is not analyzed whole at weight 1.
  // Returns the reader's clock at which the instance's second stretch
  // begins (next_stretch), kNoStretch when it has none.
  uint64_t sample_segment(ReaderState& reader, bool analyzed, uint64_t weight, uint32_t serial,
                          uint32_t window_from) {
    reader.skipped_segments += !analyzed;
    reader.instance_serial = uint64_t{serial} << kStretchSerialBits;
    reader.window_from = std::min(window_from, serial) * kStretchesPerSegment;
    reader.analyzed_weight = weight;
    reader.stretch = 0;
    reader.cycles = 0;
    reader.cycle_events = config_.stretch_events;
    enter_stretch(reader, analyzed, weight);
    const bool stretched = analyzed && config_.stretch_events != 0 && config_.segment_sampling > 1;
    reader.phase = stretched ? StretchPhase::kWhole : StretchPhase::kNone;
    return stretched ? kWholeCycles * config_.stretch_events : kNoStretch;
  }
  // The reader's clock reached the end of its open stretch (the value
  // sample_segment or the previous next_stretch returned): the next one
  // begins. Returns where it ends (kNoStretch: at the instance's end);
  // `analyzed` says whether the CRD sees its events.
  uint64_t next_stretch(ReaderState& reader, uint64_t clock, bool& analyzed);
  // What the communication fast path compares a reused granule's long
  // hash with (granule_in_crd_sample): 0 (no granule but 0) before the
  // long sample began.
  static uint64_t long_limit(const ReaderState& reader) {
    return reader.long_sample ? crd_sample_limit(reader.long_shift) : 0;
  }

  // One row of the results: `count` events of pair (writer, reader) at `pc`
  // had this distance (kUnmeasured for events of a capped pair; with
  // kWordDistance set, a distance of the sampled word trace).
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

  // The granule of the events (its producer's): CommunicationAnalyzer::connect
  // sets it, before any event.
  void set_granularity_log2(unsigned granularity_log2) {
    granularity_log2_ = granularity_log2;
    sampled_word_ = SampledWord(granularity_log2);
  }

  // The state of reader `tid`, created on first call; nullptr beyond max_threads.
  ReaderState* attach(uint32_t tid);

  // The distances of one event: the line trace's, and the word trace's when
  // the event read the granule's sampled word (else kFirstEvent).
  struct EventDistances {
    uint64_t line = PairReuseTrace::kFirstEvent;
    uint64_t word = PairReuseTrace::kFirstEvent;
    // The events this one stands for (a sampled granule: 2^shift; times the
    // section instance's weight; 0 in a warm-up instance).
    uint64_t weight = 1;
  };

  // One communication event of pair (writer, reader) at `addr` (the first
  // byte read in the granule), read at `pc`: a true communication (the
  // first read of the write, which starts an epoch) or a reuse. First
  // events have no distance and are not recorded. Returns the distances (or
  // PairReuseTrace's kFirstEvent, kUnmeasured, kOutOfMemory); once the
  // reader samples, kFirstEvent also for an event it does not measure.
  EventDistances on_event(ReaderState& reader, uint64_t pc, uint32_t writer, uintptr_t addr,
                          bool true_communication) {
    const uint64_t granule = addr >> granularity_log2_;
    if (__builtin_expect(reader.long_sample, 0))
      return on_windowed_event(reader, pc, writer, addr, granule, true_communication);
    if (__builtin_expect(reader.sample_shift != 0, 0))
      return on_sampled_event(reader, pc, writer, addr, granule, true_communication);
    EventDistances out;
    out.weight = reader.instance_weight;
    out.line = PairReuseTrace::kOutOfMemory;
    if (PairReuseTrace* pair = pair_of(reader, TraceKind::kLine, writer)) {
      // The segments' starts, for the long sample to begin from.
      if (config_.segment_sampling > 1) pair->enter_segment(reader.segment, reader.segment);
      out.line = record(reader, *pair, granule);
    }
    after_line_event(reader, writer, pc, true_communication, out.line, 1);
    count(reader, pc, writer, out.line, 0, out.weight);
    if (out.line != PairReuseTrace::kUnmeasured) trace_word(reader, pc, writer, addr, granule, out);
    if (__builtin_expect(reader.traced > sample_budget_, 0)) lower_rate(reader);
    return out;
  }

  // An event of a segment the CRD skips (the communication analyzer sends
  // those of the long sample's granules): the long sample's only.
  EventDistances on_skipped_event(ReaderState& reader, uint64_t pc, uint32_t writer,
                                  uintptr_t addr) {
    EventDistances out;
    out.weight = 0;
    long_event(reader, pc, writer, addr >> granularity_log2_, kNotCounted, out);
    if (reader.long_traced > reader.long_budget) lower_long_rate(reader);
    return out;
  }

  // Reader `tid` exited (its last section closed): its epochs end, and its
  // traces go; it keeps its results (distances and sets). A later event of
  // the same thread starts fresh traces.
  void finish_reader(uint32_t tid);
  // After finish_reader: what reader `tid` keeps moves into packed memory of
  // its size (what an exited thread keeps, docs/performance.md).
  void compact_reader(uint32_t tid);

  // The reader's open section closed at `site` (its next events are in the
  // next section). SectionAttribution names sections the same way.
  void close_section(ReaderState& reader, uint64_t site);

  const SampledWord& sampled_word() const { return sampled_word_; }

  // The count of events of pair (writer, reader) at `pc` with `distance`
  // (created at 0 if absent, for a caller that counts a repeat of an event
  // just recorded); nullptr when out of memory.
  uint64_t* count_of(ReaderState& reader, uint64_t pc, uint32_t writer, uint64_t distance) {
    PcWriterDistanceCount* c = reader.distances.find_or_insert({(pc << 16) | writer, distance});
    return c ? &c->count : nullptr;
  }

  // The recent granules of pair (writer, reader) (keys: granule + 1, the
  // latest first; maintained while the reader samples), nullptr before the
  // pair's first event. Valid until the reader's finish_reader.
  uint64_t* recent_granules(ReaderState& reader, uint32_t writer) {
    if (writer >= reader.pair_slots || reader.pairs[writer] == nullptr) return nullptr;
    return reader.pairs[writer]->recent_keys();
  }

  // Visits every recorded distance count. Call when no reader is updating.
  template <class Visitor>
  void for_each_distance(Visitor&& visit) const {
    for (unsigned tid = 0; tid < config_.max_threads; ++tid) {
      const ReaderState* r = readers_[tid].load(std::memory_order_acquire);
      if (!r) continue;
      r->distances.for_each([&](const PcWriterDistanceCount& c) {
        // Made ready by the reuse memo and never used, or counted in warm-up
        // instances only (weight 0): no row.
        if (c.count == 0) return;
        visit(Record{c.key.pc_writer >> 16, tid, static_cast<uint32_t>(c.key.pc_writer & 0xffff),
                     c.key.distance, c.count});
      });
    }
  }

  // Visits every set of every reader (the epochs' sets, docs/metrics.md
  // "CRR"), with the epochs that ended there; the epochs still going on end
  // here, at the site that closed their latest section. Call when no reader
  // is updating, after every reader's sections closed. Adds sets (so it is
  // not const) but no counts: calling it twice visits the same.
  template <class Visitor>
  void for_each_reuse_set(Visitor&& visit);

  uint64_t dropped() const;
  // Pairs that reached the cap.
  uint64_t capped_pairs() const;
  // The lowest sampling rate of any reader, as its shift (0: exact).
  unsigned max_sample_shift() const;
  // The lowest rate of any reader's long-reuse sample, as its shift.
  unsigned max_long_shift() const;
  // Section instances readers did not see (sample_segment), over all readers.
  uint64_t skipped_segments() const;
  // Stretches of analyzed instances readers skipped (next_stretch).
  uint64_t skipped_stretches() const;
  // Memory held by all pairs' traces now.
  size_t memory_bytes() const;

 private:
  // A reader's traces of a pair: of lines, of sampled words, of the
  // long-reuse sample's lines.
  enum class TraceKind { kLine, kWord, kLong };
  // `writer`'s trace of that kind, created on its first event; nullptr
  // (counted as dropped) when out of memory.
  PairReuseTrace* pair_of(ReaderState& reader, TraceKind kind, uint32_t writer) {
    if (__builtin_expect(writer >= reader.pair_slots, 0) && !grow_pairs(reader, writer)) {
      ++reader.dropped;
      return nullptr;
    }
    PairReuseTrace** pairs = kind == TraceKind::kLine   ? reader.pairs
                             : kind == TraceKind::kWord ? reader.word_pairs
                                                        : reader.long_pairs;
    PairReuseTrace* pair = pairs[writer];
    if (__builtin_expect(pair == nullptr, 0)) {
      // A word trace holds at most one word per granule of its line trace,
      // whose cap stops both; the long sample is bounded by its budget.
      pair =
          create_pair(pairs, writer, kind == TraceKind::kLine ? config_.max_granules_per_pair : 0);
      if (!pair) ++reader.dropped;
    }
    return pair;
  }
  static uint64_t record(ReaderState& reader, PairReuseTrace& pair, uint64_t granule) {
    const uint64_t distance = pair.record(granule);
    if (distance == PairReuseTrace::kOutOfMemory) ++reader.dropped;
    return distance;
  }
  // After a line-trace event that returned `traced`: the granule's epoch
  // (standing for `weight` epochs at the rate of the sample of granules,
  // times its instance's weight), the traced count, or the capped pair's
  // epochs ending.
  void after_line_event(ReaderState& reader, uint32_t writer, uint64_t pc, bool true_communication,
                        uint64_t traced, uint64_t weight) {
    if (traced < PairReuseTrace::kOutOfMemory || traced == PairReuseTrace::kFirstEvent) {
      track_epoch(reader, writer, pc, true_communication, weight);
      if (traced == PairReuseTrace::kFirstEvent) ++reader.traced;
    } else if (traced == PairReuseTrace::kUnmeasured) {
      stop_epochs(reader, writer);
    }
  }
  // The word trace's event when `addr` is its granule's sampled word: its
  // distance and count scaled by the reader's rate.
  void trace_word(ReaderState& reader, uint64_t pc, uint32_t writer, uintptr_t addr,
                  uint64_t granule, EventDistances& out) {
    if (!sampled_word_.sampled(addr, granule)) return;
    PairReuseTrace* pair = pair_of(reader, TraceKind::kWord, writer);
    const uint64_t word = pair ? record(reader, *pair, granule) : PairReuseTrace::kOutOfMemory;
    const unsigned shift = reader.sample_shift;
    out.word = word < PairReuseTrace::kOutOfMemory ? word << shift : word;
    count(reader, pc, writer, out.word, kWordDistance, reader.instance_weight << shift);
  }
  // Counts `weight` events at `distance` (of the trace `unit` says); a
  // capped line trace's events are counted once, as unmeasured lines.
  void count(ReaderState& reader, uint64_t pc, uint32_t writer, uint64_t distance, uint64_t unit,
             uint64_t weight) {
    if (distance == PairReuseTrace::kFirstEvent || distance == PairReuseTrace::kOutOfMemory ||
        weight == 0)
      return;
    const uint64_t key = distance == PairReuseTrace::kUnmeasured ? distance : distance | unit;
    PcWriterDistanceCount* c = reader.distances.find_or_insert({(pc << 16) | writer, key});
    if (c)
      c->count += weight;
    else
      ++reader.dropped;
  }
  // The epoch of the granule just traced: a true communication starts one,
  // a reuse joins a tracked one.
  void track_epoch(ReaderState& reader, uint32_t writer, uint64_t pc, bool true_communication,
                   uint64_t weight) {
    GranuleEpoch& epoch = reader.pairs[writer]->last_epoch();
    if (true_communication)
      start_epoch(reader, writer, pc, epoch, weight);
    else if (epoch.code != ReuseSets::kNone)
      reuse_in_epoch(reader, writer, pc, epoch);
  }
  EventDistances on_sampled_event(ReaderState& reader, uint64_t pc, uint32_t writer, uintptr_t addr,
                                  uint64_t granule, bool true_communication);
  // on_event once the long sample began: the instance's traces count the
  // events whose previous one on the granule is in the window, the long
  // sample the others.
  EventDistances on_windowed_event(ReaderState& reader, uint64_t pc, uint32_t writer,
                                   uintptr_t addr, uint64_t granule, bool true_communication);
  // What the instance's traces did with an event: counted it, left it to
  // their sample of granules if in the window's traced part (the granule is
  // not in it), or neither (a skipped instance; a previous event before the
  // window, or before an untraced segment that broke it).
  enum InstanceCount { kCounted, kEstimated, kNotCounted };
  // The long sample's part of an event on `granule` (nothing when the
  // granule is not in it): traced, and, unless the instance's traces
  // count it, counted into `out`: at the sample's rate when its previous
  // event came before the window, also at the instance's weight when in
  // the window (a window that an untraced segment broke).
  void long_event(ReaderState& reader, uint64_t pc, uint32_t writer, uint64_t granule,
                  InstanceCount instance, EventDistances& out);
  // Stretch `reader.stretch` of the open instance begins: what sample_segment
  // did for a whole instance, for its part.
  void enter_stretch(ReaderState& reader, bool analyzed, uint64_t weight) {
    const uint64_t serial = reader.instance_serial | reader.stretch;
    reader.instance_weight = analyzed ? weight : 0;
    reader.segment = serial;
    if (!analyzed) reader.traced_from = serial + 1;
    if (!reader.long_sample && config_.segment_sampling > 1 && (!analyzed || weight != 1))
      begin_long_sample(reader);
  }
  // The long sample begins: its traces start from the line traces' granules
  // (in their order, with their segments' starts).
  void begin_long_sample(ReaderState& reader);
  // Halves the long sample's rate until it fits its budget.
  void lower_long_rate(ReaderState& reader);
  // Halves the reader's rate until its traced granules fit the budget; the
  // granules leaving the sample end their epochs.
  void lower_rate(ReaderState& reader);
  // What both rates' lowering does: raises `shift` until the granules the
  // reader's `pairs` trace (`traced`) fit `budget`, each pair keeping those
  // `in_sample(granule, shift)` holds; `before(writer, shift, keep)` runs
  // for each writer before its pair is cut.
  template <class InSample, class Before>
  static void lower_until_fits(const ReaderState& reader, PairReuseTrace** pairs, unsigned& shift,
                               uint64_t& traced, uint64_t budget, InSample in_sample,
                               Before before) {
    while (traced > budget && shift < 48) {
      const unsigned at = ++shift;
      auto keep = [&](uint64_t granule) { return in_sample(granule, at); };
      traced = 0;
      for (uint32_t writer = 0; writer < reader.pair_slots; ++writer) {
        before(writer, at, keep);
        if (PairReuseTrace* pair = pairs[writer]) {
          pair->retain(keep);
          traced += pair->capped() ? 0 : pair->distinct_granules();
        }
      }
    }
  }
  // Room in the reader's pair arrays for `writer` (they grow with the
  // writers a reader meets, not with --max-threads: 16 bytes per writer).
  bool grow_pairs(ReaderState& reader, uint32_t writer);
  PairReuseTrace* create_pair(PairReuseTrace** pairs, uint32_t writer, uint64_t cap);

  static constexpr uint32_t kLostSet = ~uint32_t{0};  // a section set that could not be kept
  static constexpr uint64_t kOpenEnd = uint64_t{1} << 63;

  // A true communication of `writer`'s data at `pc`: the granule's previous
  // epoch ends (standing for `weight` epochs), a new one starts with the
  // sets {pc} and none.
  void start_epoch(ReaderState& reader, uint32_t writer, uint64_t pc, GranuleEpoch& epoch,
                   uint64_t weight) {
    if (epoch.code != ReuseSets::kNone) end_epoch(reader, writer, epoch, weight);
    epoch.code = reader.code_sets.root(writer, pc);
    epoch.section = ReuseSets::kNone;
    epoch.ordinal = reader.ordinal;
    epoch.instance_class = instance_class(reader.instance_weight);
  }
  // The instance weight an epoch keeps from where it began, in six bits: 1
  // (before sampling; class 0), 0 (a warm-up instance; kWarmUpClass), or
  // the sampling rate N times 2^k (a sampled instance; class k + 1: a
  // block's size, which doubles as a long run goes on; a start's partial
  // block, smaller, is kept as the next size down, N at least).
  static constexpr uint32_t kWarmUpClass = 63;
  uint32_t instance_class(uint64_t weight) const {
    if (weight <= 1) return weight == 1 ? 0 : kWarmUpClass;
    const uint64_t blocks = std::max<uint64_t>(weight / config_.segment_sampling, 1);
    return std::min<uint32_t>(std::bit_width(blocks), kWarmUpClass - 1);
  }
  uint64_t instance_weight(const GranuleEpoch& epoch) const {
    if (epoch.instance_class == 0) return 1;
    if (epoch.instance_class == kWarmUpClass) return 0;
    return uint64_t{config_.segment_sampling} << (epoch.instance_class - 1);
  }
  // A reuse at `pc` of a tracked epoch: `pc` joins its instructions, and the
  // section of its previous read, when closed since, its sections.
  void reuse_in_epoch(ReaderState& reader, uint32_t writer, uint64_t pc, GranuleEpoch& epoch) {
    epoch.code = reader.code_sets.add(epoch.code, pc);
    if (epoch.ordinal != reader.ordinal) {
      epoch.section = with_site(reader, writer, epoch.section, reader.sites[epoch.ordinal]);
      epoch.ordinal = reader.ordinal;
    }
  }
  // `set` of `writer` with `site`: the root {site} for kNone.
  uint32_t with_site(ReaderState& reader, uint32_t writer, uint32_t set, uint64_t site) {
    if (set == kLostSet) return set;
    const uint32_t grown = reader.section_sets.extend(writer, set, site);
    return grown == ReuseSets::kNone ? kLostSet : grown;
  }
  // The epoch ends, standing for `weight` epochs (at the sample of
  // granules' rate) times its instance's weight: its code set counts them,
  // and its section set, which gains its latest section, now if that
  // section is closed, else when it closes.
  void end_epoch(ReaderState& reader, uint32_t writer, const GranuleEpoch& epoch, uint64_t weight);
  // A pair reached its cap (its granules are released): its epochs end.
  void stop_epochs(ReaderState& reader, uint32_t writer);

  CrdConfig config_;
  uint64_t sample_budget_;  // config_.sample_granules, or no limit
  unsigned granularity_log2_ = 6;
  SampledWord sampled_word_;
  std::atomic<ReaderState*>* readers_;
};

template <class Visitor>
void CommunicationReuseDistance::for_each_reuse_set(Visitor&& visit) {
  struct LiveEnds {
    uint64_t key = 0;  // kind << 32 | set
    uint64_t count = 0;
  };
  for (unsigned tid = 0; tid < config_.max_threads; ++tid) {
    ReaderState* r = readers_[tid].load(std::memory_order_acquire);
    if (!r) continue;
    // The epochs still going on end here: in their code set, and in their
    // section set with their latest section, when closed.
    const uint64_t weight = uint64_t{1} << r->sample_shift;
    PagedHashTable<LiveEnds> live;
    auto add_live = [&](uint32_t kind, uint32_t set, uint64_t epochs) {
      if (LiveEnds* l = live.find_or_insert(uint64_t{kind} << 32 | set))
        l->count += weight * epochs;
    };
    for (unsigned writer = 0; writer < r->pair_slots; ++writer) {
      const PairReuseTrace* pair = r->pairs[writer];
      if (!pair) continue;
      pair->for_each_epoch([&](const GranuleEpoch& e) {
        if (e.code == ReuseSets::kNone) return;
        const uint64_t epochs = instance_weight(e);
        if (epochs == 0) return;
        add_live(kReuseSetCode, e.code, epochs);
        if (e.ordinal >= r->ordinal) return;
        const uint32_t set = with_site(*r, writer, e.section, r->sites[e.ordinal]);
        if (set != kLostSet) add_live(kReuseSetSection, set, epochs);
      });
    }
    auto emit = [&](const ReuseSets& sets, uint32_t kind) {
      for (uint32_t id = 1; id <= sets.size(); ++id) {
        const ReuseSets::Node& n = sets.node(id);
        const LiveEnds* l = live.find(uint64_t{kind} << 32 | id);
        visit(ReuseSetNode{tid, n.writer, id, n.parent, n.tag, n.count + (l ? l->count : 0), kind,
                           0});
      }
    };
    emit(r->code_sets, kReuseSetCode);
    emit(r->section_sets, kReuseSetSection);
  }
}

}  // namespace weft
