// SampledSegments: which section instances (segments: a thread's stretch
// between two section-closing synchronization records) the analyses that
// sample them analyze in a long run: the traces, false sharing, the
// imbalance analysis' memory counts and the CRD (docs/metrics.md, "Sampled
// section instances").
//
// Every member of a team must analyze the same instances, each whole: a
// loop's schedule is recovered from all its threads' traces of one
// execution, and a line moves between two threads only if both are
// watched. So the decision is a function of what the members agree on, not
// of time or of each thread's own ordinal (the main thread closes segments
// no worker does: its thread creations, its serial code). A segment begins
// where its thread resumes (leaving a barrier, beginning an implicit task)
// or, at a close it does not wait at, at the close itself. Its key is the
// kind of that record and its object (the barrier, the outlined function),
// and for an OpenMP barrier its construct's call site too: a team has one
// barrier object for every loop of its region, and a key shared by unlike
// loops made each block of N stand for one loop picked among them (cg's 7
// loops per iteration: its CRD 2.7 points off), where a key per construct
// samples each loop's own executions. Every member runs the same outlined
// code, but not always the same copy of it: gcc gives the master its own
// copy of a barrier after a `master` block, and each branch of an `if`
// around barriers its own. The sites the members enter one barrier pass
// from are one construct (register_arrival), keyed by the first of them.
// A pthread barrier's call site is not the team's (the main thread waits
// at its own, or all call one helper), and stays out.
// Each thread counts the segments it began at each key, and the members of a
// team pass each barrier, or begin each region, equally often:
//   - no segment is sampled before some thread has run `after_blocks` basic
//     blocks (a short program is analyzed whole, its counts exact), nor
//     a key's first kFirstPasses (a loop run a few times). The first
//     thread to begin a segment at a key after the start fixes, for every
//     thread, the count the key's sampling starts from: kStartMargin past
//     its own, or kFirstPasses. Members of a team are at most one pass
//     apart at a key, so none has passed it, and all agree however far
//     apart in time they saw the start (a thread's own choice, rounded up
//     to a multiple of 8, agreed on 7 starts in 8 and analyzed 1 to 8 more
//     passes whole);
//   - past those, 1 in N: of each block of N consecutive counts, the one a
//     hash of (kind, block) picks, counted N times; the barriers of one
//     time step have the same count, so a step is analyzed whole. Where the
//     start falls inside a block, the block's remaining counts are sampled
//     alike, one of them counted as many times as they are. Past a key's
//     128N-th count the blocks grow, 64 per doubling of the counts
//     (block_of): 1 in 2N up to 256N, 1 in 4N up to 512N, and so on. A
//     spin flag's wait and release carry the flag's release number, which
//     every member shares, in place of the count.
// Segments begun at a thread creation or join, or at the end of a parallel
// region (serial code), are never sampled (never_sampled). Keys beyond
// kKeys per thread, or beyond kSharedKeys in the run, fall back to the
// thread's own ordinal.
//
// Runs at synchronization records only, never per access: each analyzer
// tests a flag in its own thread state.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>

#include "analyzers/state/paged_hash_table.h"
#include "common/analyses.h"
#include "common/run_capture.h"

namespace weft {

class SampledSegments {
 public:
  static constexpr uint64_t kDefaultAfterBlocks = uint64_t{1} << 24;
  // Where `weft record` and the runtime read another after_blocks (a knob
  // for tests; docs/metrics.md).
  static constexpr const char* kAfterBlocksVariable = "WEFT_SAMPLING_AFTER_BLOCKS";
  // Passes analyzed whole at a key after the start, counting the one that
  // saw it (members one pass behind have not reached the first sampled one).
  static constexpr uint32_t kStartMargin = 2;
  // Passes analyzed whole at every key (a loop run a few times).
  static constexpr uint32_t kFirstPasses = 8;
  static constexpr uint32_t kKeys = 16;
  static constexpr uint32_t kSharedKeys = 1024;

