// ShadowTable<Cell>: one Cell per granule of the user address space, for
// the analyzers' per-granule state. Two levels: a directory of 2^23 chunk
// pointers (one per 16 MiB of program address space, 64 MiB reserved,
// touched sparsely) and chunks allocated on first touch. Only chunks the
// program touches cost memory, and within a chunk only the pages whose
// granules were touched.
//
// ShadowMemory (one 64-bit atomic word per granule: at 64-byte granules
// 1/8 of the touched memory) is the communication analyzer's and the
// sharing footprint's; the false-sharing detector keeps two words per line.
// A Cell must be valid when all its bytes are zero (chunks come from mmap).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "analyzers/state/page_memory.h"

namespace weft {

template <class Cell>
class ShadowTable {
 public:
  static constexpr unsigned kAddressBits = 47;  // x86-64 user space
  static constexpr unsigned kChunkBits = 24;
  static constexpr uintptr_t kChunkCount = uintptr_t{1} << (kAddressBits - kChunkBits);
  static constexpr uintptr_t kChunkMask = (uintptr_t{1} << kChunkBits) - 1;

  explicit ShadowTable(unsigned granularity_log2)
      : granularity_log2_(granularity_log2),
        chunk_bytes_((size_t{1} << (kChunkBits - granularity_log2)) * sizeof(Cell)),
        directory_(static_cast<std::atomic<Cell*>*>(
            reserve_zeroed(kChunkCount * sizeof(std::atomic<Cell*>)))) {}

  ~ShadowTable() {
    if (!directory_) return;
    for (uintptr_t i = 0; i < kChunkCount && chunks_allocated_.load() > 0; ++i) {
      // Only pages of the directory that were touched hold non-null entries;
      // scanning reads zero pages, which the kernel maps without allocating.
      if (Cell* c = directory_[i].load(std::memory_order_relaxed)) {
        release(c, chunk_bytes_);
        chunks_allocated_.fetch_sub(1);
      }
    }
    release(directory_, kChunkCount * sizeof(std::atomic<Cell*>));
  }
  ShadowTable(const ShadowTable&) = delete;
  ShadowTable& operator=(const ShadowTable&) = delete;

  unsigned granularity_log2() const { return granularity_log2_; }

  // Whether `addr` is in the user address space the table covers.
  static bool covers(uintptr_t addr) { return (addr >> kChunkBits) < kChunkCount; }

  // The cell of the granule holding `addr`, its chunk allocated if needed;
  // nullptr outside user space or out of memory.
  Cell* word(uintptr_t addr) {
    const uintptr_t chunk = addr >> kChunkBits;
    if (chunk >= kChunkCount) return nullptr;
    Cell* base = directory_[chunk].load(std::memory_order_acquire);
    if (__builtin_expect(base == nullptr, 0)) base = allocate_chunk(chunk);
    if (base == nullptr) return nullptr;
    return base + ((addr & kChunkMask) >> granularity_log2_);
  }

  // The cell if its chunk exists (no allocation); nullptr otherwise.
  const Cell* word_if_present(uintptr_t addr) const {
    const uintptr_t chunk = addr >> kChunkBits;
    if (chunk >= kChunkCount) return nullptr;
    const Cell* base = directory_[chunk].load(std::memory_order_acquire);
    return base ? base + ((addr & kChunkMask) >> granularity_log2_) : nullptr;
  }

  // Visits every allocated chunk: visit(first address it shadows, its
  // cells, cell count). Call when no thread is allocating chunks.
  template <class Visitor>
  void for_each_chunk(Visitor&& visit) const {
    if (!directory_) return;
    const size_t cells = chunk_bytes_ / sizeof(Cell);
    size_t left = chunks_allocated();
    for (uintptr_t i = 0; i < kChunkCount && left > 0; ++i) {
      if (const Cell* base = directory_[i].load(std::memory_order_acquire)) {
        visit(i << kChunkBits, base, cells);
        --left;
      }
    }
  }

  size_t chunks_allocated() const { return chunks_allocated_.load(std::memory_order_relaxed); }

 private:
  __attribute__((noinline)) Cell* allocate_chunk(uintptr_t chunk) {
    if (!directory_) return nullptr;
    auto* fresh = static_cast<Cell*>(reserve_zeroed(chunk_bytes_));
    if (!fresh) return nullptr;
    Cell* expected = nullptr;
    if (directory_[chunk].compare_exchange_strong(expected, fresh, std::memory_order_acq_rel)) {
      chunks_allocated_.fetch_add(1, std::memory_order_relaxed);
      return fresh;
    }
    release(fresh, chunk_bytes_);  // another thread won the race
    return expected;
  }

  unsigned granularity_log2_;
  size_t chunk_bytes_;
  std::atomic<Cell*>* directory_;
  std::atomic<size_t> chunks_allocated_{0};
};

using ShadowMemory = ShadowTable<std::atomic<uint64_t>>;

}  // namespace weft
