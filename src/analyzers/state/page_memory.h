// Memory for analyzer state that lives inside the profiled program: taken
// straight from mmap so it never re-enters the program's allocator and is
// safe to obtain while a signal handler runs.
//
// Inside a program run by `weft record` the runtime installs a PageArena:
// every reservation then comes from one shared mapping, which the runtime's
// keeper process (sources/compile/keeper.h) still holds when the program
// dies without running any code of weft's (_exit, exec, SIGKILL, a stack
// overflow), so the analyzers' counts survive it.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>

namespace weft {

// Small blocks packed side by side, 64-byte aligned: per-thread states and
// what an exited thread keeps (a page each would cost 4 KiB per block and
// thread). Lock-free: a bump pointer in one reservation of address space
// taken on first use, and a free list per size (in steps of 64 bytes, up to
// 4 KiB) of the blocks given back, reused first. A larger block given back
// stays where it is (it is an exited thread's result, kept to the end).
class PackedRegion {
 public:
  static constexpr size_t kBytes = size_t{64} << 30;
  static constexpr size_t kAlign = 64;
  static constexpr size_t kListedBytes = 4096;

  // `bytes` of zeroed memory; nullptr when the region is full or cannot be
  // reserved. `reserve(bytes)` reserves the region itself.
  template <class Reserve>
  void* take(size_t bytes, Reserve&& reserve) {
    const size_t size = (bytes + kAlign - 1) & ~(kAlign - 1);
    if (size != 0 && size <= kListedBytes)
      if (void* p = pop(free_[size / kAlign - 1])) {
        __builtin_memset(p, 0, size);
        return p;
      }
    uintptr_t base = base_.load(std::memory_order_acquire);
    if (base == 0) {
      void* fresh = reserve(kBytes);
      if (fresh == nullptr) return nullptr;
      uintptr_t expected = 0;
      base = reinterpret_cast<uintptr_t>(fresh);
      if (!base_.compare_exchange_strong(expected, base, std::memory_order_acq_rel))
        base = expected;  // another thread won: its region serves (ours stays unused)
    }
    const size_t at = next_.fetch_add(size, std::memory_order_relaxed);
    if (at + size > kBytes) return nullptr;
    return reinterpret_cast<void*>(base + at);
  }
  // A block of `bytes` (as taken) is free again.
  void give_back(void* p, size_t bytes) {
    const size_t size = (bytes + kAlign - 1) & ~(kAlign - 1);
    if (size == 0 || size > kListedBytes) return;
    std::atomic<uint64_t>& list = free_[size / kAlign - 1];
    uint64_t head = list.load(std::memory_order_relaxed);
    do {
      *static_cast<uint64_t*>(p) = head & kPointer;
    } while (!list.compare_exchange_weak(head, next_tag(head) | reinterpret_cast<uintptr_t>(p),
                                         std::memory_order_release, std::memory_order_relaxed));
  }
  bool contains(const void* p) const {
    const uintptr_t base = base_.load(std::memory_order_relaxed);
    const auto a = reinterpret_cast<uintptr_t>(p);
    return base != 0 && a >= base && a < base + kBytes;
  }

 private:
  // A free list's head: the block's address, and in the top 16 bits a count
  // of its changes (a pop that read a head another thread popped and pushed
  // back meanwhile fails its exchange). A free block's first word is the
  // next one's address; blocks stay mapped, so a stale read is harmless.
  static constexpr uint64_t kPointer = (uint64_t{1} << 48) - 1;
  static uint64_t next_tag(uint64_t head) { return (head & ~kPointer) + (uint64_t{1} << 48); }
  static void* pop(std::atomic<uint64_t>& list) {
    uint64_t head = list.load(std::memory_order_acquire);
    while ((head & kPointer) != 0) {
      auto* block = reinterpret_cast<uint64_t*>(head & kPointer);
      const uint64_t next = __atomic_load_n(block, __ATOMIC_RELAXED);
      if (list.compare_exchange_weak(head, next_tag(head) | next, std::memory_order_acquire,
                                     std::memory_order_acquire))
        return block;
    }
    return nullptr;
  }

  std::atomic<uintptr_t> base_{0};
  std::atomic<size_t> next_{0};
  std::atomic<uint64_t> free_[kListedBytes / kAlign] = {};
};

// One MAP_SHARED mapping of a memfd, handed out page-aligned by a bump
// pointer (lock-free: reservations happen on the program's threads). Space
// given back has its pages freed; its addresses are not reused.
class PageArena {
 public:
  static constexpr size_t kPage = 4096;

  // A reservation of `bytes` of address space (pages cost memory only once
  // touched), with the arena object at its start; nullptr when the system
  // has no memfd or no room.
  static PageArena* create(size_t bytes);

