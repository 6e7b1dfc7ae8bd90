// FalseSharingDetector: counts the cache-line transfers between threads and
// classifies each one as true sharing (the bytes the receiving thread accessed
// overlap the bytes the last writer wrote) or false sharing (they do not: the
// transfer was caused only by the two threads' data living in one line).
//
// Definition. The granule is a cache line of `line_size` bytes (a power of two
// in [8, 4096], default 64). Per line the shadow keeps:
//   W        the last writer (thread id + 1; 0: never written),
//   valid    the threads holding a valid copy since W's last write (a bitset
//            of thread ids 0..47; W itself is always in it once it wrote),
//   written  the bytes of the line W wrote since it became the writer, as a
//            64-bit mask: for line_size <= 64 bit b is byte b of the line;
//            for line_size > 64 bytes are scaled onto the 64 bits, byte o
//            maps to bit o * 64 / line_size (so bit b covers the line_size/64
//            bytes [b * line_size / 64, (b + 1) * line_size / 64)).
// An access by thread t to bytes m of a line (an access spanning two lines is
// split, each part is one access to its line):
//   - t == W, or t holds a valid copy: nothing is counted. A write by t == W
//     ORs m into `written` and empties the valid set (but for W): the other
//     copies are invalidated. A write by a holder t != W makes t the writer
//     (valid = {t}, written = m), still without counting (an upgrade, no
//     data moves).
//   - W == 0 (never written): nothing is counted; a read adds t to the valid
//     set, a write makes t the writer (valid = {t}, written = m).
//   - otherwise t obtains the line from W: ONE line-transfer event, writer W,
//     reader t, TRUE sharing if m overlaps `written`, FALSE sharing if not.
//     Then a read adds t to the valid set; a write makes t the writer
//     (valid = {t}, written = m).
// Threads with id >= kTrackedThreads (48) are not analyzed: their accesses
// are counted in untracked_accesses() and otherwise ignored (they neither
// take, invalidate nor write lines).
//
// Unsynchronised writes (possible data races). Each thread has an epoch,
// advanced by each of its releases, and knows, per thread, the latest epoch
// of that thread it acquired (`seen`), as a vector clock would:
//   release      a lock released, a barrier entered, a thread created or
//                ending, a condition waited on or signalled, an OpenMP
//                region begun or its implicit task ended, a spin flag
//                written, an atomic write (after its write);
//   acquire all  a lock acquired, a barrier left, an OpenMP region ended, a
//                condition wait left, a recognised barrier episode (every
//                thread's current epoch);
//   acquire one  a thread started (its creator's epoch at the creation), a
//                thread joined (its), an OpenMP implicit task begun (the
//                master's at the region's beginning: the latest thread to
//                begin a region of that outlined function), an atomic read
//                or write (the line's writer's current epoch): that epoch,
//                and everything that thread had acquired (by now);
//   neither      a lock or a worksharing-loop chunk handed out, a loop end.
// The line keeps the epoch W had at its latest write. A write by t != W
// whose bytes overlap `written` is UNSYNCHRONISED when t holds no lock, the
// write is not atomic, the line is not `stale` (below), and t has acquired
// no release W made after that write: nothing orders the two writes.
// Such a write is counted whether t obtained the line with it or held a
// copy (it read the bytes first, as `x += v` does). `stale`: W wrote some of
// `written` in an earlier epoch than its latest write (it wrote the line
// before a synchronization, and again after, with nobody taking the line
// between); the overlap may then be with its earlier bytes, and the write
// is not counted. The line holds 9 bits of W's epoch; W's full epoch is
// recovered from its current one, so a writer making 512 or more releases
// between its write and t's may be misjudged.
//
// Results, kept per receiving thread (its ThreadState, touched only by it):
//   - per (thread, writer) the true and false events (SharingPairTotals);
//   - per (line, pc, thread, writer) with false events a LineSharingRecord:
//     the false events, the union of the bytes the thread accessed at those
//     events, the bytes it wrote (at those events, or with the copy it
//     obtained there: its next write to the line while it still holds it
//     and before its next false-sharing event) and the union of the
//     writer's `written` masks at them. Records are created only at
//     false-sharing events, so their memory grows with false sharing, not
//     with the true sharing of large arrays;
//   - per (line, pc, thread, writer) with unsynchronised writes an
//     UnsyncWriteRecord: their count and the union of the overlapping bytes
//     (created only at such writes).
//
// Shadow: two 64-bit words per line, 16-byte aligned, in a ShadowTable
// (analyzers/state/shadow_memory.h: only the pages of touched lines cost
// memory, 16 bytes per line):
//   state    bits 0..5 W (tid + 1), bit 6 stale, bits 7..15 W's epoch at its
//            latest write (9 bits), bits 16..63 the valid bitset (tid 0..47)
//   written  the mask above
// Both words change together with one 16-byte compare-and-swap
// (cmpxchg16b), lock-free; concurrent threads on one line are ordered by the
// order their CAS succeed (as in CommunicationAnalyzer). Events from the
// binary source arrive serialized, so its counts are exact.
//
// Fast path (inline): an access inside one line whose state says "no event,
// nothing to change" returns after the directory load and the state load: a
// read with t's valid bit set (one AND), a write by the writer when nobody
// else holds a copy, its epoch is t's current one and its bytes are already
// in `written` (one compare plus the `written` load). Everything else goes
// to the out-of-line slow path (so after a synchronization call, a thread's
// first write to each line it owns takes it once, to store the new epoch).
//
// x86-64 only (47-bit user addresses, cmpxchg16b).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "analyzers/false_sharing/false_sharing_records.h"
#include "analyzers/state/paged_hash_table.h"
#include "analyzers/state/per_thread_slot.h"
#include "analyzers/state/shadow_memory.h"
#include "common/run_capture.h"

