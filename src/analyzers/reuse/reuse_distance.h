// ReuseDistanceAnalyzer: per thread, the LRU stack distance in granules of
// every access, counted per (instruction, locality, bin) of the thread
// (docs/metrics.md, "Reuse distance"). Locality is the granule owner's: the
// thread that touched the granule first, or the one a declared distribution
// names (include/weft/distribution.h).
//
// Exact: each thread keeps its own PairReuseTrace (the CRD's trace of
// granules, a Fenwick tree over the times of their latest accesses), so a
// distance costs O(log distinct granules). Sampled (a budget of traced
// granules, as the CRD's): when a thread has traced more distinct granules
// than the budget, its rate halves (SHARDS with a fixed size): only granules
// whose hash has its top `shift` bits clear stay traced, their distances
// scaled by 2^shift, their counts weighted by 2^shift; distances below 64
// stay exact for every granule (the trace's recent granules).
//
// Hot path: the owner's word (one 32-bit cell per granule, set by CAS on
// first touch), the trace, one hash-table increment; no lock, no allocation
// but the mmap'd tables' growth, no virtual call.
#pragma once

#include <atomic>
#include <cstdint>
#include <new>

#include "analyzers/crd/communication_reuse_distance.h"
#include "analyzers/reuse/reuse_records.h"
#include "analyzers/state/paged_hash_table.h"
#include "analyzers/state/per_thread_slot.h"
#include "analyzers/state/shadow_memory.h"
#include "common/reuse_histogram.h"

namespace weft {

struct ReuseConfig {
  unsigned max_threads = 1024;
  unsigned granularity_log2 = 6;
  // Distinct granules a thread traces before its sampling rate halves; 0:
  // every granule (exact).
  uint64_t sample_granules = 0;
};

class ReuseDistanceAnalyzer {
 public:
  // A count table entry: key = pc << 16 | locality << 15 | bin.
  struct BinCount {
    uint64_t key = 0;
    uint64_t count = 0;
    double distance_sum = 0;
  };
  static constexpr uint32_t kBinMask = 0x7fff;

  struct ThreadState {
    uint32_t tid = 0;
    uint32_t owner_tag = 0;  // tid + 1, as the owner cells hold it
    unsigned sample_shift = 0;
    uint64_t traced = 0;   // distinct granules in the trace
    uint64_t dropped = 0;  // accesses not counted (no memory)
    PairReuseTrace trace{0};
    ShadowChunkCache chunks;
    PagedHashTable<BinCount> bins;
  };

  explicit ReuseDistanceAnalyzer(const ReuseConfig& config)
      : config_(config),
        budget_(config.sample_granules ? config.sample_granules : ~uint64_t{0}),
        owners_(config.granularity_log2),
        states_(config.max_threads) {}

  const ReuseConfig& config() const { return config_; }

  // The state of thread `tid`, created on first attach; null beyond
  // max_threads or out of memory.
  ThreadState* attach(uint32_t tid) {
    return states_.attach(tid, [tid](ThreadState& s) {
      s.tid = tid;
      s.owner_tag = tid + 1;
      return true;
    });
  }

  __attribute__((always_inline)) void access(ThreadState& t, uint64_t pc, uint64_t addr) {
    const uint64_t granule = addr >> config_.granularity_log2;
    const uint64_t locality = remote(t, addr) ? uint64_t{1} << 15 : 0;
    if (__builtin_expect(t.sample_shift != 0, 0)) return sampled_access(t, pc, granule, locality);
    const uint64_t distance = t.trace.record(granule);
    if (distance == PairReuseTrace::kFirstEvent) {
      count(t, pc, locality | kColdBin, 0, 1);
      if (__builtin_expect(++t.traced > budget_, 0)) lower_rate(t);
    } else if (distance < PairReuseTrace::kOutOfMemory) {
      count(t, pc, locality | reuse_bin(distance), distance, 1);
    } else {
      ++t.dropped;
    }
  }

  // The program declared who owns [base, base + element_size * count): the
  // owner cells of its granules are set (each by the owner of the element
  // at its first byte, or at `base` for the first granule).
  void declare(const DistributionDeclaration& d);

  // Thread `tid` exited: its trace goes, its counts stay.
  void finish_thread(uint32_t tid);

  // Visits every count as a ReuseBinRecord. Call when no thread accesses.
  template <class Visitor>
  void for_each_count(Visitor&& visit) const {
    states_.for_each([&](const ThreadState& t) {
      t.bins.for_each([&](const BinCount& c) {
        const auto bin = static_cast<uint16_t>(c.key & kBinMask);
        visit(ReuseBinRecord{c.key >> 16, t.tid, bin, static_cast<uint8_t>((c.key >> 15) & 1), 0,
                             c.count, c.distance_sum});
      });
    });
  }

  uint64_t dropped() const {
    uint64_t n = 0;
    states_.for_each([&](const ThreadState& t) { n += t.dropped; });
    return n;
  }
  // The lowest sampling rate of any thread, as its shift (0: exact).
  unsigned max_sample_shift() const {
    unsigned shift = 0;
    states_.for_each([&](const ThreadState& t) {
      if (t.sample_shift > shift) shift = t.sample_shift;
    });
    return shift;
  }

 private:
  static constexpr uint64_t kColdBin = kReuseColdBin;

  // Whether the granule of `addr` belongs to another thread; its first
  // toucher becomes its owner.
  __attribute__((always_inline)) bool remote(ThreadState& t, uint64_t addr) {
    std::atomic<uint32_t>* cell = owners_.word(addr, t.chunks);
    if (__builtin_expect(cell == nullptr, 0)) return false;
    uint32_t owner = cell->load(std::memory_order_relaxed);
    if (__builtin_expect(owner == 0, 0)) {
      // The first touch; a racing first touch of another thread wins.
      if (cell->compare_exchange_strong(owner, t.owner_tag, std::memory_order_relaxed))
        return false;
    }
    return owner != t.owner_tag;
  }

  __attribute__((always_inline)) void count(ThreadState& t, uint64_t pc, uint64_t locality_bin,
                                            uint64_t distance, uint64_t weight) {
    if (BinCount* c = t.bins.find_or_insert(pc << 16 | locality_bin)) {
      c->count += weight;
      c->distance_sum += static_cast<double>(distance) * static_cast<double>(weight);
    } else {
      t.dropped += weight;
    }
  }

  void sampled_access(ThreadState& t, uint64_t pc, uint64_t granule, uint64_t locality);
  void lower_rate(ThreadState& t);

  ReuseConfig config_;
  uint64_t budget_;
  ShadowTable<std::atomic<uint32_t>> owners_;  // owner thread id + 1; 0: untouched
  PerThreadStates<ThreadState> states_;
};

}  // namespace weft
