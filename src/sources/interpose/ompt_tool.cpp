// Under LLVM's libomp, OpenMP events come from OMPT: libomp looks up
// ompt_start_tool in the process at start-up and, if this runtime is
// recording, gets callbacks for parallel regions, implicit tasks, barriers
// (the region's closing barrier is ompt_sync_region_barrier_implicit_parallel)
// and worksharing loops. libgomp (GCC 12) never calls ompt_start_tool; its
// events come from interpose_gomp.cpp. Under Valgrind the preload library
// carries this tool, so libomp finds it the same way.
#include <omp-tools.h>

#include "sources/interpose/interpose_host.h"

using namespace weft::interpose;
using weft::SyncKind;

namespace {

// OMPT's codeptr_ra is a return address: one byte back lands inside the call
// instruction, which symbolizes to the line that made it (as WEFT_CALLER_PC).
uint64_t pc_of(const void* codeptr) {
  return codeptr ? reinterpret_cast<uint64_t>(codeptr) - 1 : 0;
}

// The call sites of the parallel regions this thread began and has not
// ended, innermost last (what tells libomp 14's closing barriers, below).
constexpr unsigned kMaxRegionNesting = 16;
__thread const void* t_region_sites[kMaxRegionNesting] WEFT_INITIAL_EXEC;
__thread unsigned t_region_depth WEFT_INITIAL_EXEC = 0;

void on_parallel_begin(ompt_data_t*, const ompt_frame_t*, ompt_data_t*, unsigned requested, int,
                       const void* codeptr) {
  if (t_region_depth < kMaxRegionNesting) t_region_sites[t_region_depth] = codeptr;
  ++t_region_depth;
  record_sync(SyncKind::OmpParallelBegin, pc_of(codeptr), 0, requested);
}

void on_parallel_end(ompt_data_t*, ompt_data_t*, int, const void* codeptr) {
  if (t_region_depth > 0) --t_region_depth;
  record_sync(SyncKind::OmpParallelEnd, pc_of(codeptr), 0);
}

// libomp 14 reports the barrier closing a parallel region as the deprecated
// generic "implicit barrier"; newer ones as barrier_implicit_parallel. The
// closing barrier is therefore noted at the end of the implicit task unless
// the specific kind was already seen for this task.
__thread bool t_closing_barrier_seen WEFT_INITIAL_EXEC = false;

void on_implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t*, ompt_data_t*,
                      unsigned team_size, unsigned index, int flags) {
  if (!(flags & ompt_task_implicit)) return;
  if (endpoint == ompt_scope_begin) {
    t_closing_barrier_seen = false;
    record_sync(SyncKind::OmpImplicitTaskBegin, 0, 0, team_size, index);
  } else if (endpoint == ompt_scope_end && !t_closing_barrier_seen) {
    record_sync(SyncKind::OmpImplicitBarrier, 0, 0, team_size, index);
  }
}

// libomp 14 also reports the barrier that ends a worksharing construct (a
// `for`, `single` or `sections` without nowait) as the generic "implicit
// barrier", begin and end, with the construct's call site. Its closing
// barrier has no call site (a worker) or the region's own (the master: what
// parallel_begin gave). Set while this thread is in such a worksharing one.
__thread bool t_in_workshare_barrier WEFT_INITIAL_EXEC = false;

bool closes_region(const void* codeptr) {
  if (codeptr == nullptr) return true;
  const unsigned depth = t_region_depth;
  return depth > 0 && depth <= kMaxRegionNesting && t_region_sites[depth - 1] == codeptr;
}

void on_sync_region(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint, ompt_data_t*,
                    ompt_data_t*, const void* codeptr) {
  if (kind == ompt_sync_region_barrier_implicit) {  // libomp 14: closing or worksharing
    if (endpoint == ompt_scope_begin && !closes_region(codeptr)) {
      t_in_workshare_barrier = true;
      record_sync(SyncKind::OmpBarrierEnter, pc_of(codeptr), 0, static_cast<int64_t>(kind));
      return;
    }
    if (endpoint == ompt_scope_end && t_in_workshare_barrier) {
      t_in_workshare_barrier = false;
      record_sync(SyncKind::OmpBarrierLeave, pc_of(codeptr), 0, static_cast<int64_t>(kind));
      return;
    }
  }
  switch (kind) {
    case ompt_sync_region_barrier_implicit:  // libomp 14's closing barrier
    case ompt_sync_region_barrier_implicit_parallel:
      if (endpoint == ompt_scope_begin) {
        t_closing_barrier_seen = true;
        record_sync(SyncKind::OmpImplicitBarrier, pc_of(codeptr), 0);
      }
      break;
    case ompt_sync_region_barrier:
    case ompt_sync_region_barrier_explicit:
    case ompt_sync_region_barrier_implementation:
    case ompt_sync_region_barrier_implicit_workshare:
      record_sync(
          endpoint == ompt_scope_begin ? SyncKind::OmpBarrierEnter : SyncKind::OmpBarrierLeave,
          pc_of(codeptr), 0, static_cast<int64_t>(kind));
      break;
    default:
      break;
  }
}

void on_work(ompt_work_t kind, ompt_scope_endpoint_t endpoint, ompt_data_t*, ompt_data_t*,
             uint64_t count, const void* codeptr) {
  if (kind == ompt_work_loop && endpoint == ompt_scope_end)
    record_sync(SyncKind::OmpLoopEnd, pc_of(codeptr), 0, static_cast<int64_t>(count));
}

int initialize_tool(ompt_function_lookup_t lookup, int, ompt_data_t*) {
  auto set_callback = reinterpret_cast<ompt_set_callback_t>(lookup("ompt_set_callback"));
  if (!set_callback) return 0;
  set_callback(ompt_callback_parallel_begin, reinterpret_cast<ompt_callback_t>(on_parallel_begin));
  set_callback(ompt_callback_parallel_end, reinterpret_cast<ompt_callback_t>(on_parallel_end));
  set_callback(ompt_callback_implicit_task, reinterpret_cast<ompt_callback_t>(on_implicit_task));
  set_callback(ompt_callback_sync_region, reinterpret_cast<ompt_callback_t>(on_sync_region));
  set_callback(ompt_callback_work, reinterpret_cast<ompt_callback_t>(on_work));
  return 1;  // keep the tool active
}

void finalize_tool(ompt_data_t*) {}

ompt_start_tool_result_t g_tool = {initialize_tool, finalize_tool, {0}};

}  // namespace

WEFT_EXPORT ompt_start_tool_result_t* ompt_start_tool(unsigned, const char*) {
  initialize();
  return active() ? &g_tool : nullptr;  // dormant: no OMPT overhead
}
