/* spin_barrier.h - the sense-reversing centralized barrier on C11 atomics that
 * many hand-tuned pthreads codes use instead of pthread_barrier_wait
 * (md_cells_spin_barrier_pthreads.c, ssor_pipeline_flags_pthreads.c).
 *
 * Every thread flips its private sense and increments the shared counter;
 * the last to arrive resets the counter and publishes its sense in the
 * shared flag, the others spin until the flag equals their sense. weft
 * recognises it from the spinning (docs/metrics.md, "Spin waits"); being
 * static inline, each call is named by its own line.
 */
#ifndef WEFT_EXAMPLES_SPIN_BARRIER_H
#define WEFT_EXAMPLES_SPIN_BARRIER_H

#include <stdatomic.h>

typedef struct {
  _Alignas(64) atomic_int count;
  _Alignas(64) atomic_int sense;
  int parties;
} spin_barrier_t;

#define SPIN_BARRIER_INITIALIZER(n) \
  { 0, 0, (n) }

/* `local_sense` is the caller's private sense, 0 before the first call. */
static inline void spin_barrier_wait(spin_barrier_t *b, int *local_sense) {
  const int s = !*local_sense;
  *local_sense = s;
  if (atomic_fetch_add_explicit(&b->count, 1, memory_order_acq_rel) == b->parties - 1) {
    atomic_store_explicit(&b->count, 0, memory_order_relaxed);
    atomic_store_explicit(&b->sense, s, memory_order_release);
  } else {
    while (atomic_load_explicit(&b->sense, memory_order_acquire) != s) __builtin_ia32_pause();
  }
}

#endif
