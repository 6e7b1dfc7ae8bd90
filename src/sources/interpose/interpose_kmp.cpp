// LLVM's libomp 14 delivers no OMPT event for the chunks of a worksharing
// loop (ompt_dispatch_ws_loop_chunk came with OpenMP 5.2 runtimes), so the
// schedule clang's code actually executed is taken from the loop entry points
// clang emits: __kmpc_for_static_init_* (static schedules, computed by
// libomp) and __kmpc_dispatch_init_* / __kmpc_dispatch_next_* (dynamic,
// guided, runtime). Each chunk a thread runs becomes an OmpLoopChunk record,
// as with libgomp (interpose_gomp.cpp). Parallel regions and barriers still
// come from OMPT (ompt_tool.cpp).
#include <stdint.h>

#include "sources/interpose/interpose_host.h"

using namespace weft::interpose;
using weft::LoopScheduleKind;
using weft::SyncKind;

namespace {

// libomp's enum sched_type, without the monotonic/nonmonotonic modifier bits.
LoopScheduleKind schedule_of(int32_t sched) {
  switch (sched & ~((1 << 29) | (1 << 30))) {
    case 33:  // kmp_sch_static_chunked
    case 34:  // kmp_sch_static
    case 40:  // kmp_sch_static_greedy
    case 41:  // kmp_sch_static_balanced
    case 44:  // kmp_sch_static_steal
    case 65:  // kmp_ord_static_chunked
    case 66:  // kmp_ord_static
    case 91:  // kmp_distribute_static_chunked
    case 92:  // kmp_distribute_static
      return LoopScheduleKind::Static;
    case 35:  // kmp_sch_dynamic_chunked
    case 67:  // kmp_ord_dynamic_chunked
      return LoopScheduleKind::Dynamic;
    case 36:  // kmp_sch_guided_chunked
    case 42:  // kmp_sch_guided_iterative_chunked
    case 43:  // kmp_sch_guided_analytical_chunked
    case 68:  // kmp_ord_guided_chunked
      return LoopScheduleKind::Guided;
    default:
      return LoopScheduleKind::Unknown;
  }
}

// The dispatched loop this thread takes chunks of (set by dispatch_init).
__thread uint64_t t_dispatch_key WEFT_INITIAL_EXEC = 0;
__thread uint32_t t_dispatch_kind WEFT_INITIAL_EXEC = 0;

void note_chunk(uint64_t pc, uint64_t key, LoopScheduleKind kind, int64_t first, int64_t last) {
  record_sync(SyncKind::OmpLoopChunk, pc, weft::omp_loop_object(key, kind), first, last + 1);
}

// A static loop's chunks for this thread: [lower, upper] first, then every
// `stride` iterations until the loop's own upper bound (clang's code walks
// them itself). Only increasing loops are recorded.
template <class T>
void note_static_chunks(uint64_t pc, int32_t sched, T original_upper, T lower, T upper, T stride,
                        T incr) {
  if (!active() || incr <= 0 || lower > upper) return;
  const LoopScheduleKind kind = schedule_of(sched);
  const bool chunked = (sched & 0xff) == 33 || (sched & 0xff) == 65 || (sched & 0xff) == 91;
  for (;;) {
    const T last = upper < original_upper ? upper : original_upper;
    note_chunk(pc, pc, kind, static_cast<int64_t>(lower), static_cast<int64_t>(last));
    if (!chunked || stride <= 0 || original_upper - lower < stride) break;
    lower += stride;
    upper += stride;
  }
}

}  // namespace

#define WEFT_KMP_STATIC_INIT(SUFFIX, T, ST)                                                       \
  WEFT_EXPORT void __kmpc_for_static_init_##SUFFIX(void* loc, int32_t gtid, int32_t sched,        \
                                                   int32_t* last, T* lower, T* upper, ST* stride, \
                                                   ST incr, ST chunk) {                           \
    using Fn = void (*)(void*, int32_t, int32_t, int32_t*, T*, T*, ST*, ST, ST);                  \
    static Fn next = next_function<Fn>("__kmpc_for_static_init_" #SUFFIX);                        \
    const T original_upper = *upper;                                                              \
    next(loc, gtid, sched, last, lower, upper, stride, incr, chunk);                              \
    note_static_chunks<T>(WEFT_CALLER_PC, sched, original_upper, *lower, *upper,                  \
                          static_cast<T>(*stride), static_cast<T>(incr));                         \
  }

#define WEFT_KMP_DISPATCH(SUFFIX, T, ST)                                                       \
  WEFT_EXPORT void __kmpc_dispatch_init_##SUFFIX(void* loc, int32_t gtid, int32_t sched, T lb, \
                                                 T ub, ST st, ST chunk) {                      \
    using Fn = void (*)(void*, int32_t, int32_t, T, T, ST, ST);                                \
    static Fn next = next_function<Fn>("__kmpc_dispatch_init_" #SUFFIX);                       \
    t_dispatch_key = WEFT_CALLER_PC;                                                           \
    t_dispatch_kind = static_cast<uint32_t>(schedule_of(sched));                               \
    next(loc, gtid, sched, lb, ub, st, chunk);                                                 \
  }                                                                                            \
  WEFT_EXPORT int __kmpc_dispatch_next_##SUFFIX(void* loc, int32_t gtid, int32_t* last, T* lb, \
                                                T* ub, ST* st) {                               \
    using Fn = int (*)(void*, int32_t, int32_t*, T*, T*, ST*);                                 \
    static Fn next = next_function<Fn>("__kmpc_dispatch_next_" #SUFFIX);                       \
    const int more = next(loc, gtid, last, lb, ub, st);                                        \
    if (more && active() && (!st || *st > 0))                                                  \
      note_chunk(WEFT_CALLER_PC, t_dispatch_key ? t_dispatch_key : WEFT_CALLER_PC,             \
                 static_cast<LoopScheduleKind>(t_dispatch_kind), static_cast<int64_t>(*lb),    \
                 static_cast<int64_t>(*ub));                                                   \
    return more;                                                                               \
  }

WEFT_KMP_STATIC_INIT(4, int32_t, int32_t)
WEFT_KMP_STATIC_INIT(4u, uint32_t, int32_t)
WEFT_KMP_STATIC_INIT(8, int64_t, int64_t)
WEFT_KMP_STATIC_INIT(8u, uint64_t, int64_t)
WEFT_KMP_DISPATCH(4, int32_t, int32_t)
WEFT_KMP_DISPATCH(4u, uint32_t, int32_t)
WEFT_KMP_DISPATCH(8, int64_t, int64_t)
WEFT_KMP_DISPATCH(8u, uint64_t, int64_t)
