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
    case SyncKind::CondWaitEnter:
      return "cond_wait_enter";
    case SyncKind::CondWaitLeave:
      return "cond_wait_leave";
    case SyncKind::CondSignal:
      return "cond_signal";
    case SyncKind::CondBroadcast:
      return "cond_broadcast";
    case SyncKind::CondBarrier:
      return "cond_barrier";
    case SyncKind::ThreadJoinEnter:
      return "thread_join_enter";
    case SyncKind::CondBarrierLeave:
      return "cond_barrier_leave";
    case SyncKind::SpinBarrier:
      return "spin_barrier";
    case SyncKind::SpinRelease:
      return "spin_release";
  }
  return "unknown";
}

std::optional<SyncKind> sync_kind_from_name(std::string_view name) {
  for (uint32_t k = static_cast<uint32_t>(SyncKind::ThreadStart);
       k <= static_cast<uint32_t>(SyncKind::SpinRelease); ++k)
    if (name == sync_kind_name(static_cast<SyncKind>(k))) return static_cast<SyncKind>(k);
  return std::nullopt;
}

bool closes_section(SyncKind kind) {
  switch (kind) {
    case SyncKind::ThreadCreate:
    case SyncKind::ThreadJoin:
    case SyncKind::SpinBarrier:  // logged where the thread resumes
    case SyncKind::SpinRelease:
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
    case SyncKind::CondBarrier:  // until its CondBarrierLeave
      return true;
    default:
      return false;
  }
}

bool is_capped_sync(SyncKind kind) {
  switch (kind) {
    case SyncKind::MutexLock:
    case SyncKind::MutexUnlock:
    case SyncKind::CondWaitEnter:
    case SyncKind::CondWaitLeave:
    case SyncKind::CondSignal:
    case SyncKind::CondBroadcast:
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
    case SyncKind::CondBarrierLeave:
      return true;
    default:
      return false;
  }
}

size_t format_decimal(uint64_t value, char* out, size_t size) {
  char digits[20];
  size_t n = 0;
  do {
    digits[n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0);
  for (size_t i = 0; i < n && i + 1 < size; ++i) out[i] = digits[n - 1 - i];
  if (size != 0) out[n < size ? n : size - 1] = '\0';
  return n;
}

size_t format_cache_levels(const CacheGeometry& geometry, char* out, size_t size) {
  size_t n = 0;
  auto put = [&](uint64_t value, char after) {
    char digits[24];
    const size_t k = format_decimal(value, digits, sizeof digits);
    for (size_t i = 0; i < k; ++i, ++n)
      if (n + 1 < size) out[n] = digits[i];
    if (after != '\0') {
      if (n + 1 < size) out[n] = after;
      ++n;
    }
  };
  put(geometry.line_bytes, ',');
  for (int i = 0; i < 3; ++i) {
    put(geometry.levels[i].size_bytes, ':');
    put(geometry.levels[i].ways, i < 2 ? ',' : '\0');
  }
  if (size != 0) out[n < size ? n : size - 1] = '\0';
  return n;
}

std::string format_cache_levels(const CacheGeometry& geometry) {
  char text[128];
  format_cache_levels(geometry, text, sizeof text);
  return text;
}

bool parse_cache_levels(const char* s, CacheGeometry& out) {
  char* end = nullptr;
  CacheGeometry g;
  g.line_bytes = static_cast<uint32_t>(std::strtoull(s, &end, 10));
  if (end == s || g.line_bytes == 0 || (g.line_bytes & (g.line_bytes - 1)) != 0) return false;
  for (CacheLevelGeometry& level : g.levels) {
    if (*end != ',') return false;
    s = end + 1;
    level.size_bytes = std::strtoull(s, &end, 10);
    if (end == s || *end != ':') return false;
    s = end + 1;
    level.ways = static_cast<uint32_t>(std::strtoull(s, &end, 10));
    if (end == s) return false;
  }
  if (*end != '\0') return false;
  out = g;
  return true;
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

uint64_t RunCapture::analysis_number(std::string_view key, uint64_t fallback) const {
  auto it = analysis_values.find(key);
  if (it == analysis_values.end() || it->second.empty()) return fallback;
  char* end = nullptr;
  const uint64_t value = std::strtoull(it->second.c_str(), &end, 10);
  return *end == '\0' ? value : fallback;
}

}  // namespace weft
