#include "common/run_capture.h"

#include <cstdlib>

namespace weft {

const char* sync_kind_name(SyncKind k) {
  switch (k) {
    case SyncKind::ThreadStart:
      return "thread_start";
    case SyncKind::ThreadExit:
      return "thread_exit";
    case SyncKind::ThreadCreate:
      return "thread_create";
    case SyncKind::ThreadJoin:
      return "thread_join";
    case SyncKind::BarrierEnter:
      return "barrier_enter";
    case SyncKind::BarrierLeave:
      return "barrier_leave";
    case SyncKind::MutexLock:
      return "mutex_lock";
    case SyncKind::MutexUnlock:
      return "mutex_unlock";
    case SyncKind::OmpParallelBegin:
      return "omp_parallel_begin";
    case SyncKind::OmpParallelEnd:
      return "omp_parallel_end";
    case SyncKind::OmpImplicitTaskBegin:
      return "omp_implicit_task_begin";
    case SyncKind::OmpImplicitBarrier:
      return "omp_implicit_barrier";
    case SyncKind::OmpBarrierEnter:
      return "omp_barrier_enter";
    case SyncKind::OmpBarrierLeave:
      return "omp_barrier_leave";
    case SyncKind::OmpLoopChunk:
      return "omp_loop_chunk";
    case SyncKind::OmpLoopEnd:
      return "omp_loop_end";
  }
  return "unknown";
}

bool closes_section(SyncKind kind) {
  switch (kind) {
    case SyncKind::ThreadCreate:
    case SyncKind::ThreadJoin:
      return true;
    default:
      return waits_after_closing(kind);
  }
}

bool waits_after_closing(SyncKind kind) {
  switch (kind) {
    case SyncKind::BarrierEnter:
    case SyncKind::OmpBarrierEnter:
    case SyncKind::OmpImplicitBarrier:
    case SyncKind::OmpParallelBegin:
    case SyncKind::ThreadExit:
      return true;
    default:
      return false;
  }
}

bool resumes_section(SyncKind kind) {
  switch (kind) {
    case SyncKind::ThreadStart:
    case SyncKind::BarrierLeave:
    case SyncKind::OmpBarrierLeave:
    case SyncKind::OmpImplicitTaskBegin:
    case SyncKind::OmpParallelEnd:
      return true;
    default:
      return false;
  }
}

std::string format_cache_levels(const CacheGeometry& geometry) {
  std::string text = std::to_string(geometry.line_bytes);
  for (const CacheLevelGeometry& level : geometry.levels)
    text += "," + std::to_string(level.size_bytes) + ":" + std::to_string(level.ways);
  return text;
}

std::optional<std::array<double, 3>> parse_miss_penalties(const std::string& text) {
  std::array<double, 3> penalties{};
  const char* p = text.c_str();
  for (size_t i = 0; i < 3; ++i) {
    char* end = nullptr;
    penalties[i] = std::strtod(p, &end);
    if (end == p || !(penalties[i] >= 0) || *end != (i < 2 ? ',' : '\0')) return std::nullopt;
    p = end + 1;
  }
  return penalties;
}

}  // namespace weft
