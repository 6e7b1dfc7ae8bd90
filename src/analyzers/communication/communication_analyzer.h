// CommunicationAnalyzer: exact inter-thread communication (docs/metrics.md,
// "Communication (RaW)"): per granule the last writer W and the set R of
// threads that read it since; a read by t != W counts raw[W][t] the first
// time (t joins R) and rar[W][t] after. A write resets R and, optionally,
// counts one invalidation per thread that held a copy.
//
// The state of a granule is one 64-bit shadow word, updated lock-free with
// compare-and-swap, so concurrent threads are counted exactly (in the order
// their updates reach the word):
//
//   bits  0..15  writer id + 1 (0: never written)
//   bits 16..61  readers: a bitset of thread ids 0..45 ("inline"), or, with
//                kExtended set: bits 16..60 the index of a reader set of
//                max_threads bits and bit 61 (kHasReaders) set when that
//                set is not empty
//   bit  62      kLocked: the word's reader set is being changed
//   bit  63      kExtended
//
// A granule switches to an extended ReaderSet the first time a thread with
// id >= 46 reads it; only those granules pay for the lock bit. This keeps
// COMPROF's single-word fast path without its ~58-thread limit.
//
// Counts are kept per reading (or, for invalidations, writing) thread in a
// PcPeerCounters table keyed by (instruction, peer), so the per-region
// matrices are built after the run from the instructions' regions.
//
// The analyzer is also the producer of the events two other analyzers
// consume, when connected: every communication event (true or reuse) goes to
// CommunicationReuseDistance, every count (with its distance) to
// SectionAttribution, and every slow-path access to SharingFootprint.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "analyzers/communication/communication_records.h"
#include "analyzers/communication/pc_peer_counters.h"
#include "analyzers/crd/communication_reuse_distance.h"
#include "analyzers/footprint/sharing_footprint.h"
#include "analyzers/sections/section_attribution.h"
#include "analyzers/state/per_thread_slot.h"
#include "analyzers/state/shadow_memory.h"
#include "common/run_capture.h"

namespace weft {

struct CommunicationConfig {
  unsigned granularity = 64;    // bytes, power of two in [1, 4096]
  unsigned max_threads = 1024;  // ids beyond this are refused by attach()
  bool count_invalidations = true;
};

// Bitsets of max_threads bits for granules read by threads with high ids.
class ReaderSetPool {
 public:
  ReaderSetPool(unsigned max_threads, size_t capacity_bytes);
  ~ReaderSetPool();
  ReaderSetPool(const ReaderSetPool&) = delete;
  ReaderSetPool& operator=(const ReaderSetPool&) = delete;

  static constexpr uint64_t kNone = ~uint64_t{0};
  uint64_t allocate();  // kNone when exhausted
  uint64_t* set(uint64_t index) { return words_ + index * words_per_set_; }
  unsigned words_per_set() const { return words_per_set_; }

 private:
  unsigned words_per_set_;
  uint64_t capacity_sets_;
  size_t bytes_;
  uint64_t* words_;
  std::atomic<uint64_t> next_{0};
};

class CommunicationAnalyzer {
 public:
  static constexpr uint64_t kNoGranule = ~uint64_t{0};  // ThreadState::crd_long_latest
  static constexpr unsigned kInlineReaders = 46;
  static constexpr uint64_t kWriterMask = 0xffff;
  static constexpr unsigned kReaderShift = 16;
  static constexpr uint64_t kReaderMask = ((uint64_t{1} << kInlineReaders) - 1) << kReaderShift;
  static constexpr uint64_t kHasReaders = uint64_t{1} << 61;
  static constexpr uint64_t kIndexMask = ((uint64_t{1} << 45) - 1) << kReaderShift;
  static constexpr uint64_t kLocked = uint64_t{1} << 62;
  static constexpr uint64_t kExtended = uint64_t{1} << 63;
  static constexpr unsigned kMaxThreadsLimit = 65534;
  // A writer tag no shadow word holds: writer bits are at most 0xffff, and a
  // word is all ones only with writer 0xffff, beyond kMaxThreadsLimit.
  static constexpr uint64_t kRetiredTag = ~uint64_t{0};

