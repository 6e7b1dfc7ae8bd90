// GCC's libgomp has no OMPT, so weft wraps the GOMP_* entry points that gcc
// emits: parallel regions (the outlined body runs inside a trampoline that
// records its start in every team member and, when the body returns, the
// region's closing barrier, which is internal to libgomp), explicit and
// worksharing barriers, and every loop-scheduling entry, whose returned
// chunk bounds are recorded as the executed schedule.
#include <stdint.h>

#include "sources/interpose/interpose_host.h"

using namespace weft::interpose;
using weft::SyncKind;

namespace {

// The loop this thread is taking chunks of: the pc of its _start call; in a
// combined `parallel for` (whose threads only call _next, from two sites:
// gcc asks for the first chunk before the loop and for the others at its
// end), the pc of the GOMP_parallel_loop_* call; 0 after the loop's end.
__thread uint64_t t_loop_key WEFT_INITIAL_EXEC = 0;

struct OutlinedBody {
  void (*fn)(void*);
  void* data;
  unsigned team_size;
  uint64_t site;      // the GOMP_parallel call: where the region's closing barrier is
  uint64_t loop_key;  // a combined `parallel for`: the key of its loop; else 0
};

void body_trampoline(void* p) {
  const OutlinedBody* body = static_cast<const OutlinedBody*>(p);
  const uint64_t fn = reinterpret_cast<uint64_t>(body->fn);
  record_sync(SyncKind::OmpImplicitTaskBegin, fn, fn, body->team_size);
  const uint64_t outer_key = t_loop_key;
  t_loop_key = body->loop_key;
  body->fn(body->data);
  t_loop_key = outer_key;
  record_sync(SyncKind::OmpImplicitBarrier, body->site, fn, body->team_size);
}

// Runs `start` (the real GOMP_parallel* call) with the body wrapped;
// loop_key: the key of a combined `parallel for`'s loop, else 0.
template <class Start>
void run_parallel(uint64_t pc, void (*fn)(void*), void* data, unsigned num_threads, Start start,
                  uint64_t loop_key = 0) {
  if (!active()) {
    start(fn, data);
    return;
  }
  OutlinedBody body{fn, data, num_threads, pc, loop_key};
  record_sync(SyncKind::OmpParallelBegin, pc, reinterpret_cast<uint64_t>(fn), num_threads);
  start(body_trampoline, &body);
  record_sync(SyncKind::OmpParallelEnd, pc, reinterpret_cast<uint64_t>(fn), num_threads);
}

// The end of a worksharing loop without nowait is a team barrier.
template <class End>
auto loop_end_barrier(uint64_t pc, End end) {
  t_loop_key = 0;
  if (active()) {
    record_sync(SyncKind::OmpLoopEnd, pc, 0);
    record_sync(SyncKind::OmpBarrierEnter, pc, 0);
  }
  const auto result = end();
  if (active()) record_sync(SyncKind::OmpBarrierLeave, pc, 0);
  return result;
}

using weft::LoopScheduleKind;

// The schedule an entry point's name says; "runtime" and "auto" leave it to
// the chunks themselves.
constexpr LoopScheduleKind schedule_of(const char* name) {
  auto contains = [](const char* s, const char* word) {
    for (; *s; ++s) {
      const char* a = s;
      const char* b = word;
      while (*a && *b && *a == *b) ++a, ++b;
      if (!*b) return true;
    }
    return false;
  };
  if (contains(name, "static")) return LoopScheduleKind::Static;
  if (contains(name, "dynamic")) return LoopScheduleKind::Dynamic;
  if (contains(name, "guided")) return LoopScheduleKind::Guided;
  return LoopScheduleKind::Unknown;
}

// libgomp's gomp_schedule_type (GFS_STATIC = 1, GFS_DYNAMIC, GFS_GUIDED), as
// passed to the generic GOMP_loop_start; the monotonic flag is the top bit.
LoopScheduleKind schedule_of(long sched) {
  switch (sched & 0x7fffffff) {
    case 1:
      return LoopScheduleKind::Static;
    case 2:
      return LoopScheduleKind::Dynamic;
    case 3:
      return LoopScheduleKind::Guided;
    default:
      return LoopScheduleKind::Unknown;
  }
}

template <class T>
void note_chunk(bool more, uint64_t pc, LoopScheduleKind kind, const T* istart, const T* iend) {
  if (more && active())
    record_sync(SyncKind::OmpLoopChunk, pc,
                weft::omp_loop_object(t_loop_key ? t_loop_key : pc, kind),
                static_cast<int64_t>(*istart), static_cast<int64_t>(*iend));
}

// A _start call: the loop's key is its pc, for its _next calls too.
template <class T>
void note_start(bool more, uint64_t pc, LoopScheduleKind kind, const T* istart, const T* iend) {
  t_loop_key = pc;
  note_chunk(more, pc, kind, istart, iend);
}

}  // namespace

