// ShadowTable<Cell>: one Cell per granule of the user address space, for
// the analyzers' per-granule state. Three levels, all allocated on first
// touch except the root: a root of 2^12 pointers (32 KiB, the only fixed
// part), directories of 2^11 chunk pointers (16 KiB, one per 32 GiB of
// program address space) and chunks of cells (one per 16 MiB of program
// address space). Nothing proportional to the address space is reserved;
// within a chunk only the pages whose granules were touched cost memory.
//
// The walk costs three dependent loads, so the hot paths go through a
// per-thread ChunkCache instead: a few recently used chunks, checked with
// one compare (chunks are never freed while the table lives, so an entry
// stays valid).
//
// ShadowMemory (one 64-bit atomic word per granule: at 64-byte granules
// 1/8 of the touched memory) is the communication analyzer's and the
// sharing footprint's; the false-sharing detector keeps two words per line.
// A Cell must be valid when all its bytes are zero (chunks come from mmap).
//
// Released heap memory (docs/metrics.md, "Freed memory") is forgotten through
// for_each_cell_inside: the cells of the granules lying entirely inside a
// range, found without allocating and, for a large range, only in the pages
// of cells that were ever populated.
#pragma once

#include <sys/mman.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "analyzers/state/page_memory.h"

namespace weft {

// Recently used chunks of one ShadowTable, owned by one thread: direct
// mapped on a hash of the chunk number (slot()).
struct ShadowChunkCache {
  static constexpr unsigned kEntries = 8;
  // A chunk's entry. Not its low bits alone: the main thread's stack
  // (chunk 0x7fffff) and the first mmap'ed blocks below the libraries
  // (0x7ffff7, with the address space laid out as `setarch -R` does) have
  // the same low bits, and a loop that reads a shared variable on the main
  // thread's stack beside a large array (an OpenMP region's `points->dim`
  // beside the points) missed here on every read.
  static unsigned slot(uintptr_t chunk) {
    return static_cast<unsigned>(chunk + (chunk >> 3)) % kEntries;
  }
  struct Entry {
    uintptr_t chunk = ~uintptr_t{0};  // chunk number (address >> chunk bits); ~0: empty
    void* base = nullptr;
  };
  Entry entries[kEntries];
};

template <class Cell>
class ShadowTable {
 public:
  static constexpr unsigned kAddressBits = 47;  // x86-64 user space
  static constexpr unsigned kChunkBits = 24;    // 16 MiB of program memory per chunk
  static constexpr unsigned kDirectoryBits = 11;
  static constexpr unsigned kRootBits = kAddressBits - kChunkBits - kDirectoryBits;
  static constexpr uintptr_t kChunkCount = uintptr_t{1} << (kAddressBits - kChunkBits);
  static constexpr uintptr_t kChunkMask = (uintptr_t{1} << kChunkBits) - 1;
  static constexpr size_t kRootEntries = size_t{1} << kRootBits;
  static constexpr size_t kDirectoryEntries = size_t{1} << kDirectoryBits;
  using Directory = std::atomic<Cell*>;

  explicit ShadowTable(unsigned granularity_log2)
      : granularity_log2_(granularity_log2),
        chunk_bytes_((size_t{1} << (kChunkBits - granularity_log2)) * sizeof(Cell)),
        root_(static_cast<std::atomic<Directory*>*>(
            reserve_zeroed(kRootEntries * sizeof(std::atomic<Directory*>)))) {}

  ~ShadowTable() {
    if (!root_) return;
    for (size_t r = 0; r < kRootEntries; ++r) {
      Directory* directory = root_[r].load(std::memory_order_relaxed);
      if (!directory) continue;
      for (size_t d = 0; d < kDirectoryEntries; ++d)
        release(directory[d].load(std::memory_order_relaxed), chunk_bytes_);
      release(directory, kDirectoryEntries * sizeof(Directory));
    }
    release(root_, kRootEntries * sizeof(std::atomic<Directory*>));
  }
  ShadowTable(const ShadowTable&) = delete;
  ShadowTable& operator=(const ShadowTable&) = delete;

  unsigned granularity_log2() const { return granularity_log2_; }

  // Whether `addr` is in the user address space the table covers.
  static bool covers(uintptr_t addr) { return (addr >> kChunkBits) < kChunkCount; }

  // Sets `cell` to the cell of `addr` when its chunk is in `cache`. The hot
  // path: one compare, no walk (and a test the compiler sees through, not a
  // null cell). Addresses the table does not cover are never cached.
  template <class C>
  static bool find_cached(const ShadowChunkCache& cache, unsigned granularity_log2, uintptr_t addr,
                          C*& cell) {
    const uintptr_t chunk = addr >> kChunkBits;
    const ShadowChunkCache::Entry& e = cache.entries[ShadowChunkCache::slot(chunk)];
    if (__builtin_expect(e.chunk != chunk, 0)) return false;
    cell = static_cast<Cell*>(e.base) + ((addr & kChunkMask) >> granularity_log2);
    return true;
  }

  // The cell of the granule holding `addr`, its chunk allocated if needed;
  // nullptr outside user space or out of memory.
  Cell* word(uintptr_t addr) {
    Cell* base = chunk_base(addr >> kChunkBits);
    return base ? base + ((addr & kChunkMask) >> granularity_log2_) : nullptr;
  }

  // Likewise, and remembers the chunk in `cache`.
  Cell* word(uintptr_t addr, ShadowChunkCache& cache) {
    Cell* cell;
    if (find_cached(cache, granularity_log2_, addr, cell)) return cell;
    const uintptr_t chunk = addr >> kChunkBits;
    Cell* base = chunk_base(chunk);
    if (!base) return nullptr;
    cache.entries[ShadowChunkCache::slot(chunk)] = {chunk, base};
    return base + ((addr & kChunkMask) >> granularity_log2_);
  }