  // A reuse a thread counted, so that the fast path can count the next one
  // like it without the tables: the same instruction reading data of the
  // same writer again (and, when CRD runs, the same granule again: distance
  // 0, which leaves the pair's trace as it is). `counters` point at the
  // entries the slow path incremented: the reuse count, the open section's
  // reuse count, and with CRD the two distance-0 counts (null when absent).
  // Emptied (writer_tag 0) before anything may move those entries.
  // With CRD, a read of the granule's sampled word is an event of the word
  // trace too, which the memo does not count: it is left to the slow path.
  // A thread keeps kReuseMemos of them: a loop that reads two arrays of one
  // writer in turn (a distance, a dot product) alternates two instructions,
  // and one entry would miss on every read. Without CRD (place_reuse) the
  // entries stay in the order of their use, the most used first, where the
  // fast path's scan begins; a new entry takes an empty one, else one no
  // read hit while kStaleMemoEvents others were made (an earlier loop's),
  // else the one made last if no read hit it since, else the one idle
  // longest. A loop body that reads more instructions' worth of other
  // threads' data than there are entries then keeps most of them: evicting
  // the oldest, as before, evicted each before its next read
  // (streamcluster's gain loop, 11 such instructions, missed on all 11).
  // With CRD an entry is one pair's (writer's) latest granule, and the
  // pair's event before it may stay as a second entry: another event of the
  // pair changes the pair's latest granule, and with it every other entry's
  // distance. A re-read of the latest granule is distance 0; of the second
  // (an entry with `recent`), distance 1, and the two trade places, in the
  // memo and in the pair's recent granules
  // (CommunicationReuseDistance::recent_granules).
  // When the event before was another pair's, the second entry keeps that
  // pair's latest granule instead, as a repeat at distance 0 only (no
  // `recent`): the event changed its own pair's trace, not that one's.
  // Only a granule outside the reader's CRD sample may be the second: a
  // sampled granule's event changes the pair's trace, which only the slow
  // path updates. A loop that reads a point and a centre in turn (both the
  // main thread's) alternates two granules of one pair, and without the
  // second entry every read would go through the slow path.
  // Eight: a CSR product reads a row pointer, a value, a column index and
  // the vector (two writers' halves), besides the structure's pointers the
  // main thread wrote (measured: 4 entries missed there, 8 took a third off
  // the recording of bench/kernels/cg_spmv_omp.c). The fast path scans only
  // the keys (ReuseMemoKey: two cache lines for all eight).
  static constexpr unsigned kReuseMemos = 8;
  // With CRD: the pair's latest granule and its second latest.
  static constexpr unsigned kCrdReuseMemos = 2;
  struct ReuseMemoKey {
    uint64_t writer_tag = 0;  // 0: empty
    uint64_t pc = 0;
  };
  struct ReuseMemo {
    uint64_t writer_tag = 0;  // 0: nothing to remember (the key's tag is what read_fast sees)
    uint64_t pc = 0;
    uint64_t granule = 0;
    uint64_t granule_mask = 0;  // ~0 when the granule must match, else 0
    uint64_t word_mask = 0;     // (addr >> kWordBytesLog2) & word_mask == sampled_word: not here
    uint64_t sampled_word = 1;
    uint64_t* counters[4] = {};
    // With CRD: the distance-1 counts (the CRD's, the open section's) of a
    // re-read while the entry is the pair's second granule, and the pair's
    // recent granules; null `recent`: the entry never alternates.
    uint64_t* second_counters[2] = {};
    uint64_t* recent = nullptr;
    // Hits the fast path counted and `counters` do not hold yet: one
    // increment per hit instead of four, added by settle_reuses before
    // anything reads or moves the counters (forget_reuses, settle_all).
    uint64_t pending = 0;
    // Without CRD, what place_reuse keeps or evicts an entry by: its use
    // (hits, less an eighth each time another entry is made), the entries
    // made since its last hit, and whether a read hit it since it was made.
    // The entry's, not its event's: a new event of the same entry keeps it.
    struct Standing {
      uint32_t use = 0;
      uint8_t idle = 0;
      bool hit = false;
    } standing;
  };
  // A thread's latest communication event that went to the CRD: the pair
  // (writer_tag), instruction and granule, for the slow path to tell which
  // entry may become the second. A memo hit's event is its entry's.
  struct LatestCrdEvent {
    uint64_t writer_tag = 0;  // 0: none known
    uint64_t pc = 0;
    uint64_t granule = 0;
  };

  // Everything one thread owns: its counters and a reentrancy flag (a signal
  // handler running instrumented code must not touch a table mid-update).
  struct ThreadState {
    // What the fast path reads comes first: the tag, the granule size and
    // the shadow chunks this thread used last.
    uint64_t writer_tag = 0;  // tid + 1
    unsigned granularity_log2 = 6;
    uint32_t tid = 0;
    // 0 when a read of a never-written granule is local (no footprint to
    // touch), else a word that never occurs (kRetiredTag).
    uint64_t unwritten_word = 0;
    ShadowChunkCache chunks;  // of the analyzer's shadow
    // The latest reuses, the latest first: the keys the fast path compares,
    // and what each one counts (reuse_memo[i] belongs to reuse_keys[i]).
    ReuseMemoKey reuse_keys[kReuseMemos];
    ReuseMemo reuse_memo[kReuseMemos];
    // With CRD: which of entries 0 and 1 holds the pair's latest granule
    // (the other, its second latest); 0 without CRD.
    unsigned crd_front = 0;
    // With CRD, whether the memo pays (crd_memo_pays): set by a hit of the
    // second entry (alternate()); the pauses in a row; the idle score;
    // events left that build no entry.
    // (In the padding before latest_crd_event: the inline layout's sizes
    // stay.)
    uint8_t crd_alternated : 1 = 0;
    uint8_t crd_memo_pauses : 7 = 0;  // pauses since the score was last 0
    uint8_t crd_memo_idle = 0;
    uint16_t crd_memo_pause = 0;
    // The latest CRD event when the front entry is empty.
    LatestCrdEvent latest_crd_event;
    uint64_t reader_bit = 0;  // inline reader bit, 0 if tid >= kInlineReaders
    volatile int busy = 0;
    uint8_t memo_newest = 0;  // without CRD, the entry made last (in busy's padding)
    uint64_t dropped = 0;
    PcPeerCounters counts;
    // The thread's CRD state when CRD runs (connected), while the open
    // section instance is one the CRD analyzes (sample_crd_segment); null
    // otherwise, and then the thread counts as without CRD.
    CommunicationReuseDistance::ReaderState* distances = nullptr;
    CommunicationReuseDistance::ReaderState* crd_reader = nullptr;  // when connected
    // A reuse of a granule whose long hash is at most this goes to the slow
    // path, in every segment: the CRD's long-reuse sample sees all its
    // events (CommunicationReuseDistance::long_limit; 0: none but 0).
    uint64_t crd_long_limit = 0;
    // In a stretch or instance the CRD skips, the long sample's latest
    // granule when the thread's latest slow-path event recorded it there
    // (kNoGranule otherwise): a repeat of it changes no distance (they
    // count distinct granules, and none came between), so read_fast lets
    // the memo decide it. A line read word by word took every word to the
    // slow path where the long sample holds every granule (a working set
    // under its budget: `ring_pthreads`' reads, 5 times communication's
    // own cost).
    uint64_t crd_long_latest = kNoGranule;
    SectionAttribution::ThreadState* sections = nullptr;  // when connected
    uint64_t footprint_tag = 0;
    // With CRD, the reader's clock: its communication reads (slow-path
    // events, the memo's hits) since its section instance began, and where
    // the instance's open stretch ends on it (next_crd_stretch; kNoStretch:
    // at the instance's end).
    uint64_t crd_clock = 0;
    uint64_t crd_stretch_end = CommunicationReuseDistance::kNoStretch;
  };