// ---- parallel regions ------------------------------------------------------

WEFT_EXPORT void GOMP_parallel(void (*fn)(void*), void* data, unsigned num_threads,
                               unsigned flags) {
  using Fn = void (*)(void (*)(void*), void*, unsigned, unsigned);
  static Fn next = next_function<Fn>("GOMP_parallel");
  run_parallel(WEFT_CALLER_PC, fn, data, num_threads,
               [&](void (*f)(void*), void* d) { next(f, d, num_threads, flags); });
}

WEFT_EXPORT unsigned GOMP_parallel_reductions(void (*fn)(void*), void* data, unsigned num_threads,
                                              unsigned flags) {
  using Fn = unsigned (*)(void (*)(void*), void*, unsigned, unsigned);
  static Fn next = next_function<Fn>("GOMP_parallel_reductions");
  unsigned result = 0;
  run_parallel(WEFT_CALLER_PC, fn, data, num_threads,
               [&](void (*f)(void*), void* d) { result = next(f, d, num_threads, flags); });
  return result;
}

WEFT_EXPORT void GOMP_parallel_sections(void (*fn)(void*), void* data, unsigned num_threads,
                                        unsigned count, unsigned flags) {
  using Fn = void (*)(void (*)(void*), void*, unsigned, unsigned, unsigned);
  static Fn next = next_function<Fn>("GOMP_parallel_sections");
  run_parallel(WEFT_CALLER_PC, fn, data, num_threads,
               [&](void (*f)(void*), void* d) { next(f, d, num_threads, count, flags); });
}

