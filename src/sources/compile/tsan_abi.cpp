// The ThreadSanitizer instrumentation ABI, as emitted by gcc and clang with
// -fsanitize=thread, implemented as weft events: module initialization,
// annotations and atomics here; the plain, unaligned, volatile and range
// accesses and the coverage callback in access_hooks.cpp (linked into each
// instrumented module), which passes what it does not decide inline to the
// entry points below. Atomics perform the real operation (sequentially
// consistent, which is at least as strong as requested) and then report it;
// their writes are reported as atomic (never an unsynchronised write).
#include <cstddef>
#include <cstdint>

#include "sources/compile/runtime.h"

using weft::rt::ThreadContext;

using weft::rt::on_read;
using weft::rt::on_write;

WEFT_EXPORT void weft_module_init(const void* address_inside, bool* recording, uint64_t layout) {
  weft::rt::initialize();
  if (layout != weft::inline_layout_fingerprint()) {
    *recording = false;
    weft::rt::write_stderr(
        "weft: a module's hooks were built by another version of weft (its accesses are not "
        "recorded); rebuild it with this weft-cc/weft-c++/weft-fortran");
    return;
  }
  weft::rt::register_instrumented_module(address_inside, recording);
}

// The accesses and blocks the inline hooks (access_hooks.cpp, linked into
// each instrumented module) pass on: every analyzer sees them.
WEFT_EXPORT void weft_access_read(uint64_t pc, const volatile void* a, size_t n) {
  on_read(pc, a, n);
}
WEFT_EXPORT void weft_access_write(uint64_t pc, const volatile void* a, size_t n) {
  on_write(pc, a, n);
}
WEFT_EXPORT void weft_access_remaining(uint64_t pc, const volatile void* a, size_t n, bool is_write,
                                       uint32_t remaining) {
  if (ThreadContext* t = weft_thread_context)
    weft::rt::g_session->feed_access_remaining(*t, pc, reinterpret_cast<uintptr_t>(a),
                                               static_cast<uint32_t>(n), is_write, remaining);
}
WEFT_EXPORT void weft_block(uint64_t pc) {
  ThreadContext* t = weft_thread_context;
  if (!t) return;
  if (auto* counts = t->imbalance.load(std::memory_order_relaxed))
    weft::rt::g_analyzers.imbalance->block(*counts, pc, 0);
}

// Annotations some libraries emit; they carry no memory access.
WEFT_EXPORT void __tsan_acquire(void*) {}
WEFT_EXPORT void __tsan_release(void*) {}
WEFT_EXPORT void __tsan_ignore_thread_begin() {}
WEFT_EXPORT void __tsan_ignore_thread_end() {}
WEFT_EXPORT void __tsan_mutex_create(void*, unsigned) {}
WEFT_EXPORT void __tsan_mutex_destroy(void*, unsigned) {}
WEFT_EXPORT void __tsan_mutex_pre_lock(void*, unsigned) {}
WEFT_EXPORT void __tsan_mutex_post_lock(void*, unsigned, int) {}
WEFT_EXPORT int __tsan_mutex_pre_unlock(void*, unsigned) { return 0; }
WEFT_EXPORT void __tsan_mutex_post_unlock(void*, unsigned) {}
WEFT_EXPORT void __tsan_mutex_pre_signal(void*, unsigned) {}
WEFT_EXPORT void __tsan_mutex_post_signal(void*, unsigned) {}
WEFT_EXPORT void __tsan_mutex_pre_divert(void*, unsigned) {}
WEFT_EXPORT void __tsan_mutex_post_divert(void*, unsigned) {}

// ---- atomics ---------------------------------------------------------------

using a8 = uint8_t;
using a16 = uint16_t;
using a32 = uint32_t;
using a64 = uint64_t;
using a128 = unsigned __int128;
using morder = int;