  explicit CommunicationAnalyzer(const CommunicationConfig& config);
  ~CommunicationAnalyzer();
  CommunicationAnalyzer(const CommunicationAnalyzer&) = delete;
  CommunicationAnalyzer& operator=(const CommunicationAnalyzer&) = delete;

  const CommunicationConfig& config() const { return config_; }

  // Feeds the consumers of communication events (any may be null). Call
  // before the first attach().
  void connect(CommunicationReuseDistance* distances, SharingFootprint* footprint,
               SectionAttribution* sections = nullptr) {
    distances_ = distances;
    footprint_ = footprint;
    sections_ = sections;
    if (distances_) distances_->set_granularity_log2(granularity_log2_);
  }

  // Thread `t` reached a synchronization point that closes its current
  // parallel section (see SectionAttribution; the reuse distances' epochs
  // note the section too).
  void close_section(ThreadState& t, uint64_t site) {
    if ((!t.sections && !t.crd_reader) || t.busy) return;
    t.busy = 1;
    forget_reuses(t);  // the open section's entries are emptied
    std::atomic_signal_fence(std::memory_order_seq_cst);
    if (t.sections) sections_->close(*t.sections, site);
    // Sampled out or not, the reader numbers every section (its epochs name
    // the sections that read them).
    if (t.crd_reader) distances_->close_section(*t.crd_reader, site);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    t.busy = 0;
  }

  // The state of thread `tid`, created on first call; nullptr when tid is
  // beyond max_threads. Thread-safe.
  ThreadState* attach(uint32_t tid);

  // The thread begins a section instance the CRD analyzes (`analyzed`: its
  // events go to the CRD, each standing for `weight`, 0 in a warm-up
  // instance) or not (the thread counts as without CRD until the next
  // one). Settles the memo first: its entries belong to the other mode or
  // weight. Docs/metrics.md, "Sampled section instances".
  // `serial` and `window_from`: CommunicationReuseDistance::sample_segment.
  void sample_crd_segment(ThreadState& t, bool analyzed, uint64_t weight, uint32_t serial,
                          uint32_t window_from) {
    if (!t.crd_reader || t.busy) return;
    CommunicationReuseDistance::ReaderState* distances = analyzed ? t.crd_reader : nullptr;
    t.busy = 1;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    // With the long sample, a segment's first read of each granule goes to
    // the CRD, which tells from it which segment read the granule last.
    if (distances != t.distances || (analyzed ? weight : 0) != t.crd_reader->instance_weight ||
        t.crd_reader->long_sample) {
      forget_reuses(t);  // settled at the weight they were counted at
      t.crd_front = 0;
      t.latest_crd_event = {};
      t.distances = distances;
    }
    t.crd_stretch_end =
        distances_->sample_segment(*t.crd_reader, analyzed, weight, serial, window_from);
    t.crd_clock = 0;
    t.crd_long_limit = CommunicationReuseDistance::long_limit(*t.crd_reader);
    t.crd_long_latest = kNoGranule;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    t.busy = 0;
  }

  // The thread exited (its last section closed): its counts and those of
  // its CRD and section states move into packed memory of their size (what
  // an exited thread keeps, docs/performance.md). Not while it is busy.
  void finish_thread(ThreadState& t) {
    forget_reuses(t);  // their counters point into the tables that move
    t.counts.shrink_to_fit();
    if (t.sections) SectionAttribution::finish_thread(*t.sections);
  }