  struct ThreadState {
    uint32_t ordinal = 0;  // segments begun
    // The OpenMP region instance the thread runs (its implicit task's key
    // and count: the team's) and the barriers it entered in it (the team's
    // pass number; register_arrival). 0: none known.
    uint32_t region_passes = 0;
    uint64_t region = 0;
    uint32_t keys_used = 0;
    uint64_t key[kKeys] = {};
    uint32_t count[kKeys] = {};
    uint64_t from[kKeys] = {};          // the count sampling starts at (0: not yet started)
    uint32_t last_ordinal[kKeys] = {};  // the ordinal of the key's latest segment
  };

  // A segment's place among the team's: the count the decision hashes, and
  // the count below which it is analyzed regardless.
  struct Position {
    uint64_t count = 0;
    uint64_t sampled_from = ~uint64_t{0};  // ~0: not sampled yet
    uint64_t kind = 0;  // the record's kind, a spin flag's wait and release alike
    // The thread's ordinal of this segment, and of the key's previous one
    // (this one's, at a key's first or at one never sampled): where the
    // CRD's window begins (docs/metrics.md, "Long reuses").
    uint32_t ordinal = 0;
    uint32_t previous = 0;
    // A segment no sample stands for and that has no key (never_sampled).
    bool unkeyed = false;
  };

  explicit SampledSegments(uint64_t after_blocks = kDefaultAfterBlocks)
      : after_blocks_(after_blocks) {}

  // A thread closed a segment having run `blocks` basic blocks.
  void on_close(uint64_t blocks) {
    if (blocks >= after_blocks_ && !started_.load(std::memory_order_relaxed))
      started_.store(true, std::memory_order_relaxed);
  }

  // The thread begins a segment at a record of `kind` with `object` and
  // `arg1`, called from `site` (0: unknown): where it stands among the
  // team's.
  Position begin(ThreadState& t, SyncKind kind, uint64_t object, int64_t arg1, uint64_t site = 0) {
    ++t.ordinal;
    // And it takes no key.
    if (never_sampled(kind)) return {t.ordinal, ~uint64_t{0}, 0, t.ordinal, t.ordinal, true};
    const bool started = started_.load(std::memory_order_relaxed);
    if (keyed_by_call_site(kind)) object ^= hash_key(construct_of(site));
    const uint64_t key = hash_key(object ^ (uint64_t{static_cast<uint32_t>(kind)} << 56)) | 1;
    uint32_t i = 0;
    while (i < t.keys_used && t.key[i] != key) ++i;
    if (i == t.keys_used) {
      if (i == kKeys) return {t.ordinal, started ? 0 : ~uint64_t{0}, 0, t.ordinal, t.ordinal};
      t.key[i] = key;
      ++t.keys_used;
    }
    const uint32_t count = t.count[i]++;
    if (kind == SyncKind::OmpImplicitTaskBegin) {  // a region instance begins
      t.region = (key * 0x9e3779b97f4a7c15ULL + count) | 1;
      t.region_passes = 0;
    }
    Position p;
    p.ordinal = t.ordinal;
    p.previous = count == 0 ? t.ordinal : t.last_ordinal[i];
    t.last_ordinal[i] = t.ordinal;
    // A spin flag's release number is the team's own count (its releaser
    // logs a release, the others a wait).
    const bool spin = kind == SyncKind::SpinBarrier || kind == SyncKind::SpinRelease;
    p.count = spin && arg1 > 0 ? static_cast<uint64_t>(arg1) : count;
    p.kind = static_cast<uint32_t>(spin ? SyncKind::SpinBarrier : kind);
    // The team's key: a spin flag's releaser and waiters log different kinds.
    if (started && t.from[i] == 0)
      t.from[i] = team_start(hash_key(object ^ (p.kind << 56)) | 1, p.count);
    if (t.from[i] != 0) p.sampled_from = t.from[i];
    return p;
  }