  // Visits the cells of the granules lying entirely inside [begin, end)
  // that may hold state, without allocating anything: chunks never
  // allocated are skipped, and so, where the range's cells span more than
  // two pages, are the pages of cells the kernel never populated (mincore),
  // so that the cost follows the memory the program touched, not the
  // range's length. visit(cells, count) per run of consecutive cells; the
  // visitor may change them.
  template <class Visitor>
  void for_each_cell_inside(uintptr_t begin, uintptr_t end, Visitor&& visit) {
    const unsigned g = granularity_log2_;
    uintptr_t granule = (begin >> g) + ((begin & ((uintptr_t{1} << g) - 1)) != 0);
    const uintptr_t past = end >> g;  // one past the last granule entirely inside
    const unsigned per_chunk_log2 = kChunkBits - g;
    while (granule < past) {
      const uintptr_t chunk = granule >> per_chunk_log2;
      if (chunk >= kChunkCount) return;
      const uintptr_t chunk_past = (chunk + 1) << per_chunk_log2;
      const uintptr_t stop = past < chunk_past ? past : chunk_past;
      if (Cell* base = existing_chunk(chunk))
        visit_populated(base + (granule & ((uintptr_t{1} << per_chunk_log2) - 1)), stop - granule,
                        visit);
      granule = stop;
    }
  }

  // Visits every allocated chunk: visit(first address it shadows, its
  // cells, cell count). Call when no thread is allocating chunks.
  template <class Visitor>
  void for_each_chunk(Visitor&& visit) const {
    if (!root_) return;
    const size_t cells = chunk_bytes_ / sizeof(Cell);
    for (size_t r = 0; r < kRootEntries; ++r) {
      const Directory* directory = root_[r].load(std::memory_order_acquire);
      if (!directory) continue;
      for (size_t d = 0; d < kDirectoryEntries; ++d)
        if (const Cell* base = directory[d].load(std::memory_order_acquire))
          visit(((r << kDirectoryBits) | d) << kChunkBits, base, cells);
    }
  }

 private:
  static constexpr uintptr_t kPageBytes = 4096;

  // The chunk's cells if it was ever allocated, else nullptr.
  Cell* existing_chunk(uintptr_t chunk) const {
    if (!root_) return nullptr;
    const Directory* directory = root_[chunk >> kDirectoryBits].load(std::memory_order_acquire);
    return directory ? directory[chunk & (kDirectoryEntries - 1)].load(std::memory_order_acquire)
                     : nullptr;
  }

  // for_each_cell_inside within one chunk: `count` cells from `cells`.
  template <class Visitor>
  static void visit_populated(Cell* cells, size_t count, Visitor& visit) {
    const auto first = reinterpret_cast<uintptr_t>(cells);
    const uintptr_t last = first + count * sizeof(Cell);
    const uintptr_t first_page = first & ~(kPageBytes - 1);
    const size_t pages = (last - first_page + kPageBytes - 1) / kPageBytes;
    if (pages <= 2) {
      visit(cells, count);
      return;
    }
    // A window of pages at a time; runs of populated pages are visited whole.
    constexpr size_t kWindow = 1024;
    unsigned char populated[kWindow];
    for (size_t done = 0; done < pages; done += kWindow) {
      const size_t n = pages - done < kWindow ? pages - done : kWindow;
      const uintptr_t window = first_page + done * kPageBytes;
      if (mincore(reinterpret_cast<void*>(window), n * kPageBytes, populated) != 0)
        for (size_t i = 0; i < n; ++i) populated[i] = 1;  // cannot tell: look at every page
      for (size_t i = 0; i < n;) {
        if (!(populated[i] & 1)) {
          ++i;
          continue;
        }
        size_t j = i + 1;
        while (j < n && (populated[j] & 1)) ++j;
        uintptr_t lo = window + i * kPageBytes, hi = window + j * kPageBytes;
        lo = lo > first ? lo : first;
        hi = hi < last ? hi : last;
        visit(reinterpret_cast<Cell*>(lo), (hi - lo) / sizeof(Cell));
        i = j;
      }
    }
  }

  // The chunk's cells, allocated (with its directory) on first use;
  // nullptr outside user space or out of memory.
  Cell* chunk_base(uintptr_t chunk) {
    if (chunk >= kChunkCount || !root_) return nullptr;
    std::atomic<Directory*>& slot = root_[chunk >> kDirectoryBits];
    Directory* directory = slot.load(std::memory_order_acquire);
    if (__builtin_expect(directory == nullptr, 0)) {
      directory = install(slot, kDirectoryEntries * sizeof(Directory));
      if (!directory) return nullptr;
    }
    Directory& entry = directory[chunk & (kDirectoryEntries - 1)];
    Cell* base = entry.load(std::memory_order_acquire);
    if (__builtin_expect(base == nullptr, 0)) base = install(entry, chunk_bytes_);
    return base;
  }

  // Publishes fresh zeroed memory in `slot` unless another thread did first;
  // returns what the slot holds.
  template <class T>
  __attribute__((noinline)) T* install(std::atomic<T*>& slot, size_t bytes) {
    auto* fresh = static_cast<T*>(reserve_zeroed(bytes));
    if (!fresh) return slot.load(std::memory_order_acquire);
    T* expected = nullptr;
    if (slot.compare_exchange_strong(expected, fresh, std::memory_order_acq_rel)) return fresh;
    release(fresh, bytes);  // another thread won the race
    return expected;
  }

  unsigned granularity_log2_;
  size_t chunk_bytes_;
  std::atomic<Directory*>* root_;
};

using ShadowMemory = ShadowTable<std::atomic<uint64_t>>;

}  // namespace weft