  // The fast paths: an access inside one granule whose shadow word says
  // "this thread wrote it last" (a private re-read or re-write) is decided
  // from the thread's own state and one shadow word, without the analyzer
  // object, so an event source can inline them into its hooks. False means
  // "not decided here": call read() or write().
  // A read is decided here when it is local, or when it repeats one of the
  // thread's latest reuses (ReuseMemo), which it then counts.
  // Always inline: it is the hooks' per-access path (a call would cost the
  // hook a frame of its own).
  __attribute__((always_inline)) static bool read_fast(ThreadState& t, uint64_t pc, uintptr_t addr,
                                                       size_t size) {
    const int decided = read_fast_or_alternation(t, pc, addr, size);
    if (decided == kReadNotDecided) return false;
    return decided == kReadDecided || alternate(t, static_cast<unsigned>(decided));
  }

  // Whether the CRD's long-reuse sample holds `granule` (every reuse of it
  // goes to the slow path; crd_long_limit).
  __attribute__((always_inline)) static bool in_long_sample(const ThreadState& t,
                                                            uint64_t granule) {
    return granule * kCrdSampleHash <= t.crd_long_limit;
  }

  // read_fast without its one call: kReadDecided, kReadNotDecided, or the
  // memo entry whose alternation (alternate(t, entry)) decides the read. An
  // inline caller that goes on after a decided read (the hooks' composed
  // path) calls alternate itself, in a tail position, so that its fast path
  // saves no registers.
  static constexpr int kReadDecided = -1;
  static constexpr int kReadNotDecided = -2;
  __attribute__((always_inline)) static int read_fast_or_alternation(ThreadState& t, uint64_t pc,
                                                                     uintptr_t addr, size_t size) {
    const unsigned g = t.granularity_log2;
    if (__builtin_expect(((addr ^ (addr + size - 1)) >> g) != 0, 0)) return kReadNotDecided;
    const std::atomic<uint64_t>* word;
    if (__builtin_expect(!ShadowMemory::find_cached(t.chunks, g, addr, word), 0))
      return kReadNotDecided;
    const uint64_t w = word->load(std::memory_order_relaxed);
    if ((w & kWriterMask) == t.writer_tag || w == t.unwritten_word) return kReadDecided;
    if ((w & (kExtended | kLocked)) || !(w & t.reader_bit)) return kReadNotDecided;
    if (__builtin_expect(in_long_sample(t, addr >> g), 0) && (addr >> g) != t.crd_long_latest)
      return kReadNotDecided;
    for (unsigned i = 0; i < kReuseMemos; ++i) {
      if ((w & kWriterMask) != t.reuse_keys[i].writer_tag || pc != t.reuse_keys[i].pc) continue;
      ReuseMemo& m = t.reuse_memo[i];
      if ((((addr >> g) ^ m.granule) & m.granule_mask) ||
          ((addr >> kWordBytesLog2) & m.word_mask) == m.sampled_word)
        continue;  // the pair's other entry may hold this granule
      if (__builtin_expect(m.recent != nullptr, 0) && i != t.crd_front) return static_cast<int>(i);
      ++m.pending;
      return kReadDecided;
    }
    return kReadNotDecided;
  }

  // A re-read of the pair's second latest granule (with CRD, entry `i`, the
  // one of entries 0 and 1 that is not crd_front): distance 1, and the two
  // granules trade places (the entries stay where they are: the front moves).
  // Out of line: only a sampled CRD's reads come here.
  __attribute__((noinline)) static bool alternate(ThreadState& t, unsigned i) {
    if (t.busy) return false;
    t.busy = 1;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    ReuseMemo& m = t.reuse_memo[i];
    t.crd_alternated = 1;
    ++t.crd_clock;
    for (uint64_t* c : {m.counters[0], m.counters[1]})
      if (c) ++*c;
    for (uint64_t* c : m.second_counters)  // distances: the instance's weight each
      if (c) *c += t.crd_reader->instance_weight;
    std::swap(m.recent[0], m.recent[1]);
    const unsigned previous = t.crd_front;
    t.crd_front = i;
    // A sampled granule's re-read, now at distance 1, is the slow path's.
    if (!t.reuse_memo[previous].recent) t.reuse_keys[previous].writer_tag = 0;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    t.busy = 0;
    return true;
  }

  // Adds the hits the thread's memo holds to their counters (ReuseMemo::
  // pending). Every entry, whatever its tag: an entry a tag no longer names
  // keeps valid counters until forget_reuses, which settles first.
  // `live`: the entries that may hold hits (kCrdReuseMemos while the
  // thread's CRD is on, ThreadState::distances).
  static void settle_reuses(ThreadState& t, unsigned live = kReuseMemos) {
    // counters[0] and [1] count reuses, [2] and [3] (set only with CRD)
    // distances, each standing for the instance's weight.
    const uint64_t weight = t.crd_reader ? t.crd_reader->instance_weight : 1;
    for (unsigned e = 0; e < live; ++e) {
      ReuseMemo& m = t.reuse_memo[e];
      if (m.pending == 0) continue;
      t.crd_clock += m.pending;
      for (unsigned i = 0; i < 4; ++i)
        if (uint64_t* c = m.counters[i]) *c += i < 2 ? m.pending : m.pending * weight;
      m.pending = 0;
    }
  }
  // settle_reuses for every thread: before the counts are read (the
  // capture's writer). Call when no thread is counting; a thread still in
  // its fast path may lose the hit it is counting.
  void settle_all() {
    threads_.for_each_mutable([](ThreadState& t) { settle_reuses(t); });
  }

