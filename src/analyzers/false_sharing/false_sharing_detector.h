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
// Results, kept per receiving thread (its ThreadState, touched only by it):
//   - per (thread, writer) the true and false events (SharingPairTotals);
//   - per (line, pc, thread, writer) with false events a LineSharingRecord:
//     the false events, the union of the bytes the thread accessed at those
//     events and the union of the writer's `written` masks at them. Records
//     are created only at false-sharing events, so their memory grows with
//     false sharing, not with the true sharing of large arrays.
//
// Shadow: two 64-bit words per line, 16-byte aligned, in a ShadowTable
// (analyzers/state/shadow_memory.h: only the pages of touched lines cost
// memory, 16 bytes per line):
//   state    bits 0..15 W (tid + 1), bits 16..63 the valid bitset (tid 0..47)
//   written  the mask above
// Both words change together with one 16-byte compare-and-swap
// (cmpxchg16b), lock-free; concurrent threads on one line are ordered by the
// order their CAS succeed (as in CommunicationAnalyzer). Events from the
// binary source arrive serialized, so its counts are exact.
//
// Fast path (inline): an access inside one line whose state says "no event,
// nothing to change" returns after the directory load and the state load: a
// read with t's valid bit set (one AND), a write by the writer when nobody
// else holds a copy and its bytes are already in `written` (one compare plus
// the `written` load). Everything else goes to the out-of-line slow path.
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
  static constexpr uint64_t kWriterMask = 0xffff;
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
    uint64_t writer_bytes = 0;
  };

  // Everything one thread owns: its counts (as the receiving thread of line
  // transfers) and a reentrancy flag (a signal handler running instrumented
  // code must not touch a table mid-update).
  struct ThreadState {
    uint64_t valid_bit = 0;   // 1 << (kValidShift + tid); 0 if untracked
    uint64_t owner_word = 0;  // state of a line this thread wrote, nobody else holds
    uint64_t writer_tag = 0;  // tid + 1
    uint32_t tid = 0;
    volatile int busy = 0;
    uint64_t dropped = 0;
    uint64_t untracked = 0;
    ShadowChunkCache chunks;            // of shadow_
    PairCounts pairs[kTrackedThreads];  // indexed by writer
    PagedHashTable<LineEntry> lines;
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

  // Thread `t` accessed [address, address + size) at `pc`. Call only from
  // t's own thread (or serialized).
  void access(ThreadState& t, uint64_t pc, uint64_t address, uint32_t size, bool is_write) {
    // Fast path: one line, its chunk cached, and nothing to change.
    if (__builtin_expect(((address ^ (address + size - 1)) >> line_log2_) == 0, 1)) {
      const LineWords* line;
      if (ShadowTable<LineWords>::find_cached(t.chunks, line_log2_, address, line)) {
        const uint64_t state = __atomic_load_n(&line->state, __ATOMIC_RELAXED);
        if (!is_write) {
          if (state & t.valid_bit) return;
        } else if (state == t.owner_word) {
          const uint64_t m = byte_mask(address & line_offset_mask_, size);
          if ((__atomic_load_n(&line->written, __ATOMIC_RELAXED) & m) == m) return;
        }
      }
    }
    access_slow(t, pc, address, size, is_write);
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
        visit(static_cast<const LineSharingRecord&>(record));
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
                                             uint32_t size, bool is_write);
  void access_line(ThreadState& t, uint64_t pc, uint64_t line_address, uint64_t mask,
                   bool is_write);
  void count_transfer(ThreadState& t, uint64_t pc, uint64_t line_address, uint32_t writer,
                      uint64_t mask, uint64_t written);

  FalseSharingConfig config_;
  unsigned line_log2_;
  unsigned mask_shift_;  // log2(line_size / 64) when line_size > 64, else 0
  uint64_t line_offset_mask_;
  ShadowTable<LineWords> shadow_;  // two words per line
  PerThreadStates<ThreadState> threads_;
};

}  // namespace weft
