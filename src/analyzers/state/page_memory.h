// Memory for analyzer state that lives inside the profiled program: taken
// straight from mmap so it never re-enters the program's allocator and is
// safe to obtain while a signal handler runs.
#pragma once

#include <sys/mman.h>

#include <cstddef>

namespace weft {

// Reserves `bytes` of zeroed address space; pages cost memory only once touched.
inline void* reserve_zeroed(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

inline void release(void* p, size_t bytes) {
  if (p) munmap(p, bytes);
}

}  // namespace weft