  // Empties the thread's memo: its entries point into tables about to move
  // or state about to go. Their pending hits are counted first.
  static void forget_reuses(ThreadState& t, unsigned live = kReuseMemos) {
    settle_reuses(t, live);
    for (unsigned e = 0; e < live; ++e) t.reuse_keys[e].writer_tag = 0;
  }

  static bool is_local_write(const ThreadState& t, uintptr_t addr, size_t size) {
    const unsigned g = t.granularity_log2;
    if (__builtin_expect(((addr ^ (addr + size - 1)) >> g) != 0, 0)) return false;
    const std::atomic<uint64_t>* word;
    return ShadowMemory::find_cached(t.chunks, g, addr, word) &&
           word->load(std::memory_order_relaxed) == t.writer_tag;
  }

  // After this, read_fast and is_local_write decide nothing for `t` (its tag matches
  // no shadow word): a source that keeps `t` in a place it cannot clear from
  // another thread stops its fast path this way. Then detach `t` too.
  static void retire(ThreadState& t) {
    __atomic_store_n(&t.writer_tag, kRetiredTag, __ATOMIC_RELAXED);
    for (ReuseMemoKey& k : t.reuse_keys) __atomic_store_n(&k.writer_tag, 0, __ATOMIC_RELAXED);
  }

  // The thread whose write of addr's granule `t` has not read yet (what
  // t's next read of it will count as a raw event), else -1; `writer_tag`
  // (when not null) gets the granule's last writer's tag (thread id + 1, 0:
  // none). Reads the shadow only: call it before read(). The spin-wait
  // recognition asks it whether a spinning read sees another thread's
  // release.
  int32_t unread_writer(ThreadState& t, uintptr_t addr, uint64_t* writer_tag_out = nullptr) {
    const std::atomic<uint64_t>* word = shadow_.word(addr, t.chunks);
    if (!word) return -1;
    const uint64_t w = word->load(std::memory_order_acquire);
    const uint64_t writer_tag = w & kWriterMask;
    if (writer_tag_out) *writer_tag_out = writer_tag;
    if (writer_tag == 0 || writer_tag == t.writer_tag) return -1;
    const auto writer = static_cast<int32_t>(writer_tag - 1);
    if (!(w & kExtended)) return t.reader_bit && !(w & t.reader_bit) ? writer : -1;
    if (w & kLocked) return -1;  // being changed: the next read decides
    return (w & kHasReaders) && in_reader_set(w, t.tid) ? -1 : writer;
  }

  void read(ThreadState& t, uint64_t pc, uintptr_t addr, size_t size) {
    if (__builtin_expect(!read_fast(t, pc, addr, size), 0)) read_slow(t, pc, addr, size);
  }

  void write(ThreadState& t, uint64_t pc, uintptr_t addr, size_t size) {
    if (__builtin_expect(!is_local_write(t, addr, size), 0)) write_slow(t, pc, addr, size);
  }

  __attribute__((noinline)) void read_slow(ThreadState& t, uint64_t pc, uintptr_t addr,
                                           size_t size) {
    const unsigned g = granularity_log2_;
    uintptr_t first = addr >> g;
    const uintptr_t last = (addr + (size ? size : 1) - 1) >> g;
    // Each granule's part of the access starts at addr or at the granule.
    for (; first <= last; ++first) read_granule(t, pc, std::max(addr, first << g));
  }

  __attribute__((noinline)) void write_slow(ThreadState& t, uint64_t pc, uintptr_t addr,
                                            size_t size) {
    const unsigned g = granularity_log2_;
    uintptr_t first = addr >> g;
    const uintptr_t last = (addr + (size ? size : 1) - 1) >> g;
    for (; first <= last; ++first) write_granule(t, pc, first << g);
  }

  // Heap memory [begin, end) was released (docs/metrics.md, "Freed
  // memory"): each granule lying entirely inside it loses its writer and
  // readers, as if never written, so that the block's next owner starts
  // clean. Allocates nothing; the cost follows the granules the program
  // touched. Any thread.
  void forget(uintptr_t begin, uintptr_t end);

  // Visits every non-zero (pc, thread, peer) count. Call when no thread is
  // updating (after the run, or after all threads left their hooks).
  template <class Visitor>
  void for_each_count(Visitor&& visit) const {
    threads_.for_each([&](const ThreadState& t) {
      t.counts.for_each([&](const PcPeerCounts& c) {
        PcCommunication record;
        record.pc = c.pc();
        record.thread = t.tid;
        record.peer = c.peer();
        record.raw = c.raw;
        record.rar = c.rar;
        record.inval = c.inval;
        visit(record);
      });
    });
  }

  // Accesses that could not be counted (reentrant signal handlers, memory).
  uint64_t dropped() const;
  // True while some thread is inside a counter update.
  bool any_thread_busy() const;

 private:
  using Count = CommunicationEvent;

