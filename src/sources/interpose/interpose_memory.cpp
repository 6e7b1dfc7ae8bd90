// memcpy, memmove and memset called by the program: compilers leave these
// calls uninstrumented (ThreadSanitizer's own runtime intercepts them), so
// weft reports them as a read of the source and a write of the destination
// when the caller is the program's code. Calls from libc, libstdc++ or the
// runtime itself are passed through uncounted.
#include <stddef.h>
#include <stdint.h>

#include <atomic>

#include "sources/interpose/interpose_host.h"

namespace {

using CopyFn = void* (*)(void*, const void*, size_t);
using SetFn = void* (*)(void*, int, size_t);

// Until dlsym has resolved the real functions (dlsym may itself copy),
// byte loops do the work; volatile keeps the compiler from turning them back
// into calls to memcpy/memset.
void* bootstrap_copy(void* dst, const void* src, size_t n) {
  volatile char* d = static_cast<volatile char*>(dst);
  const volatile char* s = static_cast<const volatile char*>(src);
  if (d < s) {
    for (size_t i = 0; i < n; ++i) d[i] = s[i];
  } else {
    for (size_t i = n; i > 0; --i) d[i - 1] = s[i - 1];
  }
  return dst;
}

void* bootstrap_set(void* dst, int c, size_t n) {
  volatile char* d = static_cast<volatile char*>(dst);
  for (size_t i = 0; i < n; ++i) d[i] = static_cast<char>(c);
  return dst;
}

std::atomic<int> g_resolving{0};
std::atomic<CopyFn> g_memcpy{nullptr};
std::atomic<CopyFn> g_memmove{nullptr};
std::atomic<SetFn> g_memset{nullptr};

// The next definition of `name`, resolved on first use. The load is
// inline (every call pays it); the dlsym is not.
template <class Fn>
__attribute__((noinline)) Fn resolve_slow(std::atomic<Fn>& slot, const char* name) {
  if (g_resolving.exchange(1)) return nullptr;  // re-entered from dlsym
  Fn f = reinterpret_cast<Fn>(weft::interpose::next_symbol(name));
  slot.store(f, std::memory_order_release);
  g_resolving.store(0);
  return f;
}

template <class Fn>
inline Fn resolve(std::atomic<Fn>& slot, const char* name) {
  Fn f = slot.load(std::memory_order_acquire);
  return __builtin_expect(f != nullptr, 1) ? f : resolve_slow(slot, name);
}

// The copy and the fill themselves: the next definition, or a byte loop
// while it is being resolved.
inline void* next_copy(std::atomic<CopyFn>& slot, const char* name, void* dst, const void* src,
                       size_t n) {
  CopyFn f = resolve(slot, name);
  return f ? f(dst, src, n) : bootstrap_copy(dst, src, n);
}

inline void* next_set(void* dst, int c, size_t n) {
  SetFn f = resolve(g_memset, "memset");
  return f ? f(dst, c, n) : bootstrap_set(dst, c, n);
}

inline bool counted(uint64_t pc, size_t n) {
  return n != 0 && weft::interpose::active() && weft::interpose::is_program_pc(pc);
}

// memcpy and memmove: a read of the source and a write of the destination
// at the caller's pc, then the real copy.
void* copy(uint64_t pc, std::atomic<CopyFn>& slot, const char* name, void* dst, const void* src,
           size_t n) {
  if (counted(pc, n)) {
    weft::interpose::program_read(pc, src, n);
    weft::interpose::program_write(pc, dst, n);
  }
  return next_copy(slot, name, dst, src, n);
}

}  // namespace

// Dormant: the next definition at once, as a tail call.
WEFT_EXPORT void* memcpy(void* dst, const void* src, size_t n) {
  if (CopyFn f = g_memcpy.load(std::memory_order_relaxed); f && weft::interpose::dormant())
    return f(dst, src, n);
  return copy(WEFT_CALLER_PC, g_memcpy, "memcpy", dst, src, n);
}

WEFT_EXPORT void* memmove(void* dst, const void* src, size_t n) {
  if (CopyFn f = g_memmove.load(std::memory_order_relaxed); f && weft::interpose::dormant())
    return f(dst, src, n);
  return copy(WEFT_CALLER_PC, g_memmove, "memmove", dst, src, n);
}

WEFT_EXPORT void* memset(void* dst, int c, size_t n) {
  if (SetFn f = g_memset.load(std::memory_order_relaxed); f && weft::interpose::dormant())
    return f(dst, c, n);
  const uint64_t pc = WEFT_CALLER_PC;
  if (counted(pc, n)) weft::interpose::program_write(pc, dst, n);
  return next_set(dst, c, n);
}

// The runtime's own calls (its analyzers' copies, libstdc++'s, the
// compiler's), redirected here at link time (-Wl,--wrap in the runtime's
// CMakeLists): straight to the next definition. Through the interposers
// above they paid the caller's classification on every call, 5% of a
// CRD-bound recording (RecentGranules::visit's move-to-front memmove;
// docs/performance.md).
extern "C" __attribute__((visibility("hidden"))) void* __wrap_memcpy(void* dst, const void* src,
                                                                     size_t n) {
  return next_copy(g_memcpy, "memcpy", dst, src, n);
}

extern "C" __attribute__((visibility("hidden"))) void* __wrap_memmove(void* dst, const void* src,
                                                                      size_t n) {
  return next_copy(g_memmove, "memmove", dst, src, n);
}

extern "C" __attribute__((visibility("hidden"))) void* __wrap_memset(void* dst, int c, size_t n) {
  return next_set(dst, c, n);
}