  // The thread enters an OpenMP barrier called from `site` (before it
  // waits; OmpBarrierEnter). gcc may give the members of a team different
  // copies of one barrier (the master's after a `#pragma omp master`
  // block, one per branch of an `if` around barriers): sites that the
  // members of one pass of a region instance enter from are one construct,
  // and join one class, whose first site keys it (construct_of). Every
  // member enters a pass before any leaves it, so the class is whole when
  // the leaves look it up: the members count one key, alike.
  void register_arrival(ThreadState& t, uint64_t site) {
    if (t.region == 0 || site == 0) return;
    const uint64_t pass = ++t.region_passes;
    lock();
    const uint32_t here = site_index(site);
    Meeting& m = meetings_[(t.region ^ pass * 0xff51afd7ed558ccdULL) % kMeetings];
    if (m.region == t.region && m.pass == pass) {
      if (here != kNoSite && m.site != kNoSite) unite(m.site, here);
    } else {
      m = Meeting{t.region, pass, here};
    }
    unlock();
  }

  // The site that keys the construct `site` belongs to (register_arrival):
  // the first of its class, or `site` itself.
  uint64_t construct_of(uint64_t site) {
    lock();
    const uint32_t i = find_site(site);
    const uint64_t first = i == kNoSite ? site : sites_[root(i)];
    unlock();
    return first;
  }

  // Segments no sample may stand for. A thread's creations and joins are
  // one-off, each unlike the others (the main thread's own share of the
  // work often follows its last creation). The serial code after a
  // parallel region begins at the region's end, as the program's last
  // phase does (a checksum over every thread's data, its output), which a
  // sample of the region's ends dropped whole or counted 8 times; it is one
  // thread's, the others wait in the pool.
  static bool never_sampled(SyncKind kind) {
    return kind == SyncKind::ThreadCreate || kind == SyncKind::ThreadJoin ||
           kind == SyncKind::OmpParallelEnd;
  }

  // Segments whose key holds their record's call site: an OpenMP barrier's
  // (every member of the team runs the construct's outlined code). Not a
  // pthread barrier's, whose members may wait at different call sites.
  static bool keyed_by_call_site(SyncKind kind) { return kind == SyncKind::OmpBarrierLeave; }

  // For an analysis sampling 1 in `rate`, the segment at `p`: whether it is
  // analyzed, and how many events each of its events stands for.
  // `warm_up`: an analysis whose events depend on what happened before the
  // segment (false sharing: a line's last writer) also analyzes the segment
  // before each counted one, counting nothing there (weight 0), so that a
  // counted segment starts from the state the program left.
  struct Decision {
    bool analyzed = true;
    uint32_t weight = 1;
    bool operator==(const Decision&) const = default;
  };
  static Decision decide(const Position& p, uint32_t rate, bool warm_up) {
    if (rate <= 1 || p.count < p.sampled_from) return {};
    if (const uint32_t weight = stands_for(p.count, p.sampled_from, rate, p.kind))
      return {true, weight};
    return {warm_up && next_counted(p, rate), 0};
  }
  // Of a key's counts, the block `count` falls in: blocks of `rate` over
  // the first kBaseRateBlocks * rate counts, then blocks twice as large
  // each time the counts double (128N to 256N: 64 blocks of 2N; 256N to
  // 512N: 64 of 4N; ...). A run twice as long analyzes 64 more instances per
  // key, not twice as many: at a fixed rate, a long run spent a quarter of
  // its passes analyzed whole (each counted pass and its warm-up), five
  // times as costly as a skipped one. 64 per doubling, not 8: with 8, a
  // loop of 10,000 unlike passes (a barrier per grid row) kept 87 of them
  // and its CRD came out 6.7 points off (docs/performance.md).
  struct Block {
    uint64_t first = 0;
    uint64_t size = 0;
  };
  static Block block_of(uint64_t count, uint64_t rate) {
    uint64_t start = kBaseRateBlocks * rate;
    if (count < start) return {count / rate * rate, rate};
    uint64_t size = 2 * rate;
    while (count / 2 >= start) {
      start *= 2;
      size *= 2;
    }
    return {start + (count - start) / size * size, size};
  }
  // Whether the key's next pass after `p` is counted by an analysis
  // sampling 1 in `rate` (analyzed whole, or the one of its block that
  // stands for the others): `p` is then its warm-up.
  static bool next_counted(const Position& p, uint32_t rate) {
    return rate <= 1 || p.count + 1 < p.sampled_from ||
           stands_for(p.count + 1, p.sampled_from, rate, p.kind) != 0;
  }
  // How many counts the count at or past `from` stands for: of each block
  // (block_of; its part from `from` on, where the start falls inside it),
  // the one at a place a hash of (block, kind) picks stands for all of
  // them; every other count, for none (0). One per block, not a coin per
  // count: a coin selected 2 of 32 passes where 4 stood for them, and the
  // estimates came out 25-40% low on a 40-step run; the hash keeps the
  // choice from following a period of the program's own (two alternating
  // phases).
  static uint32_t stands_for(uint64_t count, uint64_t from, uint32_t rate, uint64_t kind) {
    const Block block = block_of(count, rate);
    const uint64_t first = std::max(block.first, from);
    const uint64_t counts = block.first + block.size - first;
    const uint64_t pick = first + (sample_hash(block.first / rate ^ (kind << 40)) >> 32) % counts;
    return count == pick ? static_cast<uint32_t>(counts) : 0;
  }