  // The footprint is touched only where this thread may not have touched the
  // granule before: not when it wrote it last, not on a reuse (it read it).
  void read_granule(ThreadState& t, uint64_t pc, uintptr_t addr) {
    std::atomic<uint64_t>* word = shadow_.word(addr, t.chunks);
    if (!word) return;
    uint64_t cur = word->load(std::memory_order_relaxed);
    for (;;) {
      const uint64_t writer_tag = cur & kWriterMask;
      if (writer_tag == t.writer_tag) return;  // local
      if (writer_tag == 0) {                   // never written
        if (footprint_) footprint_->touch(t.footprint_tag, pc, addr);
        return;
      }
      if ((cur & (kExtended | kLocked)) || t.reader_bit == 0) {
        if (footprint_) footprint_->touch(t.footprint_tag, pc, addr);
        read_granule_extended(t, pc, addr, *word);
        return;
      }
      if (cur & t.reader_bit) {
        add(t, pc, static_cast<uint32_t>(writer_tag - 1), Count::Rar, addr);
        return;
      }
      if (footprint_) footprint_->touch(t.footprint_tag, pc, addr);
      if (word->compare_exchange_weak(cur, cur | t.reader_bit, std::memory_order_relaxed)) {
        add(t, pc, static_cast<uint32_t>(writer_tag - 1), Count::Raw, addr);
        return;
      }
    }
  }

  void write_granule(ThreadState& t, uint64_t pc, uintptr_t addr) {
    std::atomic<uint64_t>* word = shadow_.word(addr, t.chunks);
    if (!word) return;
    if (footprint_) footprint_->touch(t.footprint_tag, pc, addr);
    uint64_t cur = word->load(std::memory_order_relaxed);
    for (;;) {
      if (cur == t.writer_tag) return;  // already the writer, nobody read since
      if ((cur & ~kIndexMask) == (kExtended | t.writer_tag)) return;  // same, extended form
      if (cur & (kExtended | kLocked)) {
        write_granule_extended(t, pc, *word);
        return;
      }
      if (word->compare_exchange_weak(cur, t.writer_tag, std::memory_order_relaxed)) {
        if (config_.count_invalidations) count_inline_invalidations(t, pc, cur);
        return;
      }
    }
  }

  // One count; for communication events (Comm, Reuse) `addr` is the first
  // byte read in the granule and the event also goes to the distance analyzer.
  void add(ThreadState& t, uint64_t pc, uint32_t peer, Count what, uintptr_t addr) {
    if (t.busy) {
      ++t.dropped;
      return;
    }
    t.busy = 1;
    // The tables below may move their entries: the memo is emptied while
    // they change. Without CRD its entries come back when none moved. With
    // CRD only its first kCrdReuseMemos entries are ever used (the others
    // were settled and emptied when the thread's CRD was switched on).
    const bool keep = !t.distances;
    const unsigned live = keep ? kReuseMemos : kCrdReuseMemos;
    uint64_t tags[kReuseMemos] = {};
    uint64_t hits[kReuseMemos] = {};  // without CRD: since the previous slow-path event
    for (unsigned i = 0; i < live; ++i) {
      tags[i] = t.reuse_keys[i].writer_tag;
      if (keep && tags[i]) hits[i] = t.reuse_memo[i].pending;
    }
    const bool remember = keep || crd_memo_pays(t, (tags[0] | tags[1]) != 0);
    const uint64_t generation = table_generation(t);
    forget_reuses(t, live);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    ReuseMemo latest = empty_memo_;
    ReuseMemo second = empty_memo_;  // with CRD: the pair's second latest granule
    t.crd_clock += what != Count::Inval;
    PcPeerCounts* c = t.counts.find_or_insert(PcPeerCounts::make_key(pc, peer));
    if (c) {
      c->count(what);
      CommunicationReuseDistance::EventDistances distance;
      if (t.distances && what != Count::Inval)
        distance = distances_->on_event(*t.distances, pc, peer, addr, what == Count::Raw);
      else if (t.crd_long_limit && what != Count::Inval)
        distance = distances_->on_skipped_event(*t.crd_reader, pc, peer, addr);
      if (t.crd_reader) t.crd_long_limit = CommunicationReuseDistance::long_limit(*t.crd_reader);
      const uint64_t granule = addr >> t.granularity_log2;
      t.crd_long_latest = !t.distances && what != Count::Inval && t.crd_long_limit != 0 &&
                                  in_long_sample(t, granule)
                              ? granule
                              : kNoGranule;
      if (t.sections)
        sections_->on_event(*t.sections, peer, what, distance.line, distance.word, distance.weight);
      if (t.distances && what != Count::Inval) {
        remember_crd_reuses(t, tags, generation, pc, peer, addr, what == Count::Rar ? c : nullptr,
                            distance.line, remember, latest, second);
      } else if (what == Count::Rar) {
        latest = reuse_to_remember(t, pc, peer, addr, *c, distance.line);
      }
    } else {
      ++t.dropped;
    }
    if (!keep || table_generation(t) != generation) std::fill(std::begin(tags), std::end(tags), 0);
    if (!keep) {
      // The pair's latest granule, then its second latest.
      t.crd_front = 0;
      t.reuse_memo[0] = latest;
      t.reuse_keys[0].pc = latest.pc;
      tags[0] = latest.writer_tag;
      t.reuse_memo[1] = second;
      t.reuse_keys[1].pc = second.pc;
      tags[1] = second.writer_tag;
    } else if (latest.writer_tag) {
      place_reuse(t, latest, tags, hits);
    }
    // Each entry is whole before its tag makes it visible to read_fast.
    std::atomic_signal_fence(std::memory_order_seq_cst);
    for (unsigned i = 0; i < live; ++i) t.reuse_keys[i].writer_tag = tags[i];
    if (__builtin_expect(t.crd_clock >= t.crd_stretch_end, 0)) next_crd_stretch(t);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    t.busy = 0;
  }

