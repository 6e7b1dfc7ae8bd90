// pthread entry points the program calls, wrapped to give threads their weft
// ids in creation order and to record the synchronization that delimits
// parallel sections. libgomp and libomp create their workers through
// pthread_create too, so OpenMP threads get ids the same way.
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "sources/interpose/interpose_host.h"

namespace weft::interpose {
namespace {

struct StartArgs {
  void* (*routine)(void*);
  void* arg;
  uint32_t tid;
  int32_t parent;
};

// pthread_t of each weft thread, to name the thread a join waits for.
constexpr uint32_t kJoinTableSize = 65536;
pthread_t g_pthread_of[kJoinTableSize];

// The thread is weft's before it frees its arguments: a heap release, like
// an access, would otherwise give it an id of its own.
void* thread_trampoline(void* p) {
  const StartArgs args = *static_cast<StartArgs*>(p);
  start_thread(args.tid, args.parent, reinterpret_cast<uint64_t>(args.routine));
  free(p);
  return args.routine(args.arg);  // the exit is noted by a key destructor
}

// Locks and barriers taken inside libgomp, libomp or libc are not the
// program's synchronization: only calls from instrumented code are logged.
bool from_program(uint64_t pc) { return active() && is_program_pc(pc); }

int64_t weft_id_of(pthread_t thread) {
  const uint32_t n = thread_count();
  for (uint32_t i = 0; i < n && i < kJoinTableSize; ++i)
    if (pthread_equal(g_pthread_of[i], thread)) return i;
  return -1;
}

}  // namespace
}  // namespace weft::interpose

using namespace weft::interpose;
using weft::DistributionDeclaration;
using weft::SyncKind;

WEFT_EXPORT int pthread_create(pthread_t* thread, const pthread_attr_t* attr,
                               void* (*routine)(void*), void* arg) {
  using Fn = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
  static Fn next = next_function<Fn>("pthread_create");
  const int64_t parent = active() ? current_thread_id() : -1;
  if (parent < 0) return next(thread, attr, routine, arg);
  auto* args = static_cast<StartArgs*>(malloc(sizeof(StartArgs)));
  if (!args) return next(thread, attr, routine, arg);
  const uint32_t tid = reserve_thread_id();
  if (tid == kNoThreadId) {  // no room for one more thread: out of resources
    free(args);
    return EAGAIN;
  }
  *args = {routine, arg, tid, static_cast<int32_t>(parent)};
  record_sync(SyncKind::ThreadCreate, WEFT_CALLER_PC, 0, tid);
  const int rc = next(thread, attr, thread_trampoline, args);
  if (rc != 0) {
    free(args);
    cancel_thread_id(tid);
  } else if (tid < kJoinTableSize) {
    g_pthread_of[tid] = *thread;
  }
  return rc;
}

WEFT_EXPORT int pthread_join(pthread_t thread, void** result) {
  using Fn = int (*)(pthread_t, void**);
  static Fn next = next_function<Fn>("pthread_join");
  // A thread blocked in a join is not part of the team a condition-variable
  // barrier waits for (docs/metrics.md, "Parallel section").
  if (active()) record_sync(SyncKind::ThreadJoinEnter, WEFT_CALLER_PC, 0, weft_id_of(thread));
  const int rc = next(thread, result);
  if (rc == 0 && active()) record_sync(SyncKind::ThreadJoin, WEFT_CALLER_PC, 0, weft_id_of(thread));
  return rc;
}

WEFT_EXPORT int pthread_barrier_wait(pthread_barrier_t* barrier) {
  using Fn = int (*)(pthread_barrier_t*);
  static Fn next = next_function<Fn>("pthread_barrier_wait");
  if (dormant()) return next(barrier);
  const uint64_t pc = WEFT_CALLER_PC;
  if (!from_program(pc)) return next(barrier);
  record_sync(SyncKind::BarrierEnter, pc, reinterpret_cast<uint64_t>(barrier));
  const int rc = next(barrier);
  record_sync(SyncKind::BarrierLeave, pc, reinterpret_cast<uint64_t>(barrier));
  return rc;
}

// include/weft/sections.h: a hand-written barrier, marked by the program,
// is recorded as a pthread barrier on the object `team`.
WEFT_EXPORT void weft_section_end(const void* team) {
  const uint64_t pc = WEFT_CALLER_PC;
  if (from_program(pc)) record_sync(SyncKind::BarrierEnter, pc, reinterpret_cast<uint64_t>(team));
}

// include/weft/distribution.h: the owners of an array's elements, for the
// reuse-distance analysis.
WEFT_EXPORT void weft_distribute(const void* base, size_t element_size, size_t count, int kind,
                                 size_t block, int threads) {
  if (threads <= 0 || kind < 0) return;
  DistributionDeclaration d;
  d.base = reinterpret_cast<uint64_t>(base);
  d.element_size = element_size;
  d.count = count;
  d.block = block;
  d.kind = static_cast<uint32_t>(kind);
  d.threads = static_cast<uint32_t>(threads);
  if (d.valid()) declare_distribution(d);
}