  void* take(size_t bytes) {
    const uintptr_t size = (bytes + kPage - 1) & ~uintptr_t{kPage - 1};
    const uintptr_t at = next_.fetch_add(size, std::memory_order_relaxed);
    if (at + size > end_ || at + size < at) return nullptr;
    return reinterpret_cast<void*>(at);
  }
  bool contains(const void* p) const {
    const auto a = reinterpret_cast<uintptr_t>(p);
    return a >= base_ && a < end_;
  }
  // Frees the pages of a reservation (they read as zero if touched again).
  void give_back(void* p, size_t bytes) const {
    const size_t size = (bytes + kPage - 1) & ~size_t{kPage - 1};
    madvise(p, size, MADV_REMOVE);
  }
  // In a forked child: the arena becomes a private copy, so nothing the
  // child does reaches the parent's analyzers (or its keeper).
  void make_private() const;
  // The memory the arena's reservations hold now: its pages in memory
  // (mincore over the part handed out; given-back pages are not).
  size_t resident_bytes() const;
  PackedRegion& packed() { return packed_; }

 private:
  PackedRegion packed_;
  uintptr_t base_ = 0;
  uintptr_t end_ = 0;
  int fd_ = -1;
  std::atomic<uintptr_t> next_{0};
};

// Null except inside a recorded program (each shared object has its own:
// the runtime's symbols are hidden, weft itself never sets it).
inline PageArena* g_page_arena = nullptr;

// Reserves `bytes` of zeroed address space; pages cost memory only once
// touched. From the arena when there is one and it has room (beyond it,
// private memory: counted as before, but not kept past a sudden death).
inline void* reserve_zeroed(size_t bytes) {
  if (PageArena* arena = g_page_arena)
    if (void* p = arena->take(bytes)) return p;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

// Outside an arena (the weft process, tests), packed blocks come from here.
inline PackedRegion g_packed_region;

// `bytes` of zeroed memory packed beside other small blocks (PackedRegion),
// from the arena when there is one; never given back. Falls back to pages
// of its own when the region is full.
inline void* reserve_packed(size_t bytes) {
  PageArena* arena = g_page_arena;
  PackedRegion& region = arena ? arena->packed() : g_packed_region;
  void* p = region.take(bytes, [&](size_t region_bytes) -> void* {
    if (arena) return arena->take(region_bytes);
    void* fresh = mmap(nullptr, region_bytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return fresh == MAP_FAILED ? nullptr : fresh;
  });
  return p ? p : reserve_zeroed(bytes);
}

inline bool is_packed(const void* p) {
  if (PageArena* arena = g_page_arena; arena && arena->packed().contains(p)) return true;
  return g_packed_region.contains(p);
}

// Gives back a reservation of `bytes`: a packed block to its free list, a
// page reservation's pages to the system.
inline void release(void* p, size_t bytes) {
  if (!p) return;
  if (PageArena* arena = g_page_arena; arena && arena->packed().contains(p)) {
    arena->packed().give_back(p, bytes);
    return;
  }
  if (g_packed_region.contains(p)) {
    g_packed_region.give_back(p, bytes);
    return;
  }
  if (PageArena* arena = g_page_arena; arena && arena->contains(p))
    arena->give_back(p, bytes);
  else
    munmap(p, bytes);
}

// Frees the pages of [p, p + bytes) but keeps the addresses usable: they
// read as zero when touched again (page-aligned `p`).
inline void forget_pages(void* p, size_t bytes) {
  if (!p || is_packed(p)) return;
  if (PageArena* arena = g_page_arena; arena && arena->contains(p))
    arena->give_back(p, bytes);
  else
    madvise(p, (bytes + PageArena::kPage - 1) & ~(PageArena::kPage - 1), MADV_DONTNEED);
}

inline PageArena* PageArena::create(size_t bytes) {
  const int fd = memfd_create("weft-analyzers", MFD_CLOEXEC);
  if (fd < 0) return nullptr;
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    close(fd);
    return nullptr;
  }
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
  if (p == MAP_FAILED) {
    close(fd);
    return nullptr;
  }
  // A core dump of the program must not try to write terabytes of holes.
  madvise(p, bytes, MADV_DONTDUMP);
  auto* arena = new (p) PageArena;
  arena->base_ = reinterpret_cast<uintptr_t>(p);
  arena->end_ = arena->base_ + bytes;
  arena->fd_ = fd;
  arena->next_.store(arena->base_ + kPage);
  return arena;
}

inline size_t PageArena::resident_bytes() const {
  // In steps of 64 MiB of address space: a small vector, no allocation.
  constexpr size_t kStepPages = 16384;
  unsigned char in_core[kStepPages];
  size_t resident = 0;
  const uintptr_t used_end = next_.load(std::memory_order_relaxed);
  const uintptr_t end = used_end < end_ ? used_end : end_;
  for (uintptr_t at = base_; at < end; at += kStepPages * kPage) {
    const size_t bytes = end - at < kStepPages * kPage ? end - at : kStepPages * kPage;
    if (mincore(reinterpret_cast<void*>(at), bytes, in_core) != 0) continue;
    for (size_t i = 0; i < (bytes + kPage - 1) / kPage; ++i) resident += in_core[i] & 1;
  }
  return resident * kPage;
}

inline void PageArena::make_private() const {
  mmap(reinterpret_cast<void*>(base_), end_ - base_, PROT_READ | PROT_WRITE,
       MAP_PRIVATE | MAP_FIXED | MAP_NORESERVE, fd_, 0);
  madvise(reinterpret_cast<void*>(base_), end_ - base_, MADV_DONTDUMP);
}

}  // namespace weft