  // Without CRD, at a slow-path reuse: each entry's use is updated from
  // `hits` (the reads it decided since the previous event), `latest` goes
  // in (ReuseMemo) and, when it is a new entry, the entries are put in the
  // order of their use.
  // `tags`: the entries' tags, changed with them (0: empty).
  static constexpr uint8_t kStaleMemoEvents = 32;
  static void place_reuse(ThreadState& t, const ReuseMemo& latest, uint64_t* tags,
                          const uint64_t* hits) {
    unsigned at = kReuseMemos;
    for (unsigned i = 0; i < kReuseMemos && at == kReuseMemos; ++i)  // its own entry
      if (tags[i] == latest.writer_tag && t.reuse_keys[i].pc == latest.pc) at = i;
    // Only a new entry ages the others and reorders them: an event of an
    // entry's own (a reuse the CRD's long sample sees) is most of them in a
    // loop whose entries all stay.
    const bool fresh = at == kReuseMemos;
    for (unsigned i = 0; i < kReuseMemos; ++i) {
      if (!tags[i]) continue;
      ReuseMemo::Standing& s = t.reuse_memo[i].standing;
      if (fresh) s.use -= (s.use + 7) / 8;
      s.use = static_cast<uint32_t>(std::min<uint64_t>(s.use + hits[i], uint64_t{1} << 31));
      if (hits[i]) {
        s.idle = 0;
        s.hit = true;
      } else if (fresh && s.idle < 255) {
        ++s.idle;
      }
    }
    if (!fresh) {  // its counters were found again
      ReuseMemo& m = t.reuse_memo[at];
      const ReuseMemo::Standing standing = m.standing;
      m = latest;
      m.standing = standing;
      return;
    }
    for (unsigned i = 0; i < kReuseMemos && at == kReuseMemos; ++i)
      if (tags[i] == 0) at = i;
    if (at == kReuseMemos) {
      const auto standing = [&](unsigned i) { return t.reuse_memo[i].standing; };
      unsigned idlest = 0;
      for (unsigned i = 1; i < kReuseMemos; ++i)
        if (standing(i).idle >= standing(idlest).idle) idlest = i;
      at = standing(idlest).idle < kStaleMemoEvents && !standing(t.memo_newest).hit ? t.memo_newest
                                                                                    : idlest;
    }
    tags[at] = latest.writer_tag;
    t.reuse_keys[at].pc = latest.pc;
    t.reuse_memo[at] = latest;
    t.reuse_memo[at].standing = {1, 0, false};  // before the entries no read used lately
    t.memo_newest = static_cast<uint8_t>(at);
    // In the order of use, empty entries last (an insertion sort: the order
    // rarely changes).
    const auto rank = [&](unsigned i) {
      return tags[i] ? int64_t{t.reuse_memo[i].standing.use} : -1;
    };
    for (unsigned i = 1; i < kReuseMemos; ++i) {
      for (unsigned j = i; j > 0 && rank(j - 1) < rank(j); --j) {
        std::swap(tags[j - 1], tags[j]);
        std::swap(t.reuse_keys[j - 1].pc, t.reuse_keys[j].pc);
        std::swap(t.reuse_memo[j - 1], t.reuse_memo[j]);
        if (t.memo_newest == j || t.memo_newest == j - 1)
          t.memo_newest = static_cast<uint8_t>(t.memo_newest == j ? j - 1 : j);
      }
    }
  }

  // The reader's clock passed the end of its open stretch (docs/metrics.md,
  // "Stretches of long instances"): the next one begins, and the thread
  // counts as with or without CRD as sample_crd_segment would set it. Its
  // memo settles first, at the weight its hits were counted at. Inside
  // add(), while busy.
  void next_crd_stretch(ThreadState& t) {
    forget_reuses(t);
    t.crd_front = 0;
    t.latest_crd_event = {};
    bool analyzed = true;
    t.crd_stretch_end = distances_->next_stretch(*t.crd_reader, t.crd_clock, analyzed);
    t.distances = analyzed ? t.crd_reader : nullptr;
    t.crd_long_limit = CommunicationReuseDistance::long_limit(*t.crd_reader);
    t.crd_long_latest = kNoGranule;
  }

