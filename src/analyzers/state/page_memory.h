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

 private:
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

inline void release(void* p, size_t bytes) {
  if (!p) return;
  if (PageArena* arena = g_page_arena; arena && arena->contains(p))
    arena->give_back(p, bytes);
  else
    munmap(p, bytes);
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

inline void PageArena::make_private() const {
  mmap(reinterpret_cast<void*>(base_), end_ - base_, PROT_READ | PROT_WRITE,
       MAP_PRIVATE | MAP_FIXED | MAP_NORESERVE, fd_, 0);
  madvise(reinterpret_cast<void*>(base_), end_ - base_, MADV_DONTDUMP);
}

}  // namespace weft
