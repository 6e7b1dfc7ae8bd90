// SharingFootprint: which granules are touched by one thread only (the
// "non-shared footprint" that lowers a region's CRD min cutoff) and which by
// several, each attributed to the instruction that touched it first.
//
// One shadow word per granule:
//   bits  0..47  pc of the first access (x86-64 user pcs fit in 47 bits)
//   bits 48..62  first thread id + 1 (threads with id >= 32766 mark a granule
//                shared at once: rare and conservative)
//   bit  63      shared: a second thread touched the granule
// A thread's first access to a granule always misses the communication
// analyzer's fast path (the granule's writer is not that thread), so that
// analyzer calls touch() only from its slow path, and not on a reuse (the
// reader touched the granule already): no cost on private re-accesses.
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
  static constexpr uint64_t kOwnerMask = 0x7fff;
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
    if (cur == 0) {
      const uint64_t mine =
          (pc & kPcMask) | (tag << kOwnerShift) | (tag == kOwnerMask ? kShared : 0);
      if (word->compare_exchange_strong(cur, mine, std::memory_order_relaxed)) return;
    }
    if ((cur & kShared) || ((cur >> kOwnerShift) & kOwnerMask) == tag) return;
    word->fetch_or(kShared, std::memory_order_relaxed);
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

  // Walks the shadow once and adds the totals to `out`. Call after the run
  // (no thread touching). Uses mmap'd memory only, so it may run in a signal
  // handler.
  void collect(PagedHashTable<Totals>& out) const {
    shadow_.for_each_chunk([&](uintptr_t, const std::atomic<uint64_t>* words, size_t n) {
      for (size_t i = 0; i < n; ++i) {
        const uint64_t w = words[i].load(std::memory_order_relaxed);
        if (w == 0) continue;
        Totals* t = out.find_or_insert(w & ~kShared);
        if (!t) continue;
        if (w & kShared)
          ++t->shared_granules;
        else
          ++t->private_granules;
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
  ShadowMemory shadow_;
};

}  // namespace weft
