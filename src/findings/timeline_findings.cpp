#include "findings/timeline_findings.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "analyzers/imbalance/imbalance_tables.h"
#include "findings/imbalance_findings.h"
#include "findings/source_lines.h"

namespace weft {
namespace {

// The loop key of an omp_loop_chunk object (docs/profile-format.md).
uint64_t loop_key(uint64_t object) { return object >> 4; }

std::string location_of(const Profile& profile, uint64_t pc) {
  if (pc == 0) return "";
  const std::optional<SourcePosition> position = profile.source_position(pc);
  return position ? code_location(*position, pc) : "";
}

std::string function_of(const Profile& profile, uint64_t pc) {
  const std::optional<SourcePosition> position = profile.source_position(pc);
  if (position && !position->function.empty()) return position->function;
  return fmt::format("0x{:x}", pc);
}

// The spans of one thread's log, in its order.
void thread_spans(const Profile& profile, const std::vector<const SyncRecord*>& log,
                  uint64_t thread_end, std::vector<TimelineSpan>& spans) {
  std::vector<const SyncRecord*> open_parallel;
  const SyncRecord* barrier = nullptr;
  const SyncRecord* omp_barrier = nullptr;
  const SyncRecord* join = nullptr;
  const SyncRecord* task = nullptr;
  auto add = [&](const SyncRecord& from, TimelineSpanKind kind, std::string name, uint64_t start_ns,
                 uint64_t end_ns, uint64_t site) {
    TimelineSpan span;
    span.thread = from.thread;
    span.kind = kind;
    span.name = std::move(name);
    span.location = location_of(profile, site);
    span.start_ns = start_ns;
    span.end_ns = std::max(start_ns, end_ns);
    spans.push_back(std::move(span));
  };
  for (size_t i = 0; i < log.size(); ++i) {
    const SyncRecord& r = *log[i];
    switch (r.kind) {
      case SyncKind::BarrierEnter:
        barrier = &r;
        break;
      case SyncKind::BarrierLeave:
        if (barrier)
          add(*barrier, TimelineSpanKind::Barrier, fmt::format("barrier 0x{:x}", barrier->object),
              barrier->time_ns, r.time_ns, barrier->pc);
        barrier = nullptr;
        break;
      case SyncKind::OmpBarrierEnter:
        omp_barrier = &r;
        break;
      case SyncKind::OmpBarrierLeave:
        if (omp_barrier)
          add(*omp_barrier, TimelineSpanKind::OmpBarrier, "omp barrier", omp_barrier->time_ns,
              r.time_ns, omp_barrier->pc);
        omp_barrier = nullptr;
        break;
      case SyncKind::ThreadJoinEnter:
        join = &r;
        break;
      case SyncKind::ThreadJoin:
        if (join)
          add(*join, TimelineSpanKind::Join, fmt::format("join T{}", r.arg0), join->time_ns,
              r.time_ns, join->pc);
        join = nullptr;
        break;
      case SyncKind::OmpParallelBegin:
        open_parallel.push_back(&r);
        break;
      case SyncKind::OmpParallelEnd:
        if (!open_parallel.empty()) {
          const SyncRecord& begin = *open_parallel.back();
          open_parallel.pop_back();
          add(begin, TimelineSpanKind::OmpParallel,
              "omp parallel " + function_of(profile, begin.object), begin.time_ns, r.time_ns,
              begin.pc);
        }
        break;
      case SyncKind::OmpImplicitTaskBegin:
        task = &r;
        break;
      case SyncKind::OmpImplicitBarrier:
        if (task)
          add(*task, TimelineSpanKind::OmpImplicitTask,
              "omp task " + function_of(profile, task->object), task->time_ns, r.time_ns, task->pc);
        task = nullptr;
        break;
      case SyncKind::CondBarrier:
        add(r, TimelineSpanKind::CondBarrier, fmt::format("barrier (condvar 0x{:x})", r.object),
            static_cast<uint64_t>(r.arg0), r.time_ns, r.pc);
        break;
      case SyncKind::SpinBarrier:
        add(r, TimelineSpanKind::SpinWait, fmt::format("spin wait (flag 0x{:x})", r.object),
            static_cast<uint64_t>(r.arg0), r.time_ns, r.pc);
        break;
      case SyncKind::OmpLoopChunk: {
        const uint64_t end = i + 1 < log.size() ? log[i + 1]->time_ns : thread_end;
        TimelineSpan span;
        span.thread = r.thread;
        span.kind = TimelineSpanKind::OmpChunk;
        span.name = fmt::format("chunk {}-{}", r.arg0, r.arg1);
        span.location = location_of(profile, loop_key(r.object));
        span.start_ns = r.time_ns;
        span.end_ns = std::max(r.time_ns, end);
        span.first = r.arg0;
        span.last = r.arg1;
        spans.push_back(std::move(span));
        break;
      }
      default:
        break;
    }
  }
}

}  // namespace

const char* timeline_span_kind_name(TimelineSpanKind kind) {
  switch (kind) {
    case TimelineSpanKind::Barrier:
      return "barrier";
    case TimelineSpanKind::CondBarrier:
      return "cond_barrier";
    case TimelineSpanKind::SpinWait:
      return "spin_wait";
    case TimelineSpanKind::Join:
      return "join";
    case TimelineSpanKind::OmpParallel:
      return "omp_parallel";
    case TimelineSpanKind::OmpImplicitTask:
      return "omp_task";
    case TimelineSpanKind::OmpBarrier:
      return "omp_barrier";
    case TimelineSpanKind::OmpChunk:
      return "omp_chunk";
  }
  return "unknown";
}

TimelineFindings find_timeline(const Profile& profile) {
  TimelineFindings timeline;
  timeline.profile = profile_facts(profile);
  timeline.command = profile.meta_value("command");
  const std::vector<SyncRecord> sync = profile.sync_events();
  std::map<uint32_t, std::vector<const SyncRecord*>> logs;
  for (const SyncRecord& record : sync) logs[record.thread].push_back(&record);

  uint64_t origin = UINT64_MAX;
  for (const ThreadInfo& info : profile.threads()) {
    TimelineThread thread{info.id, info.start_routine, info.start_ns, info.end_ns};
    // A thread whose end was not recorded (a killed run) ends at its last record.
    for (const SyncRecord* record : logs[info.id]) {
      thread.start_ns = thread.start_ns == 0 ? record->time_ns : thread.start_ns;
      thread.end_ns = std::max(thread.end_ns, record->time_ns);
    }
    if (thread.start_ns > 0) origin = std::min(origin, thread.start_ns);
    timeline.threads.push_back(std::move(thread));
  }
  for (const SyncRecord& record : sync)
    if (record.time_ns > 0) origin = std::min(origin, record.time_ns);

  for (const TimelineThread& thread : timeline.threads)
    thread_spans(profile, logs[thread.id], thread.end_ns, timeline.spans);

  timeline.has_sections = profile.has_analysis(AnalysisId::Imbalance);
  if (timeline.has_sections) {
    std::map<int64_t, RegionInfo> regions;
    for (RegionInfo& region : profile.regions()) regions[region.id] = std::move(region);
    for (const SectionInstanceInfo& info : section_instances(profile)) {
      TimelineInstance instance;
      instance.id = info.id;
      instance.instance = info.instance;
      instance.imbalance = info.imbalance;
      if (const auto it = regions.find(info.region_id); it != regions.end()) {
        instance.region = it->second.name;
        instance.section = section_location(it->second);
      }
      for (const InstanceThreadBusy& t : info.threads) {
        instance.threads.push_back({t.thread, t.start_ns, t.end_ns});
        instance.team_end_ns = std::max(instance.team_end_ns, t.end_ns);
        if (t.start_ns > 0) origin = std::min(origin, t.start_ns);
      }
      timeline.instances.push_back(std::move(instance));
    }
  }
  timeline.origin_ns = origin == UINT64_MAX ? 0 : origin;
  std::stable_sort(timeline.spans.begin(), timeline.spans.end(),
                   [](const TimelineSpan& a, const TimelineSpan& b) {
                     return a.thread != b.thread ? a.thread < b.thread : a.start_ns < b.start_ns;
                   });
  return timeline;
}

}  // namespace weft
