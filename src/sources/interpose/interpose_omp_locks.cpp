// OpenMP's mutual exclusion, recorded as the mutex locks and unlocks it is
// (MutexLock / MutexUnlock, object = the lock): `critical` constructs
// (libgomp's GOMP_critical_*, libomp's __kmpc_critical*), the lock libgomp
// takes around the combination of several reductions and around atomics it
// cannot do natively (GOMP_atomic_*), the reduction libomp runs under its
// critical section (__kmpc_reduce*: 1 = this thread combines, then calls
// __kmpc_end_reduce*), and the omp_*_lock API of both runtimes. Updates made
// under them are ordered (docs/metrics.md, "Unsynchronised sharing"). Only
// calls from the program's code are recorded.
#include <stddef.h>
#include <stdint.h>

#include "sources/interpose/interpose_host.h"

using namespace weft::interpose;
using weft::SyncKind;

namespace {

// The object of the unnamed critical section and of GOMP_atomic_*.
char g_unnamed_critical;
char g_gomp_atomic;

bool from_program(uint64_t pc) { return active() && is_program_pc(pc); }

void locked(uint64_t pc, const void* lock) {
  if (from_program(pc)) record_sync(SyncKind::MutexLock, pc, reinterpret_cast<uint64_t>(lock));
}

void unlocking(uint64_t pc, const void* lock) {
  if (from_program(pc)) record_sync(SyncKind::MutexUnlock, pc, reinterpret_cast<uint64_t>(lock));
}

}  // namespace

// ---- libgomp ---------------------------------------------------------------

WEFT_EXPORT void GOMP_critical_start() {
  using Fn = void (*)();
  static Fn next = next_function<Fn>("GOMP_critical_start");
  next();
  locked(WEFT_CALLER_PC, &g_unnamed_critical);
}

WEFT_EXPORT void GOMP_critical_end() {
  using Fn = void (*)();
  static Fn next = next_function<Fn>("GOMP_critical_end");
  unlocking(WEFT_CALLER_PC, &g_unnamed_critical);
  next();
}

WEFT_EXPORT void GOMP_critical_name_start(void** name) {
  using Fn = void (*)(void**);
  static Fn next = next_function<Fn>("GOMP_critical_name_start");
  next(name);
  locked(WEFT_CALLER_PC, name);
}

WEFT_EXPORT void GOMP_critical_name_end(void** name) {
  using Fn = void (*)(void**);
  static Fn next = next_function<Fn>("GOMP_critical_name_end");
  unlocking(WEFT_CALLER_PC, name);
  next(name);
}

WEFT_EXPORT void GOMP_atomic_start() {
  using Fn = void (*)();
  static Fn next = next_function<Fn>("GOMP_atomic_start");
  next();
  locked(WEFT_CALLER_PC, &g_gomp_atomic);
}

WEFT_EXPORT void GOMP_atomic_end() {
  using Fn = void (*)();
  static Fn next = next_function<Fn>("GOMP_atomic_end");
  unlocking(WEFT_CALLER_PC, &g_gomp_atomic);
  next();
}

// ---- libomp ----------------------------------------------------------------

WEFT_EXPORT void __kmpc_critical(void* loc, int32_t gtid, void* name) {
  using Fn = void (*)(void*, int32_t, void*);
  static Fn next = next_function<Fn>("__kmpc_critical");
  next(loc, gtid, name);
  locked(WEFT_CALLER_PC, name);
}

WEFT_EXPORT void __kmpc_critical_with_hint(void* loc, int32_t gtid, void* name, uint32_t hint) {
  using Fn = void (*)(void*, int32_t, void*, uint32_t);
  static Fn next = next_function<Fn>("__kmpc_critical_with_hint");
  next(loc, gtid, name, hint);
  locked(WEFT_CALLER_PC, name);
}

WEFT_EXPORT void __kmpc_end_critical(void* loc, int32_t gtid, void* name) {
  using Fn = void (*)(void*, int32_t, void*);
  static Fn next = next_function<Fn>("__kmpc_end_critical");
  unlocking(WEFT_CALLER_PC, name);
  next(loc, gtid, name);
}

WEFT_EXPORT int32_t __kmpc_reduce_nowait(void* loc, int32_t gtid, int32_t count, size_t size,
                                         void* data, void (*combine)(void*, void*), void* lock) {
  using Fn = int32_t (*)(void*, int32_t, int32_t, size_t, void*, void (*)(void*, void*), void*);
  static Fn next = next_function<Fn>("__kmpc_reduce_nowait");
  const int32_t method = next(loc, gtid, count, size, data, combine, lock);
  if (method == 1) locked(WEFT_CALLER_PC, lock);
  return method;
}

WEFT_EXPORT void __kmpc_end_reduce_nowait(void* loc, int32_t gtid, void* lock) {
  using Fn = void (*)(void*, int32_t, void*);
  static Fn next = next_function<Fn>("__kmpc_end_reduce_nowait");
  unlocking(WEFT_CALLER_PC, lock);
  next(loc, gtid, lock);
}

WEFT_EXPORT int32_t __kmpc_reduce(void* loc, int32_t gtid, int32_t count, size_t size, void* data,
                                  void (*combine)(void*, void*), void* lock) {
  using Fn = int32_t (*)(void*, int32_t, int32_t, size_t, void*, void (*)(void*, void*), void*);
  static Fn next = next_function<Fn>("__kmpc_reduce");
  const int32_t method = next(loc, gtid, count, size, data, combine, lock);
  if (method == 1) locked(WEFT_CALLER_PC, lock);
  return method;
}

WEFT_EXPORT void __kmpc_end_reduce(void* loc, int32_t gtid, void* lock) {
  using Fn = void (*)(void*, int32_t, void*);
  static Fn next = next_function<Fn>("__kmpc_end_reduce");
  unlocking(WEFT_CALLER_PC, lock);
  next(loc, gtid, lock);
}

// ---- omp_*_lock (both runtimes) -------------------------------------------

#define WEFT_OMP_LOCK(NAME)                                 \
  WEFT_EXPORT void omp_set_##NAME(void* lock) {             \
    using Fn = void (*)(void*);                             \
    static Fn next = next_function<Fn>("omp_set_" #NAME);   \
    next(lock);                                             \
    locked(WEFT_CALLER_PC, lock);                           \
  }                                                         \
  WEFT_EXPORT void omp_unset_##NAME(void* lock) {           \
    using Fn = void (*)(void*);                             \
    static Fn next = next_function<Fn>("omp_unset_" #NAME); \
    unlocking(WEFT_CALLER_PC, lock);                        \
    next(lock);                                             \
  }                                                         \
  WEFT_EXPORT int omp_test_##NAME(void* lock) {             \
    using Fn = int (*)(void*);                              \
    static Fn next = next_function<Fn>("omp_test_" #NAME);  \
    const int taken = next(lock);                           \
    if (taken) locked(WEFT_CALLER_PC, lock);                \
    return taken;                                           \
  }

WEFT_OMP_LOCK(lock)
WEFT_OMP_LOCK(nest_lock)