  // With CRD, whether this slow-path event should leave memo entries for
  // the reads after it. Building them (remember_crd_reuses) costs a part of
  // every slow-path event; a hit (a read that repeats the event's granule,
  // or the pair's one before it) saves one. The memo pays while about one
  // in kCrdMemoHitCredit of the slow-path events that found an entry had a
  // hit since the one before: each event without adds 1 to an idle score,
  // each with takes kCrdMemoHitCredit off it (2 ran the fewest
  // instructions, docs/performance.md). At kCrdMemoIdleScore (a bisection's
  // path, a gather: distances of 2 and more) the thread builds no entries
  // for a pause, then tries again: kCrdMemoFirstPause events, doubled at
  // each pause until the score is 0 again (at most kCrdMemoLongestPause),
  // so that a loop whose reuses never repeat pays for few probes and a
  // stretch without hits inside an alternating loop costs it few hits. An
  // event that found no entry is no evidence: its granules may have been in
  // the sample, which no entry may hold. Without entries every read takes
  // the slow path, which counts exactly as a hit would: only the cost
  // changes. Call before the memo is settled; `had_entry`: some entry was
  // live.
  static constexpr unsigned kCrdMemoHitCredit = 2;
  static constexpr unsigned kCrdMemoIdleScore = 32;
  static constexpr unsigned kCrdMemoFirstPause = 32;
  static constexpr unsigned kCrdMemoLongestPause = 4096;
  static bool crd_memo_pays(ThreadState& t, bool had_entry) {
    const bool hit = (t.reuse_memo[0].pending | t.reuse_memo[1].pending) != 0 || t.crd_alternated;
    t.crd_alternated = 0;
    if (t.crd_memo_pause != 0) {
      --t.crd_memo_pause;
      return false;
    }
    if (hit) {
      t.crd_memo_idle =
          t.crd_memo_idle > kCrdMemoHitCredit ? t.crd_memo_idle - kCrdMemoHitCredit : 0;
      if (t.crd_memo_idle == 0) t.crd_memo_pauses = 0;
    } else if (had_entry && ++t.crd_memo_idle >= kCrdMemoIdleScore) {
      t.crd_memo_idle = 0;
      t.crd_memo_pause = static_cast<uint16_t>(std::min<unsigned>(
          kCrdMemoFirstPause << std::min<unsigned>(t.crd_memo_pauses, 7u), kCrdMemoLongestPause));
      if (t.crd_memo_pauses < 7) ++t.crd_memo_pauses;
    }
    return true;
  }

  // With CRD, after an event of pair `peer` at `pc` on addr's granule (a
  // reuse counted in `c`, else null): `latest`, the memo entry of a re-read
  // of that granule by `pc`, and `second`, of a re-read of the pair's
  // previous granule by the instruction that read it, when the pair's
  // previous event was the thread's latest (either may stay empty).
  // `old_tags`: the memo's tags before the event, `old_generation` the
  // tables' generation then (table_generation). Without `build_entries`
  // (crd_memo_pays) it only notes the event as the thread's latest.
  void remember_crd_reuses(ThreadState& t, const uint64_t* old_tags, uint64_t old_generation,
                           uint64_t pc, uint32_t peer, uintptr_t addr, PcPeerCounts* c,
                           uint64_t distance, bool build_entries, ReuseMemo& latest,
                           ReuseMemo& second);
  // Whether `granule` lies outside the thread's CRD sample (its events
  // change only the pair's recent granules, never its trace).
  static bool outside_crd_sample(const ThreadState& t, uint64_t granule) {
    const unsigned shift = t.distances->sample_shift;
    return shift != 0 && !granule_in_crd_sample(granule, shift);
  }

  // Changes whenever an entry a ReuseMemo points at may have moved.
  uint64_t table_generation(const ThreadState& t) const {
    return t.counts.generation() + (t.sections ? sections_->open_generation(*t.sections) : 0) +
           (t.distances ? t.distances->distances.generation() : 0);
  }

  // The ReuseMemo of a reuse of `peer`'s data at `pc` with `distance` just
  // counted; empty (writer_tag 0) when the next such read would not simply
  // repeat the same counts.
  ReuseMemo reuse_to_remember(ThreadState& t, uint64_t pc, uint32_t peer, uintptr_t addr,
                              PcPeerCounts& c, uint64_t distance);
  // Whether `tid` is in the reader set an extended, unlocked shadow word
  // points to (read without the lock: valid while the word is unchanged).
  bool in_reader_set(uint64_t word, uint32_t tid) {
    const uint64_t* set = reader_sets_.set((word & kIndexMask) >> kReaderShift);
    return (__atomic_load_n(&set[tid / 64], __ATOMIC_ACQUIRE) >> (tid % 64)) & 1;
  }
  void count_inline_invalidations(ThreadState& t, uint64_t pc, uint64_t old_word);
  void read_granule_extended(ThreadState& t, uint64_t pc, uintptr_t addr,
                             std::atomic<uint64_t>& word);
  void write_granule_extended(ThreadState& t, uint64_t pc, std::atomic<uint64_t>& word);
  void forget_extended(std::atomic<uint64_t>& word);
  uint64_t lock(std::atomic<uint64_t>& word);

  // An empty ReuseMemo that the compiler cannot see into (it is not const):
  // the slow path starts its memos as copies of it, seven 16-byte moves,
  // where zeroing one is a `rep stos` whose start-up cost was a third of
  // add()'s samples on the CRD's slow path (docs/performance.md).
  static ReuseMemo empty_memo_;

  CommunicationConfig config_;
  unsigned granularity_log2_;
  ShadowMemory shadow_;
  ReaderSetPool reader_sets_;
  PerThreadStates<ThreadState> threads_;
  CommunicationReuseDistance* distances_ = nullptr;
  SharingFootprint* footprint_ = nullptr;
  SectionAttribution* sections_ = nullptr;
};

}  // namespace weft