namespace weft {

struct FalseSharingConfig {
  unsigned line_size = 64;      // bytes; rounded up to a power of two, clamped to [8, 4096]
  unsigned max_threads = 1024;  // ids beyond this are refused by attach()
  // 1 in how many section instances a long run analyzes (the capture decides
  // which: docs/metrics.md, "Sampled section instances"); 1: every one.
  uint32_t segment_sampling = 1;
};

// Key of a line record: the line, the instruction, the writer (tid + 1, so
// that no key is all zeros).
struct FalseSharingLineKey {
  uint64_t line_address = 0;
  uint64_t pc = 0;
  uint64_t writer_tag = 0;
  bool operator==(const FalseSharingLineKey&) const = default;
};

inline size_t hash_key(const FalseSharingLineKey& key) {
  return hash_key(key.line_address * 0x9e3779b97f4a7c15ULL ^ key.pc ^ (key.writer_tag << 56) ^
                  (key.writer_tag >> 8));
}

class FalseSharingDetector {
 public:
  static constexpr unsigned kTrackedThreads = 48;
  static constexpr uint64_t kWriterMask = 0x3f;  // tid + 1 <= kTrackedThreads
  static constexpr uint64_t kStaleBit = 1 << 6;
  static constexpr unsigned kEpochShift = 7;
  static constexpr uint64_t kEpochMask = 0x1ff;  // 9 bits of epoch
  static constexpr unsigned kValidShift = 16;
  static constexpr unsigned kMinLineSize = 8;
  static constexpr unsigned kMaxLineSize = 4096;

  // The shadow of one line.
  struct alignas(16) LineWords {
    uint64_t state;    // writer tag | valid bitset << kValidShift
    uint64_t written;  // bytes the writer wrote
  };

  struct PairCounts {
    uint64_t true_events = 0;
    uint64_t false_events = 0;
  };

  struct LineEntry {
    FalseSharingLineKey key;
    uint64_t false_events = 0;
    uint64_t thread_bytes = 0;
    uint64_t thread_written = 0;
    uint64_t writer_bytes = 0;
  };

  struct UnsyncEntry {
    FalseSharingLineKey key;
    uint64_t events = 0;
    uint64_t bytes = 0;
  };

  // Everything one thread owns: its counts (as the receiving thread of line
  // transfers) and a reentrancy flag (a signal handler running instrumented
  // code must not touch a table mid-update).
  struct ThreadState {
    uint64_t valid_bit = 0;   // 1 << (kValidShift + tid); 0 if untracked
    uint64_t owner_word = 0;  // state of a line this thread wrote in this epoch, nobody else holds
    uint64_t writer_tag = 0;  // tid + 1
    uint32_t tid = 0;
    uint32_t epoch = 0;       // releases so far (see above)
    uint32_t locks_held = 0;  // mutexes acquired and not released
    volatile int busy = 0;
    // Sampled section instances (the capture's choice, docs/metrics.md): while
    // `paused` the thread's plain accesses are not analyzed (its atomic ones
    // and its synchronization still are: they order later writes); each
    // event counted otherwise stands for `weight` events (0: the segment
    // only brings the lines' states up to date for the next one).
    bool paused = false;
    uint32_t weight = 1;
    uint32_t skipped_segments = 0;  // segments begun paused
    uint64_t dropped = 0;
    uint64_t untracked = 0;
    // The record of the thread's latest false-sharing event, while its next
    // write to that line may still be made with the copy it obtained there
    // (line_address 0: none).
    FalseSharingLineKey last_false;
    ShadowChunkCache chunks;  // of shadow_
    // Per thread, its latest epoch this thread acquired (other threads read
    // it when they acquire from this one: accessed with relaxed atomics).
    uint32_t seen[kTrackedThreads] = {};
    PairCounts pairs[kTrackedThreads];  // indexed by writer
    PagedHashTable<LineEntry> lines;
    PagedHashTable<UnsyncEntry, kFewRecentEntries> unsync;  // per unsynchronized event
  };