// Combined `parallel for`: the loop is set up by libgomp, the team then asks
// for chunks with GOMP_loop_*_next.
#define WEFT_PARALLEL_LOOP_CHUNKED(NAME)                                                        \
  WEFT_EXPORT void GOMP_parallel_loop_##NAME(void (*fn)(void*), void* data, unsigned n,         \
                                             long start, long end, long incr, long chunk,       \
                                             unsigned flags) {                                  \
    using Fn = void (*)(void (*)(void*), void*, unsigned, long, long, long, long, unsigned);    \
    static Fn next = next_function<Fn>("GOMP_parallel_loop_" #NAME);                            \
    const uint64_t pc = WEFT_CALLER_PC;                                                         \
    run_parallel(                                                                               \
        pc, fn, data, n,                                                                        \
        [&](void (*f)(void*), void* d) { next(f, d, n, start, end, incr, chunk, flags); }, pc); \
  }
#define WEFT_PARALLEL_LOOP_RUNTIME(NAME)                                                        \
  WEFT_EXPORT void GOMP_parallel_loop_##NAME(void (*fn)(void*), void* data, unsigned n,         \
                                             long start, long end, long incr, unsigned flags) { \
    using Fn = void (*)(void (*)(void*), void*, unsigned, long, long, long, unsigned);          \
    static Fn next = next_function<Fn>("GOMP_parallel_loop_" #NAME);                            \
    const uint64_t pc = WEFT_CALLER_PC;                                                         \
    run_parallel(                                                                               \
        pc, fn, data, n,                                                                        \
        [&](void (*f)(void*), void* d) { next(f, d, n, start, end, incr, flags); }, pc);        \
  }

WEFT_PARALLEL_LOOP_CHUNKED(static)
WEFT_PARALLEL_LOOP_CHUNKED(dynamic)
WEFT_PARALLEL_LOOP_CHUNKED(guided)
WEFT_PARALLEL_LOOP_CHUNKED(nonmonotonic_dynamic)
WEFT_PARALLEL_LOOP_CHUNKED(nonmonotonic_guided)
WEFT_PARALLEL_LOOP_RUNTIME(runtime)
WEFT_PARALLEL_LOOP_RUNTIME(nonmonotonic_runtime)
WEFT_PARALLEL_LOOP_RUNTIME(maybe_nonmonotonic_runtime)

// ---- barriers --------------------------------------------------------------

WEFT_EXPORT void GOMP_barrier() {
  using Fn = void (*)();
  static Fn next = next_function<Fn>("GOMP_barrier");
  if (dormant()) return next();
  const uint64_t pc = WEFT_CALLER_PC;
  if (active()) record_sync(SyncKind::OmpBarrierEnter, pc, 0);
  next();
  if (active()) record_sync(SyncKind::OmpBarrierLeave, pc, 0);
}

WEFT_EXPORT bool GOMP_barrier_cancel() {
  using Fn = bool (*)();
  static Fn next = next_function<Fn>("GOMP_barrier_cancel");
  const uint64_t pc = WEFT_CALLER_PC;
  if (active()) record_sync(SyncKind::OmpBarrierEnter, pc, 0);
  const bool cancelled = next();
  if (active()) record_sync(SyncKind::OmpBarrierLeave, pc, 0);
  return cancelled;
}

WEFT_EXPORT void GOMP_loop_end() {
  using Fn = void (*)();
  static Fn next = next_function<Fn>("GOMP_loop_end");
  loop_end_barrier(WEFT_CALLER_PC, [] {
    next();
    return 0;
  });
}

WEFT_EXPORT bool GOMP_loop_end_cancel() {
  using Fn = bool (*)();
  static Fn next = next_function<Fn>("GOMP_loop_end_cancel");
  return loop_end_barrier(WEFT_CALLER_PC, [] { return next(); });
}

WEFT_EXPORT void GOMP_loop_end_nowait() {
  using Fn = void (*)();
  static Fn next = next_function<Fn>("GOMP_loop_end_nowait");
  t_loop_key = 0;
  if (active()) record_sync(SyncKind::OmpLoopEnd, WEFT_CALLER_PC, 0);
  next();
}

// ---- loop scheduling: every start/next variant gcc 12 emits ---------------

#define WEFT_LOOP_START_CHUNKED(NAME)                                                    \
  WEFT_EXPORT bool GOMP_loop_##NAME##_start(long start, long end, long incr, long chunk, \
                                            long* istart, long* iend) {                  \
    using Fn = bool (*)(long, long, long, long, long*, long*);                           \
    static Fn next = next_function<Fn>("GOMP_loop_" #NAME "_start");                     \
    const bool more = next(start, end, incr, chunk, istart, iend);                       \
    note_start(more, WEFT_CALLER_PC, schedule_of(#NAME), istart, iend);                  \
    return more;                                                                         \
  }
#define WEFT_LOOP_START_RUNTIME(NAME)                                                      \
  WEFT_EXPORT bool GOMP_loop_##NAME##_start(long start, long end, long incr, long* istart, \
                                            long* iend) {                                  \
    using Fn = bool (*)(long, long, long, long*, long*);                                   \
    static Fn next = next_function<Fn>("GOMP_loop_" #NAME "_start");                       \
    const bool more = next(start, end, incr, istart, iend);                                \
    note_start(more, WEFT_CALLER_PC, schedule_of(#NAME), istart, iend);                    \
    return more;                                                                           \
  }
#define WEFT_LOOP_NEXT(NAME)                                            \
  WEFT_EXPORT bool GOMP_loop_##NAME##_next(long* istart, long* iend) {  \
    using Fn = bool (*)(long*, long*);                                  \
    static Fn next = next_function<Fn>("GOMP_loop_" #NAME "_next");     \
    if (dormant()) return next(istart, iend);                           \
    const bool more = next(istart, iend);                               \
    note_chunk(more, WEFT_CALLER_PC, schedule_of(#NAME), istart, iend); \
    return more;                                                        \
  }
#define WEFT_LOOP_ULL_START_CHUNKED(NAME)                                                 \
  WEFT_EXPORT bool GOMP_loop_ull_##NAME##_start(                                          \
      bool up, unsigned long long start, unsigned long long end, unsigned long long incr, \
      unsigned long long chunk, unsigned long long* istart, unsigned long long* iend) {   \
    using U = unsigned long long;                                                         \
    using Fn = bool (*)(bool, U, U, U, U, U*, U*);                                        \
    static Fn next = next_function<Fn>("GOMP_loop_ull_" #NAME "_start");                  \
    const bool more = next(up, start, end, incr, chunk, istart, iend);                    \
    note_start(more, WEFT_CALLER_PC, schedule_of(#NAME), istart, iend);                   \
    return more;                                                                          \
  }
#define WEFT_LOOP_ULL_START_RUNTIME(NAME)                                                 \
  WEFT_EXPORT bool GOMP_loop_ull_##NAME##_start(                                          \
      bool up, unsigned long long start, unsigned long long end, unsigned long long incr, \
      unsigned long long* istart, unsigned long long* iend) {                             \
    using U = unsigned long long;                                                         \
    using Fn = bool (*)(bool, U, U, U, U*, U*);                                           \
    static Fn next = next_function<Fn>("GOMP_loop_ull_" #NAME "_start");                  \
    const bool more = next(up, start, end, incr, istart, iend);                           \
    note_start(more, WEFT_CALLER_PC, schedule_of(#NAME), istart, iend);                   \
    return more;                                                                          \
  }
#define WEFT_LOOP_ULL_NEXT(NAME)                                           \
  WEFT_EXPORT bool GOMP_loop_ull_##NAME##_next(unsigned long long* istart, \
                                               unsigned long long* iend) { \
    using U = unsigned long long;                                          \
    using Fn = bool (*)(U*, U*);                                           \
    static Fn next = next_function<Fn>("GOMP_loop_ull_" #NAME "_next");    \
    const bool more = next(istart, iend);                                  \
    note_chunk(more, WEFT_CALLER_PC, schedule_of(#NAME), istart, iend);    \
    return more;                                                           \
  }

#define WEFT_LOOP_KINDS(CHUNKED, RUNTIME, NEXT) \
  CHUNKED(static)                               \
  CHUNKED(dynamic)                              \
  CHUNKED(guided)                               \
  CHUNKED(nonmonotonic_dynamic)                 \
  CHUNKED(nonmonotonic_guided)                  \
  CHUNKED(ordered_static)                       \
  CHUNKED(ordered_dynamic)                      \
  CHUNKED(ordered_guided)                       \
  RUNTIME(runtime)                              \
  RUNTIME(nonmonotonic_runtime)                 \
  RUNTIME(maybe_nonmonotonic_runtime)           \
  RUNTIME(ordered_runtime)                      \
  NEXT(static)                                  \
  NEXT(dynamic)                                 \
  NEXT(guided)                                  \
  NEXT(runtime)                                 \
  NEXT(nonmonotonic_dynamic)                    \
  NEXT(nonmonotonic_guided)                     \
  NEXT(nonmonotonic_runtime)                    \
  NEXT(maybe_nonmonotonic_runtime)              \
  NEXT(ordered_static)                          \
  NEXT(ordered_dynamic)                         \
  NEXT(ordered_guided)                          \
  NEXT(ordered_runtime)

WEFT_LOOP_KINDS(WEFT_LOOP_START_CHUNKED, WEFT_LOOP_START_RUNTIME, WEFT_LOOP_NEXT)
WEFT_LOOP_KINDS(WEFT_LOOP_ULL_START_CHUNKED, WEFT_LOOP_ULL_START_RUNTIME, WEFT_LOOP_ULL_NEXT)

// OpenMP 5 generic entries: the schedule is an argument.
WEFT_EXPORT bool GOMP_loop_start(long start, long end, long incr, long sched, long chunk,
                                 long* istart, long* iend, uintptr_t* reductions, void** mem) {
  using Fn = bool (*)(long, long, long, long, long, long*, long*, uintptr_t*, void**);
  static Fn next = next_function<Fn>("GOMP_loop_start");
  const bool more = next(start, end, incr, sched, chunk, istart, iend, reductions, mem);
  if (istart && iend) note_start(more, WEFT_CALLER_PC, schedule_of(sched), istart, iend);
  return more;
}

WEFT_EXPORT bool GOMP_loop_ordered_start(long start, long end, long incr, long sched, long chunk,
                                         long* istart, long* iend, uintptr_t* reductions,
                                         void** mem) {
  using Fn = bool (*)(long, long, long, long, long, long*, long*, uintptr_t*, void**);
  static Fn next = next_function<Fn>("GOMP_loop_ordered_start");
  const bool more = next(start, end, incr, sched, chunk, istart, iend, reductions, mem);
  if (istart && iend) note_start(more, WEFT_CALLER_PC, schedule_of(sched), istart, iend);
  return more;
}

WEFT_EXPORT bool GOMP_loop_ull_start(bool up, unsigned long long start, unsigned long long end,
                                     unsigned long long incr, long sched, unsigned long long chunk,
                                     unsigned long long* istart, unsigned long long* iend,
                                     uintptr_t* reductions, void** mem) {
  using U = unsigned long long;
  using Fn = bool (*)(bool, U, U, U, long, U, U*, U*, uintptr_t*, void**);
  static Fn next = next_function<Fn>("GOMP_loop_ull_start");
  const bool more = next(up, start, end, incr, sched, chunk, istart, iend, reductions, mem);
  if (istart && iend) note_start(more, WEFT_CALLER_PC, schedule_of(sched), istart, iend);
  return more;
}