WEFT_EXPORT void weft_section_begin(const void* team) {
  const uint64_t pc = WEFT_CALLER_PC;
  if (from_program(pc)) record_sync(SyncKind::BarrierLeave, pc, reinterpret_cast<uint64_t>(team));
}

namespace {

// The recording paths of the lock calls, apart from the dormant test.
using MutexFn = int (*)(pthread_mutex_t*);
__attribute__((noinline)) int lock_recorded(MutexFn next, pthread_mutex_t* mutex, uint64_t pc) {
  const int rc = next(mutex);
  if (rc == 0 && from_program(pc))
    record_sync(SyncKind::MutexLock, pc, reinterpret_cast<uint64_t>(mutex));
  return rc;
}
__attribute__((noinline)) int unlock_recorded(MutexFn next, pthread_mutex_t* mutex, uint64_t pc) {
  if (from_program(pc)) record_sync(SyncKind::MutexUnlock, pc, reinterpret_cast<uint64_t>(mutex));
  return next(mutex);
}

}  // namespace

WEFT_EXPORT int pthread_mutex_lock(pthread_mutex_t* mutex) {
  static MutexFn next = next_function<MutexFn>("pthread_mutex_lock");
  if (dormant()) return next(mutex);  // the call itself, nothing else
  return lock_recorded(next, mutex, WEFT_CALLER_PC);
}

WEFT_EXPORT int pthread_mutex_trylock(pthread_mutex_t* mutex) {
  static MutexFn next = next_function<MutexFn>("pthread_mutex_trylock");
  if (dormant()) return next(mutex);
  return lock_recorded(next, mutex, WEFT_CALLER_PC);
}

WEFT_EXPORT int pthread_mutex_unlock(pthread_mutex_t* mutex) {
  static MutexFn next = next_function<MutexFn>("pthread_mutex_unlock");
  if (dormant()) return next(mutex);
  return unlock_recorded(next, mutex, WEFT_CALLER_PC);
}

// Condition variables: waits and releases, from which the capture session
// recognises mutex + condition-variable barriers (docs/metrics.md, "Parallel
// section"). glibc has two ABIs of these; the program links the
// GLIBC_2.3.2 one (the default), so that is the one called, as TSan does.
namespace {
constexpr const char* kCondVersion = "GLIBC_2.3.2";
}

WEFT_EXPORT int pthread_cond_wait(pthread_cond_t* cond, pthread_mutex_t* mutex) {
  using Fn = int (*)(pthread_cond_t*, pthread_mutex_t*);
  static Fn next = next_versioned_function<Fn>("pthread_cond_wait", kCondVersion);
  if (dormant()) return next(cond, mutex);
  const uint64_t pc = WEFT_CALLER_PC;
  if (!from_program(pc)) return next(cond, mutex);
  const auto object = reinterpret_cast<uint64_t>(cond);
  record_sync(SyncKind::CondWaitEnter, pc, object,
              static_cast<int64_t>(reinterpret_cast<uint64_t>(mutex)));
  const int rc = next(cond, mutex);
  record_sync(SyncKind::CondWaitLeave, pc, object);
  return rc;
}

WEFT_EXPORT int pthread_cond_timedwait(pthread_cond_t* cond, pthread_mutex_t* mutex,
                                       const struct timespec* deadline) {
  using Fn = int (*)(pthread_cond_t*, pthread_mutex_t*, const struct timespec*);
  static Fn next = next_versioned_function<Fn>("pthread_cond_timedwait", kCondVersion);
  if (dormant()) return next(cond, mutex, deadline);
  const uint64_t pc = WEFT_CALLER_PC;
  if (!from_program(pc)) return next(cond, mutex, deadline);
  const auto object = reinterpret_cast<uint64_t>(cond);
  record_sync(SyncKind::CondWaitEnter, pc, object,
              static_cast<int64_t>(reinterpret_cast<uint64_t>(mutex)));
  const int rc = next(cond, mutex, deadline);
  record_sync(SyncKind::CondWaitLeave, pc, object);
  return rc;
}

// A release is logged before it takes effect: the threads it wakes cannot
// have left their wait before it is known.
namespace {
using ReleaseFn = int (*)(pthread_cond_t*);
__attribute__((noinline)) int release_recorded(ReleaseFn next, SyncKind kind, pthread_cond_t* cond,
                                               uint64_t pc) {
  if (from_program(pc)) record_sync(kind, pc, reinterpret_cast<uint64_t>(cond));
  return next(cond);
}
}  // namespace

WEFT_EXPORT int pthread_cond_signal(pthread_cond_t* cond) {
  static ReleaseFn next = next_versioned_function<ReleaseFn>("pthread_cond_signal", kCondVersion);
  if (dormant()) return next(cond);
  return release_recorded(next, SyncKind::CondSignal, cond, WEFT_CALLER_PC);
}

WEFT_EXPORT int pthread_cond_broadcast(pthread_cond_t* cond) {
  static ReleaseFn next =
      next_versioned_function<ReleaseFn>("pthread_cond_broadcast", kCondVersion);
  if (dormant()) return next(cond);
  return release_recorded(next, SyncKind::CondBroadcast, cond, WEFT_CALLER_PC);
}