  explicit FalseSharingDetector(const FalseSharingConfig& config);
  ~FalseSharingDetector();
  FalseSharingDetector(const FalseSharingDetector&) = delete;
  FalseSharingDetector& operator=(const FalseSharingDetector&) = delete;

  // The configuration in use (line_size after rounding).
  const FalseSharingConfig& config() const { return config_; }

  // The state of thread `tid`, created on first call; nullptr when tid is
  // beyond max_threads or out of memory. Thread-safe.
  ThreadState* attach(uint32_t tid);

  // Whether the thread's plain accesses from now on are analyzed, each event
  // then counting `weight` (the capture's sampled section instances). Only
  // the thread owning `t` may call it.
  static void sample_segment(ThreadState& t, bool analyzed, uint32_t weight) {
    t.paused = !analyzed;
    t.weight = weight;
    t.skipped_segments += !analyzed;
  }
  // Segments no thread analyzed (sample_segment), over all threads.
  uint64_t skipped_segments() const {
    uint64_t n = 0;
    threads_.for_each([&](const ThreadState& t) { n += t.skipped_segments; });
    return n;
  }

  // The thread exited: its tables move into packed memory of their size
  // (they grow again if it still accesses memory).
  static void finish_thread(ThreadState& t) {
    t.lines.shrink_to_fit();
    t.unsync.shrink_to_fit();
  }

  // Thread `t` accessed [address, address + size) at `pc`; `is_atomic`: an
  // atomic operation's read or write (never an unsynchronised write; it
  // acquires from the line's writer, and a write releases after it, see
  // above). Call only from t's own thread (or serialized).
  void access(ThreadState& t, uint64_t pc, uint64_t address, uint32_t size, bool is_write,
              bool is_atomic = false) {
    if (__builtin_expect(is_atomic, 0)) {
      atomic_access(t, pc, address, size, is_write);
      return;
    }
    if (__builtin_expect(!changes_nothing(t, address, size, is_write), 0))
      access_slow(t, pc, address, size, is_write);
  }

  // True when a plain access changes nothing: the thread is paused, or one
  // line, its chunk cached, a read of a copy the thread holds, or a write by
  // the line's owner of bytes it wrote. The fast path, also for inline
  // callers.
  bool changes_nothing(const ThreadState& t, uint64_t address, uint32_t size, bool is_write) const {
    if (t.paused) return true;
    if (__builtin_expect(((address ^ (address + size - 1)) >> line_log2_) != 0, 0)) return false;
    const LineWords* line;
    if (!ShadowTable<LineWords>::find_cached(t.chunks, line_log2_, address, line)) return false;
    const uint64_t state = __atomic_load_n(&line->state, __ATOMIC_RELAXED);
    if (!is_write) return state & t.valid_bit;
    if ((state & ~kStaleBit) != t.owner_word) return false;
    const uint64_t m = byte_mask(address & line_offset_mask_, size);
    return (__atomic_load_n(&line->written, __ATOMIC_RELAXED) & m) == m;
  }

  // Thread `t` made a synchronization call of `kind` with the record's
  // `object` and `arg0` (common/run_capture.h): a release, an acquisition
  // or neither (see above); MutexLock and MutexUnlock also count the locks
  // t holds. Call only from t's own thread (or serialized).
  void synchronize(ThreadState& t, SyncKind kind, uint64_t object = 0, int64_t arg0 = 0);

  // Heap memory [begin, end) was released (docs/metrics.md, "Freed
  // memory"): each line lying entirely inside it forgets its writer, copies
  // and written bytes, as if never accessed; a line the block shares with
  // its neighbours keeps its state. Allocates nothing; the cost follows the
  // lines the program touched. Any thread.
  void forget(uint64_t begin, uint64_t end) {
    shadow_.for_each_cell_inside(begin, end, [](LineWords* lines, size_t n) {
      for (size_t i = 0; i < n; ++i) {
        if (__atomic_load_n(&lines[i].state, __ATOMIC_RELAXED) != 0)
          __atomic_store_n(&lines[i].state, 0, __ATOMIC_RELAXED);
        if (__atomic_load_n(&lines[i].written, __ATOMIC_RELAXED) != 0)
          __atomic_store_n(&lines[i].written, 0, __ATOMIC_RELAXED);
      }
    });
  }