// Stores and read-modify-writes are seen before they take effect, like the
// plain accesses the instrumentation reports before executing them: a
// thread that sees the new value must find the write already accounted (a
// spin wait's release, docs/metrics.md "Spin waits").
#define WEFT_ATOMIC_RMW(T, N, NAME, BUILTIN)                            \
  WEFT_EXPORT T __tsan_atomic##N##_##NAME(volatile T* a, T v, morder) { \
    const uint64_t pc = WEFT_CALLER_PC;                                 \
    on_read(pc, a, sizeof(T));                                          \
    on_write(pc, a, sizeof(T), true);                                   \
    return BUILTIN(a, v, __ATOMIC_SEQ_CST);                             \
  }

// A compare-and-swap reads the location, and writes it only when it succeeds.
template <class T>
bool compare_exchange(volatile T* a, T* expected, T desired, uint64_t pc) {
  const bool ok =
      __atomic_compare_exchange_n(a, expected, desired, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  on_read(pc, a, sizeof(T));
  if (ok) on_write(pc, a, sizeof(T), true);
  return ok;
}

#define WEFT_ATOMICS(T, N)                                                                         \
  WEFT_EXPORT T __tsan_atomic##N##_load(const volatile T* a, morder) {                             \
    T v = __atomic_load_n(a, __ATOMIC_SEQ_CST);                                                    \
    on_read(WEFT_CALLER_PC, a, sizeof(T));                                                         \
    return v;                                                                                      \
  }                                                                                                \
  WEFT_EXPORT void __tsan_atomic##N##_store(volatile T* a, T v, morder) {                          \
    on_write(WEFT_CALLER_PC, a, sizeof(T), true);                                                  \
    __atomic_store_n(a, v, __ATOMIC_SEQ_CST);                                                      \
  }                                                                                                \
  WEFT_ATOMIC_RMW(T, N, exchange, __atomic_exchange_n)                                             \
  WEFT_ATOMIC_RMW(T, N, fetch_add, __atomic_fetch_add)                                             \
  WEFT_ATOMIC_RMW(T, N, fetch_sub, __atomic_fetch_sub)                                             \
  WEFT_ATOMIC_RMW(T, N, fetch_and, __atomic_fetch_and)                                             \
  WEFT_ATOMIC_RMW(T, N, fetch_or, __atomic_fetch_or)                                               \
  WEFT_ATOMIC_RMW(T, N, fetch_xor, __atomic_fetch_xor)                                             \
  WEFT_ATOMIC_RMW(T, N, fetch_nand, __atomic_fetch_nand)                                           \
  /* A weak CAS may fail spuriously; performing it strong is allowed. */                           \
  WEFT_EXPORT int __tsan_atomic##N##_compare_exchange_strong(volatile T* a, T* c, T v, morder,     \
                                                             morder) {                             \
    return compare_exchange(a, c, v, WEFT_CALLER_PC);                                              \
  }                                                                                                \
  WEFT_EXPORT int __tsan_atomic##N##_compare_exchange_weak(volatile T* a, T* c, T v, morder,       \
                                                           morder) {                               \
    return compare_exchange(a, c, v, WEFT_CALLER_PC);                                              \
  }                                                                                                \
  WEFT_EXPORT T __tsan_atomic##N##_compare_exchange_val(volatile T* a, T c, T v, morder, morder) { \
    compare_exchange(a, &c, v, WEFT_CALLER_PC);                                                    \
    return c; /* the value found, whether or not it was replaced */                                \
  }

WEFT_ATOMICS(a8, 8)
WEFT_ATOMICS(a16, 16)
WEFT_ATOMICS(a32, 32)
WEFT_ATOMICS(a64, 64)
WEFT_ATOMICS(a128, 128)

WEFT_EXPORT void __tsan_atomic_thread_fence(morder) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
WEFT_EXPORT void __tsan_atomic_signal_fence(morder) { __atomic_signal_fence(__ATOMIC_SEQ_CST); }