 private:
  // The count sampling starts from at `key`, the same for every thread:
  // the first to ask fixes it at kStartMargin past its own count, or at
  // kFirstPasses. Runs once per thread and key, at a synchronization record.
  uint64_t team_start(uint64_t key, uint64_t count) {
    const uint64_t own = std::max<uint64_t>(count + kStartMargin, kFirstPasses);
    for (uint32_t probe = 0; probe < kSharedKeys; ++probe) {
      SharedStart& slot = shared_[(key + probe) % kSharedKeys];
      uint64_t held = slot.key.load(std::memory_order_acquire);
      if (held == 0 && slot.key.compare_exchange_strong(held, key, std::memory_order_acq_rel)) {
        slot.from.store(own, std::memory_order_release);
        return own;
      }
      if (held != key) continue;
      uint64_t from;
      while ((from = slot.from.load(std::memory_order_acquire)) == 0) std::this_thread::yield();
      return from;
    }
    return own;  // the table is full: this thread's own choice
  }

  struct SharedStart {
    std::atomic<uint64_t> key{0};
    std::atomic<uint64_t> from{0};  // 0 until the first asker stored it
  };

  // Barrier sites and their classes (register_arrival), under lock_: a
  // few per program, at synchronization records only.
  static constexpr uint32_t kSites = 256;
  static constexpr uint32_t kNoSite = ~uint32_t{0};
  static constexpr uint32_t kMeetings = 256;
  struct Meeting {
    uint64_t region = 0;
    uint64_t pass = 0;
    uint32_t site = kNoSite;  // the first arrival's, an index into sites_
  };
  void lock() {
    while (lock_.test_and_set(std::memory_order_acquire)) std::this_thread::yield();
  }
  void unlock() { lock_.clear(std::memory_order_release); }
  // The index of `site` (kNoSite: not registered).
  uint32_t find_site(uint64_t site) const {
    for (uint32_t i = 0; i < sites_used_; ++i)
      if (sites_[i] == site) return i;
    return kNoSite;
  }
  // The index of `site`, added when new (kNoSite: the table is full).
  uint32_t site_index(uint64_t site) {
    if (const uint32_t i = find_site(site); i != kNoSite) return i;
    if (sites_used_ == kSites) return kNoSite;
    sites_[sites_used_] = site;
    parents_[sites_used_] = sites_used_;
    return sites_used_++;
  }
  uint32_t root(uint32_t i) const {
    while (parents_[i] != i) i = parents_[i];
    return i;
  }
  // The two sites' classes become one, rooted at the site seen first (the
  // lower index): a copy met later joins the construct's key without
  // changing it, so the counts the members kept under it go on.
  void unite(uint32_t x, uint32_t y) {
    const uint32_t a = root(x), b = root(y);
    if (a != b) parents_[std::max(a, b)] = std::min(a, b);
  }

  uint64_t after_blocks_;
  std::atomic<bool> started_{false};
  SharedStart shared_[kSharedKeys];
  std::atomic_flag lock_ = ATOMIC_FLAG_INIT;
  uint64_t sites_[kSites] = {};
  uint32_t parents_[kSites] = {};
  uint32_t sites_used_ = 0;
  Meeting meetings_[kMeetings];
};

}  // namespace weft
