// Heap allocation sites: malloc, calloc, realloc, aligned_alloc,
// posix_memalign, memalign and the operator new family, when called from
// the program's own code, are recorded as (address, size, call site), so
// that the false-sharing report can name a heap line by the line of code
// that allocated its block. Calls from libraries (libstdc++'s operator new
// calling malloc, libc's internals) are not recorded; operator new is
// wrapped itself, so a C++ allocation is attributed to the `new` in the
// program. The real allocator is whatever comes next in the lookup order
// (glibc, or a replacement such as jemalloc), found with dlsym.
//
// Heap releases, by any code (docs/metrics.md, "Freed memory"): free, and
// so every operator delete (libstdc++'s and libc++'s call free), hands the
// block's usable bytes to the host before the allocator gets the block
// back; realloc, once it has moved a block (the old one), or shrunk it in
// place (the bytes given back). A move by the program's code is also the
// copy it is: a read of the old block and a write of the new one, as
// memcpy.
#include <stddef.h>
#include <stdint.h>

#include <atomic>
#include <new>

#include "sources/interpose/interpose_host.h"

namespace {

using MallocFn = void* (*)(size_t);
using CallocFn = void* (*)(size_t, size_t);
using ReallocFn = void* (*)(void*, size_t);
using AlignedFn = void* (*)(size_t, size_t);
using PosixMemalignFn = int (*)(void**, size_t, size_t);

// dlsym may allocate (calloc) while the real functions are being looked up:
// those few requests are served from this static arena, never freed.
alignas(64) char g_bootstrap[16384];
std::atomic<size_t> g_bootstrap_used{0};
// Per thread: only the thread inside dlsym must be served from the arena.
__thread int t_resolving WEFT_INITIAL_EXEC = 0;

void* bootstrap_allocate(size_t size) {
  const size_t rounded = (size + 63) & ~size_t{63};
  const size_t at = g_bootstrap_used.fetch_add(rounded);
  return at + rounded <= sizeof g_bootstrap ? g_bootstrap + at : nullptr;
}

template <class Fn>
Fn resolve(std::atomic<Fn>& slot, const char* name) {
  Fn f = slot.load(std::memory_order_acquire);
  if (f) return f;
  if (t_resolving) return nullptr;  // re-entered from dlsym
  t_resolving = 1;
  f = weft::interpose::next_function<Fn>(name);
  slot.store(f, std::memory_order_release);
  t_resolving = 0;
  return f;
}

using UsableSizeFn = size_t (*)(void*);

std::atomic<MallocFn> g_malloc{nullptr};
std::atomic<CallocFn> g_calloc{nullptr};
std::atomic<ReallocFn> g_realloc{nullptr};
std::atomic<AlignedFn> g_aligned_alloc{nullptr};
std::atomic<AlignedFn> g_memalign{nullptr};
std::atomic<PosixMemalignFn> g_posix_memalign{nullptr};
std::atomic<UsableSizeFn> g_usable_size{nullptr};

bool in_bootstrap(const void* p) {
  return p >= static_cast<const void*>(g_bootstrap) &&
         p < static_cast<const void*>(g_bootstrap + sizeof g_bootstrap);
}

// The bytes of the live block at `p` that the program may use (at least what
// it asked for); 0 for none, or when it cannot be told.
size_t usable_size(void* p) {
  if (!p || in_bootstrap(p)) return 0;
  UsableSizeFn f = resolve(g_usable_size, "malloc_usable_size");
  return f ? f(p) : 0;
}

void release(const void* p, size_t bytes) {
  if (bytes != 0) weft::interpose::release_memory(p, bytes);
}

inline void note(uint64_t pc, const void* block, size_t size) {
  if (block && weft::interpose::active() && weft::interpose::is_program_pc(pc))
    weft::interpose::record_allocation(pc, block, size);
}

void* allocate(uint64_t pc, size_t size) {
  MallocFn f = resolve(g_malloc, "malloc");
  void* p = f ? f(size) : bootstrap_allocate(size);
  note(pc, p, size);
  return p;
}

// Calls the next definition of `name` (null if it cannot be resolved yet)
// and notes the block of `size` bytes it returns as allocated at `pc`.
template <class Fn, class... Args>
void* forward(uint64_t pc, std::atomic<Fn>& slot, const char* name, size_t size, Args... args) {
  Fn f = resolve(slot, name);
  void* p = f ? f(args...) : nullptr;
  note(pc, p, size);
  return p;
}

}  // namespace

// Dormant: the next definition at once, as a tail call (once resolved).
WEFT_EXPORT void* malloc(size_t size) {
  if (MallocFn f = g_malloc.load(std::memory_order_relaxed); f && weft::interpose::dormant())
    return f(size);
  return allocate(WEFT_CALLER_PC, size);
}

