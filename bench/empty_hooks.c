/* empty_hooks.c - the instrumentation ABI that weft-cc builds call, with
 * hooks that do nothing (atomics perform their operation and nothing else).
 * bench/run.sh links a program's instrumented objects with this file for
 * the `empty-hooks` mode: the least an instrumented build can cost, against
 * which the `dormant` mode (the weft-cc build run without `weft record`) is
 * measured (docs/performance.md, "Dormant cost"). Hidden, like weft's hooks,
 * so the program calls them directly. */
#include <stdint.h>

#define HOOK __attribute__((visibility("hidden"))) __attribute__((noinline))

HOOK void __tsan_init(void) {}
HOOK void __tsan_func_entry(void *pc) { (void)pc; }
HOOK void __tsan_func_exit(void) {}
HOOK void __sanitizer_cov_trace_pc(void) {}
HOOK void __tsan_read_range(void *a, unsigned long n) { (void)a, (void)n; }
HOOK void __tsan_write_range(void *a, unsigned long n) { (void)a, (void)n; }
HOOK void __tsan_vptr_update(void **p, void *v) { (void)p, (void)v; }
HOOK void __tsan_vptr_read(void **p) { (void)p; }
HOOK void __tsan_atomic_thread_fence(int mo) { (void)mo; __atomic_thread_fence(__ATOMIC_SEQ_CST); }
HOOK void __tsan_atomic_signal_fence(int mo) { (void)mo; __atomic_signal_fence(__ATOMIC_SEQ_CST); }

#define ACCESS(N)                                                      \
  HOOK void __tsan_read##N(void *a) { (void)a; }                       \
  HOOK void __tsan_write##N(void *a) { (void)a; }                      \
  HOOK void __tsan_unaligned_read##N(void *a) { (void)a; }             \
  HOOK void __tsan_unaligned_write##N(void *a) { (void)a; }            \
  HOOK void __tsan_volatile_read##N(void *a) { (void)a; }              \
  HOOK void __tsan_volatile_write##N(void *a) { (void)a; }             \
  HOOK void __tsan_read##N##_pc(void *a, void *pc) { (void)a, (void)pc; } \
  HOOK void __tsan_write##N##_pc(void *a, void *pc) { (void)a, (void)pc; }
ACCESS(1)
ACCESS(2)
ACCESS(4)
ACCESS(8)
ACCESS(16)

#define RMW(T, N, NAME, OP) \
  HOOK T __tsan_atomic##N##_##NAME(volatile T *a, T v, int mo) { (void)mo; return OP(a, v, __ATOMIC_SEQ_CST); }
#define ATOMICS(T, N)                                                                           \
  HOOK T __tsan_atomic##N##_load(const volatile T *a, int mo) {                                 \
    (void)mo;                                                                                   \
    return __atomic_load_n(a, __ATOMIC_SEQ_CST);                                                \
  }                                                                                             \
  HOOK void __tsan_atomic##N##_store(volatile T *a, T v, int mo) {                              \
    (void)mo;                                                                                   \
    __atomic_store_n(a, v, __ATOMIC_SEQ_CST);                                                   \
  }                                                                                             \
  RMW(T, N, exchange, __atomic_exchange_n)                                                      \
  RMW(T, N, fetch_add, __atomic_fetch_add)                                                      \
  RMW(T, N, fetch_sub, __atomic_fetch_sub)                                                      \
  RMW(T, N, fetch_and, __atomic_fetch_and)                                                      \
  RMW(T, N, fetch_or, __atomic_fetch_or)                                                        \
  RMW(T, N, fetch_xor, __atomic_fetch_xor)                                                      \
  HOOK int __tsan_atomic##N##_compare_exchange_strong(volatile T *a, T *c, T v, int s, int f) { \
    (void)s, (void)f;                                                                           \
    return __atomic_compare_exchange_n(a, c, v, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);         \
  }                                                                                             \
  HOOK int __tsan_atomic##N##_compare_exchange_weak(volatile T *a, T *c, T v, int s, int f) {   \
    (void)s, (void)f;                                                                           \
    return __atomic_compare_exchange_n(a, c, v, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);         \
  }                                                                                             \
  HOOK T __tsan_atomic##N##_compare_exchange_val(volatile T *a, T c, T v, int s, int f) {       \
    (void)s, (void)f;                                                                           \
    __atomic_compare_exchange_n(a, &c, v, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);               \
    return c;                                                                                   \
  }
ATOMICS(uint8_t, 8)
ATOMICS(uint16_t, 16)
ATOMICS(uint32_t, 32)
ATOMICS(uint64_t, 64)
