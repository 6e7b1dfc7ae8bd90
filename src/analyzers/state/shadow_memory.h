// ShadowMemory: one 64-bit atomic word per granule of the user address space.
// Two levels: a directory of 2^23 chunk pointers (one per 16 MiB of program
// address space, 64 MiB reserved, touched sparsely) and chunks allocated on
// first touch. Only chunks the program touches cost memory, and within a
// chunk only the pages whose granules were touched: at 64-byte granules the
// shadow is 1/8 of the touched memory.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace weft {

class ShadowMemory {
 public:
  static constexpr unsigned kAddressBits = 47;  // x86-64 user space
  static constexpr unsigned kChunkBits = 24;
  static constexpr uintptr_t kChunkCount = uintptr_t{1} << (kAddressBits - kChunkBits);
  static constexpr uintptr_t kChunkMask = (uintptr_t{1} << kChunkBits) - 1;

  explicit ShadowMemory(unsigned granularity_log2);
  ~ShadowMemory();
  ShadowMemory(const ShadowMemory&) = delete;
  ShadowMemory& operator=(const ShadowMemory&) = delete;

  unsigned granularity_log2() const { return granularity_log2_; }

  // The word of the granule holding `addr`, or nullptr outside user space.
  std::atomic<uint64_t>* word(uintptr_t addr) {
    const uintptr_t chunk = addr >> kChunkBits;
    if (chunk >= kChunkCount) return nullptr;
    std::atomic<uint64_t>* base = directory_[chunk].load(std::memory_order_acquire);
    if (__builtin_expect(base == nullptr, 0)) base = allocate_chunk(chunk);
    if (base == nullptr) return nullptr;
    return base + ((addr & kChunkMask) >> granularity_log2_);
  }

  // The word if its chunk exists (no allocation); nullptr otherwise.
  const std::atomic<uint64_t>* word_if_present(uintptr_t addr) const {
    const uintptr_t chunk = addr >> kChunkBits;
    if (chunk >= kChunkCount) return nullptr;
    const std::atomic<uint64_t>* base = directory_[chunk].load(std::memory_order_acquire);
    return base ? base + ((addr & kChunkMask) >> granularity_log2_) : nullptr;
  }

  // Visits every allocated chunk: visit(first address it shadows, its
  // words, word count). Call when no thread is allocating chunks.
  template <class Visitor>
  void for_each_chunk(Visitor&& visit) const {
    if (!directory_) return;
    const size_t words = chunk_bytes_ / sizeof(uint64_t);
    size_t left = chunks_allocated();
    for (uintptr_t i = 0; i < kChunkCount && left > 0; ++i) {
      if (const auto* base = directory_[i].load(std::memory_order_acquire)) {
        visit(i << kChunkBits, base, words);
        --left;
      }
    }
  }

  size_t chunks_allocated() const { return chunks_allocated_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t>* allocate_chunk(uintptr_t chunk);

  unsigned granularity_log2_;
  size_t chunk_bytes_;
  std::atomic<std::atomic<uint64_t>*>* directory_;
  std::atomic<size_t> chunks_allocated_{0};
};

}  // namespace weft