WEFT_EXPORT void* calloc(size_t count, size_t size) {
  if (CallocFn f = g_calloc.load(std::memory_order_relaxed); f && weft::interpose::dormant())
    return f(count, size);
  const uint64_t pc = WEFT_CALLER_PC;
  CallocFn f = resolve(g_calloc, "calloc");
  if (!f) {  // dlsym's own calloc: the arena is zeroed
    size_t bytes = 0;
    return __builtin_mul_overflow(count, size, &bytes) ? nullptr : bootstrap_allocate(bytes);
  }
  void* p = f(count, size);
  note(pc, p, count * size);
  return p;
}

WEFT_EXPORT void* realloc(void* old, size_t size) {
  if (ReallocFn f = g_realloc.load(std::memory_order_relaxed); f && weft::interpose::dormant())
    return f(old, size);
  const uint64_t pc = WEFT_CALLER_PC;
  const size_t old_bytes = weft::interpose::active() ? usable_size(old) : 0;
  void* p = forward(pc, g_realloc, "realloc", size, old, size);
  if (old_bytes == 0 || (!p && size != 0)) return p;  // nothing watched, or failed: `old` lives
  if (p == old) {                                     // in place: what it gave back, if it shrank
    const size_t kept = usable_size(p);
    if (kept < old_bytes) release(static_cast<char*>(p) + kept, old_bytes - kept);
    return p;
  }
  if (const size_t copied = old_bytes < size ? old_bytes : size;
      p && copied != 0 && weft::interpose::is_program_pc(pc)) {
    weft::interpose::program_read(pc, old, copied);
    weft::interpose::program_write(pc, p, copied);
  }
  release(old, old_bytes);  // moved, or freed by realloc(old, 0)
  return p;
}

WEFT_EXPORT void* aligned_alloc(size_t alignment, size_t size) {
  return forward(WEFT_CALLER_PC, g_aligned_alloc, "aligned_alloc", size, alignment, size);
}

WEFT_EXPORT void* memalign(size_t alignment, size_t size) {
  return forward(WEFT_CALLER_PC, g_memalign, "memalign", size, alignment, size);
}

WEFT_EXPORT int posix_memalign(void** out, size_t alignment, size_t size) {
  const uint64_t pc = WEFT_CALLER_PC;
  PosixMemalignFn f = resolve(g_posix_memalign, "posix_memalign");
  const int error = f ? f(out, alignment, size) : 12 /* ENOMEM */;
  if (error == 0) note(pc, *out, size);
  return error;
}

// operator new and new[] (plain, nothrow, aligned): the next definition
// (libstdc++'s, which calls malloc from its own code, so not recorded twice)
// does the work and the failure handling; the program's call site is noted.
#define WEFT_OPERATOR_NEW(SYMBOL, PARAMS, ARGS, ...)                                  \
  WEFT_EXPORT void* SYMBOL PARAMS __VA_ARGS__ {                                       \
    using Fn = void*(*)PARAMS;                                                        \
    static std::atomic<Fn> next{nullptr};                                             \
    if (Fn f = next.load(std::memory_order_relaxed); f && weft::interpose::dormant()) \
      return f(WEFT_UNPAREN ARGS);                                                    \
    return forward(WEFT_CALLER_PC, next, #SYMBOL, size, WEFT_UNPAREN ARGS);           \
  }
#define WEFT_UNPAREN(...) __VA_ARGS__

WEFT_OPERATOR_NEW(_Znwm, (size_t size), (size))
WEFT_OPERATOR_NEW(_Znam, (size_t size), (size))
WEFT_OPERATOR_NEW(_ZnwmRKSt9nothrow_t, (size_t size, const std::nothrow_t& t), (size, t), noexcept)
WEFT_OPERATOR_NEW(_ZnamRKSt9nothrow_t, (size_t size, const std::nothrow_t& t), (size, t), noexcept)
WEFT_OPERATOR_NEW(_ZnwmSt11align_val_t, (size_t size, std::align_val_t a), (size, a))
WEFT_OPERATOR_NEW(_ZnamSt11align_val_t, (size_t size, std::align_val_t a), (size, a))

// Blocks handed out while dlsym was resolving the allocator are not the
// real allocator's to free.
WEFT_EXPORT void free(void* p) {
  using FreeFn = void (*)(void*);
  static std::atomic<FreeFn> next{nullptr};
  if (!p || in_bootstrap(p)) return;
  if (FreeFn f = next.load(std::memory_order_relaxed); f && weft::interpose::dormant())
    return f(p);  // dormant: the call itself
  if (weft::interpose::active()) release(p, usable_size(p));
  if (FreeFn f = resolve(next, "free")) f(p);
}