  // Visits every line record (see above). Call when no thread is updating.
  template <class Visitor>
  void for_each_line_record(Visitor&& visit) const {
    threads_.for_each([&](const ThreadState& t) {
      t.lines.for_each([&](const LineEntry& e) {
        LineSharingRecord record;
        record.line_address = e.key.line_address;
        record.pc = e.key.pc;
        record.thread = t.tid;
        record.writer = static_cast<uint32_t>(e.key.writer_tag - 1);
        record.false_events = e.false_events;
        record.thread_bytes = e.thread_bytes;
        record.writer_bytes = e.writer_bytes;
        record.thread_written = e.thread_written;
        visit(static_cast<const LineSharingRecord&>(record));
      });
    });
  }

  // Visits every unsynchronised-write record. Call when no thread is updating.
  template <class Visitor>
  void for_each_unsync_record(Visitor&& visit) const {
    threads_.for_each([&](const ThreadState& t) {
      t.unsync.for_each([&](const UnsyncEntry& e) {
        UnsyncWriteRecord record;
        record.line_address = e.key.line_address;
        record.pc = e.key.pc;
        record.thread = t.tid;
        record.writer = static_cast<uint32_t>(e.key.writer_tag - 1);
        record.events = e.events;
        record.bytes = e.bytes;
        visit(static_cast<const UnsyncWriteRecord&>(record));
      });
    });
  }

  // Visits the totals of every (thread, writer) pair with events. Call when
  // no thread is updating.
  template <class Visitor>
  void for_each_pair_total(Visitor&& visit) const {
    threads_.for_each([&](const ThreadState& t) {
      for (unsigned w = 0; w < kTrackedThreads; ++w) {
        const PairCounts& c = t.pairs[w];
        if (c.true_events == 0 && c.false_events == 0) continue;
        SharingPairTotals totals;
        totals.thread = t.tid;
        totals.writer = w;
        totals.true_events = c.true_events;
        totals.false_events = c.false_events;
        visit(static_cast<const SharingPairTotals&>(totals));
      }
    });
  }

  // Events (or accesses) lost to memory exhaustion or reentrant signal handlers.
  uint64_t dropped() const;
  // Accesses by threads with id >= kTrackedThreads.
  uint64_t untracked_accesses() const;

 private:
  // Bits first..last of the line's byte mask for bytes [offset, offset + size).
  uint64_t byte_mask(uint64_t offset, uint64_t size) const {
    const unsigned first = static_cast<unsigned>(offset >> mask_shift_);
    const unsigned last = static_cast<unsigned>((offset + size - 1) >> mask_shift_);
    return (~uint64_t{0} << first) & (~uint64_t{0} >> (63 - last));
  }

  __attribute__((noinline)) void access_slow(ThreadState& t, uint64_t pc, uint64_t address,
                                             uint32_t size, bool is_write, bool is_atomic = false);
  __attribute__((noinline)) void atomic_access(ThreadState& t, uint64_t pc, uint64_t address,
                                               uint32_t size, bool is_write);
  void access_line(ThreadState& t, uint64_t pc, uint64_t line_address, uint64_t mask, bool is_write,
                   bool is_atomic);
  void count_transfer(ThreadState& t, uint64_t pc, uint64_t line_address, uint32_t writer,
                      uint64_t mask, uint64_t written, bool is_write);
  void count_unsync(ThreadState& t, uint64_t pc, uint64_t line_address, uint32_t writer,
                    uint64_t bytes);
  void note_written(ThreadState& t, uint64_t mask);
  // Whether a plain write by t over bytes the line's writer wrote, the
  // line's state being `state`, is unsynchronised (see above).
  bool unsynchronised(const ThreadState& t, uint64_t state) const;
  void release(ThreadState& t);
  void acquire_all(ThreadState& t);
  // `epoch`: the release of `from` that t synchronizes with.
  void acquire_from(ThreadState& t, uint32_t from, uint32_t epoch);

  FalseSharingConfig config_;
  unsigned line_log2_;
  unsigned mask_shift_;  // log2(line_size / 64) when line_size > 64, else 0
  uint64_t line_offset_mask_;
  ShadowTable<LineWords> shadow_;  // two words per line
  PerThreadStates<ThreadState> threads_;
  // Each tracked thread's epoch, published for the others' acquisitions;
  // written by its thread only.
  std::atomic<uint32_t> epochs_[kTrackedThreads] = {};
  // The latest thread to begin an OpenMP region, per outlined function
  // (hashed; a collision only makes a task begin acquire from another
  // thread): its epoch << 32 | tid + 1, 0 for none.
  static constexpr unsigned kMasterSlots = 64;
  std::atomic<uint64_t> masters_[kMasterSlots] = {};
  // Per created thread, its creator's epoch at the creation.
  std::atomic<uint32_t> start_epochs_[kTrackedThreads] = {};
};

}  // namespace weft
