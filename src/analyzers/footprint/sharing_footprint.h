// SharingFootprint: which granules are touched by one thread only (the
// "non-shared footprint" that lowers a region's CRD min cutoff) and which by
// several, each attributed to the instruction that touched it first.
//
// One shadow word per granule:
//   bits  0..47  pc of the first access (x86-64 user pcs fit in 47 bits)
//   bits 48..61  first thread id + 1 (threads with id >= 16382 mark a granule
//                shared at once: rare and conservative)
//   bit  62      released: the heap block holding the granule was freed
//                since (release()); the word's counts stand for that block's
//                life, and the next thread to touch the granule starts a new one
//   bit  63      shared: a second thread touched the granule
// A thread's first access to a granule always misses the communication
// analyzer's fast path (the granule's writer is not that thread), so that
// analyzer calls touch() only from its slow path, and not on a reuse (the
// reader touched the granule already): no cost on private re-accesses.
//
// Freed memory (docs/metrics.md, "Freed memory"): a released granule touched
// again by the thread that owned it alone goes on as that thread's private
// granule (the same memory, counted once however often the thread reuses
// it); touched first by another thread, or released while shared, it
// starts afresh with that thread as its first toucher, and the ended life's
// counts are kept aside (`retired_`), so that nothing is lost.
#pragma once

#include <atomic>
#include <cstdint>

#include "analyzers/state/paged_hash_table.h"
#include "analyzers/state/shadow_memory.h"

namespace weft {

class SharingFootprint {
 public:
  static constexpr uint64_t kPcMask = (uint64_t{1} << 48) - 1;
  static constexpr unsigned kOwnerShift = 48;
  static constexpr uint64_t kOwnerMask = 0x3fff;
  static constexpr uint64_t kReleased = uint64_t{1} << 62;
  static constexpr uint64_t kShared = uint64_t{1} << 63;

  explicit SharingFootprint(unsigned granularity_log2) : shadow_(granularity_log2) {}

  static uint64_t owner_tag(uint32_t tid) {
    return tid + 1 <= kOwnerMask - 1 ? uint64_t{tid} + 1 : kOwnerMask;
  }

  // Thread with `tag` (owner_tag(tid)) touches the granule of `addr` at `pc`.
  void touch(uint64_t tag, uint64_t pc, uintptr_t addr) {
    std::atomic<uint64_t>* word = shadow_.word(addr);
    if (!word) return;
    uint64_t cur = word->load(std::memory_order_relaxed);
    for (;;) {
      const bool owner = ((cur >> kOwnerShift) & kOwnerMask) == tag;
      if (cur & kReleased) {
        // The same memory again for its one owner; else a new life.
        const uint64_t next = owner && !(cur & kShared) ? cur & ~kReleased : first_touch(tag, pc);
        if (!word->compare_exchange_weak(cur, next, std::memory_order_relaxed)) continue;
        if (next != (cur & ~kReleased)) retire(cur);
        return;
      }
      if (cur == 0) {
        if (word->compare_exchange_weak(cur, first_touch(tag, pc), std::memory_order_relaxed))
          return;
        continue;
      }
      if ((cur & kShared) || owner) return;
      word->fetch_or(kShared, std::memory_order_relaxed);
      return;
    }
  }

  // The heap block [begin, end) was released: its granules lying entirely
  // inside are marked released (above). Allocates nothing; the cost follows
  // the granules the program touched. Any thread; plain stores, since no
  // other thread may touch a block being freed.
  void release(uintptr_t begin, uintptr_t end) {
    shadow_.for_each_cell_inside(begin, end, [](std::atomic<uint64_t>* words, size_t n) {
      for (size_t i = 0; i < n; ++i)
        if (const uint64_t w = words[i].load(std::memory_order_relaxed); w && !(w & kReleased))
          words[i].store(w | kReleased, std::memory_order_relaxed);
    });
  }

  // Per first-touch instruction and first thread: granules touched by that
  // thread only (private) and by several (shared).
  struct Record {
    uint64_t pc;
    uint32_t thread;
    uint64_t private_granules;
    uint64_t shared_granules;
  };

  // Totals per (first pc, first thread), keyed by the shadow word without its
  // shared bit.
  struct Totals {
    uint64_t key = 0;
    uint64_t private_granules = 0;
    uint64_t shared_granules = 0;
    Record record() const {
      return Record{key & kPcMask, static_cast<uint32_t>(((key >> kOwnerShift) & kOwnerMask) - 1),
                    private_granules, shared_granules};
    }
  };

  // Walks the shadow once and adds the totals to `out`, with the lives of
  // released granules that ended. Call after the run (no thread touching).
  // Uses mmap'd memory only, so it may run in a signal handler.
  void collect(PagedHashTable<Totals>& out) const {
    shadow_.for_each_chunk([&](uintptr_t, const std::atomic<uint64_t>* words, size_t n) {
      for (size_t i = 0; i < n; ++i)
        if (const uint64_t w = words[i].load(std::memory_order_relaxed)) count(out, w, 1);
    });
    retired_.for_each([&](const Totals& r) {
      if (Totals* t = out.find_or_insert(r.key)) {
        t->private_granules += r.private_granules;
        t->shared_granules += r.shared_granules;
      }
    });
  }

  // Visits the totals (see collect()).
  template <class Visitor>
  void for_each_first_touch(Visitor&& visit) const {
    PagedHashTable<Totals> totals;
    collect(totals);
    totals.for_each([&](const Totals& t) { visit(t.record()); });
  }

 private:
  static uint64_t first_touch(uint64_t tag, uint64_t pc) {
    return (pc & kPcMask) | (tag << kOwnerShift) | (tag == kOwnerMask ? kShared : 0);
  }

  // Adds `granules` of the word `w`'s kind to its (first pc, first thread).
  static void count(PagedHashTable<Totals>& totals, uint64_t w, uint64_t granules) {
    Totals* t = totals.find_or_insert(w & ~(kShared | kReleased));
    if (!t) return;
    (w & kShared ? t->shared_granules : t->private_granules) += granules;
  }

  // Keeps the counts of a released granule's ended life (rare: once per
  // block reused by another thread, per granule).
  void retire(uint64_t w) {
    while (retired_lock_.exchange(true, std::memory_order_acquire)) __builtin_ia32_pause();
    count(retired_, w, 1);
    retired_lock_.store(false, std::memory_order_release);
  }

  ShadowMemory shadow_;
  PagedHashTable<Totals> retired_;
  std::atomic<bool> retired_lock_{false};
};

}  // namespace weft
