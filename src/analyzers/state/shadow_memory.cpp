#include "analyzers/state/shadow_memory.h"

#include "analyzers/state/page_memory.h"

namespace weft {

ShadowMemory::ShadowMemory(unsigned granularity_log2)
    : granularity_log2_(granularity_log2),
      chunk_bytes_((size_t{1} << (kChunkBits - granularity_log2)) * sizeof(uint64_t)),
      directory_(static_cast<std::atomic<std::atomic<uint64_t>*>*>(
          reserve_zeroed(kChunkCount * sizeof(void*)))) {}

ShadowMemory::~ShadowMemory() {
  if (!directory_) return;
  for (uintptr_t i = 0; i < kChunkCount && chunks_allocated_.load() > 0; ++i) {
    // Only pages of the directory that were touched hold non-null entries;
    // scanning reads zero pages, which the kernel maps without allocating.
    if (auto* c = directory_[i].load(std::memory_order_relaxed)) {
      release(c, chunk_bytes_);
      chunks_allocated_.fetch_sub(1);
    }
  }
  release(directory_, kChunkCount * sizeof(void*));
}

std::atomic<uint64_t>* ShadowMemory::allocate_chunk(uintptr_t chunk) {
  if (!directory_) return nullptr;
  auto* fresh = static_cast<std::atomic<uint64_t>*>(reserve_zeroed(chunk_bytes_));
  if (!fresh) return nullptr;
  std::atomic<uint64_t>* expected = nullptr;
  if (directory_[chunk].compare_exchange_strong(expected, fresh, std::memory_order_acq_rel)) {
    chunks_allocated_.fetch_add(1, std::memory_order_relaxed);
    return fresh;
  }
  release(fresh, chunk_bytes_);  // another thread won the race
  return expected;
}

}  // namespace weft
