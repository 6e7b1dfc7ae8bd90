#include "views/perfetto_view.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

namespace weft {
namespace {

using json = nlohmann::json;

constexpr int kPid = 1;

int track(uint32_t thread, int lane) { return static_cast<int>(thread) * 3 + lane; }

json span(const std::string& name, const char* category, int tid, uint64_t start_ns,
          uint64_t end_ns, uint64_t origin_ns, json args) {
  const uint64_t start = start_ns >= origin_ns ? start_ns - origin_ns : 0;
  const uint64_t end = end_ns >= start_ns ? end_ns - start_ns : 0;
  args["start_ns"] = start_ns;
  args["end_ns"] = end_ns >= start_ns ? end_ns : start_ns;
  return {{"name", name},
          {"cat", category},
          {"ph", "X"},
          {"ts", static_cast<double>(start) / 1000.0},
          {"dur", static_cast<double>(end) / 1000.0},
          {"pid", kPid},
          {"tid", tid},
          {"args", std::move(args)}};
}

json metadata(const char* what, int tid, json args) {
  json event = {{"name", what}, {"ph", "M"}, {"pid", kPid}, {"args", std::move(args)}};
  if (tid >= 0) event["tid"] = tid;
  return event;
}

}  // namespace

std::string render_perfetto(const TimelineFindings& t) {
  json events = json::array();
  const uint64_t origin = t.origin_ns;
  events.push_back(metadata("process_name", -1, {{"name", "weft: " + t.command}}));
  for (const TimelineThread& thread : t.threads) {
    const std::string name =
        "T" + std::to_string(thread.id) +
        (thread.start_routine.empty() ? std::string() : " " + thread.start_routine);
    const char* lanes[] = {"", " sections", " omp chunks"};
    for (int lane = 0; lane < 3; ++lane) {
      events.push_back(
          metadata("thread_name", track(thread.id, lane), {{"name", name + lanes[lane]}}));
      events.push_back(metadata("thread_sort_index", track(thread.id, lane),
                                {{"sort_index", track(thread.id, lane)}}));
    }
    events.push_back(span("T" + std::to_string(thread.id), "thread", track(thread.id, 0),
                          thread.start_ns, thread.end_ns, origin,
                          {{"thread", thread.id}, {"start_routine", thread.start_routine}}));
  }
  for (const TimelineSpan& s : t.spans) {
    json args = {{"thread", s.thread}};
    if (!s.location.empty()) args["location"] = s.location;
    const bool chunk = s.kind == TimelineSpanKind::OmpChunk;
    if (chunk) {
      args["first"] = s.first;
      args["end"] = s.last;
    }
    events.push_back(span(s.name, timeline_span_kind_name(s.kind), track(s.thread, chunk ? 2 : 0),
                          s.start_ns, s.end_ns, origin, std::move(args)));
  }
  // Each thread's section starts, in time order: a thread's waiting ends
  // where its next section begins. The team's last arrival is recorded by
  // the last thread after it released the others, so a thread released
  // from a spin barrier may begin its next section a little before it.
  std::map<uint32_t, std::vector<uint64_t>> starts;
  for (const TimelineInstance& instance : t.instances)
    for (const TimelineInstanceThread& member : instance.threads)
      starts[member.thread].push_back(member.start_ns);
  for (auto& [thread, times] : starts) std::sort(times.begin(), times.end());
  for (const TimelineInstance& instance : t.instances) {
    const std::string name = (instance.section.empty() ? instance.region : instance.section) +
                             " #" + std::to_string(instance.instance);
    for (const TimelineInstanceThread& member : instance.threads) {
      const int tid = track(member.thread, 1);
      const std::vector<uint64_t>& times = starts.at(member.thread);
      const auto next = std::upper_bound(times.begin(), times.end(), member.start_ns);
      const uint64_t limit = next == times.end() ? UINT64_MAX : *next;
      // A thread whose recorded arrival precedes its start (it entered a
      // spin wait before its previous segment closed) is busy for no time;
      // arrival_ns keeps the recorded arrival.
      const uint64_t arrival = std::max(member.start_ns, member.end_ns);
      const uint64_t team_end = std::min(instance.team_end_ns, limit);
      json args = {{"instance_id", instance.id},    {"section", instance.region},
                   {"instance", instance.instance}, {"imbalance", instance.imbalance},
                   {"thread", member.thread},       {"arrival_ns", member.end_ns}};
      events.push_back(
          span(name, "section", tid, member.start_ns, std::max(arrival, team_end), origin, args));
      events.push_back(span("busy", "busy", tid, member.start_ns, arrival, origin,
                            {{"instance_id", instance.id}}));
      if (team_end > arrival)
        events.push_back(span("waiting", "waiting", tid, arrival, team_end, origin,
                              {{"instance_id", instance.id}}));
    }
  }
  json out = {{"traceEvents", std::move(events)},
              {"displayTimeUnit", "ns"},
              {"otherData",
               {{"generator", "weft export --perfetto"},
                {"profile", t.profile.path},
                {"command", t.command},
                {"origin_ns", origin},
                {"sections_recorded", t.has_sections},
                {"complete", t.profile.complete}}}};
  // Names from the program may hold any bytes: replace invalid UTF-8.
  return out.dump(1, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace weft
