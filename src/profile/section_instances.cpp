#include "profile/section_instances.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>

namespace weft {

namespace {

// What makes segments of different threads one instance.
enum class TeamKind { Barrier, OpenMp, Joined, CondBarrier, SpinBarrier };
using TeamKey = std::tuple<TeamKind, uint64_t, uint64_t, uint64_t>;

// Each thread's records in its own order (the capture keeps that order
// within a thread).
using RecordsByThread = std::map<uint32_t, std::vector<const SyncRecord*>>;

// Per joined thread: the joining thread, the join's pc and the joiner's
// fork phase then.
using Joiners = std::map<uint32_t, std::tuple<uint32_t, uint64_t, uint64_t>>;

// Instances being gathered, and the first arrival of each.
struct Teams {
  std::map<TeamKey, SectionInstance> instances;
  std::map<TeamKey, uint64_t> first_arrival;
};

RecordsByThread records_by_thread(const std::vector<SyncRecord>& sync) {
  RecordsByThread by_thread;
  for (const SyncRecord& r : sync) by_thread[r.thread].push_back(&r);
  return by_thread;
}

// Who joined each thread, where, and in which of the joiner's fork phases.
Joiners find_joiners(const RecordsByThread& by_thread) {
  Joiners joined_by;
  for (const auto& [thread, records] : by_thread) {
    uint64_t phase = 0;
    bool joined_since_create = false;
    for (const SyncRecord* r : records) {
      if (r->kind == SyncKind::ThreadCreate && joined_since_create) {
        ++phase;
        joined_since_create = false;
      }
      if (r->kind == SyncKind::ThreadJoin && r->arg0 >= 0) {
        joined_by[static_cast<uint32_t>(r->arg0)] = {thread, r->pc, phase};
        joined_since_create = true;
      }
    }
  }
  return joined_by;
}

// Condvars with a release that ended no barrier episode: the capture
// session refused them (docs/metrics.md, "Parallel section"), so the
// episodes it recognised on them before are no instances either.
std::set<uint64_t> refused_condvars(const std::vector<SyncRecord>& sync) {
  std::set<uint64_t> refused, wake_ups;
  for (const SyncRecord& r : sync)
    if (r.kind == SyncKind::CondSignal || r.kind == SyncKind::CondBroadcast) {
      if (r.arg0 == 0) refused.insert(r.object);
      if (r.arg0 == kSpinFlagWakeUp) wake_ups.insert(r.object);
    }
  // A condvar that wakes the blocked waiters of a spin flag's release is a
  // spin-then-block barrier's: the episodes in which every waiter blocked
  // are that barrier's too, whatever its other releases found.
  for (uint64_t cv : wake_ups) refused.erase(cv);
  return refused;
}

// Spin flags that are a team's barrier: two threads or more waited for one
// of their releases. The others are flags between two threads (a pipeline's
// neighbour flags).
std::set<uint64_t> team_spin_flags(const std::vector<SyncRecord>& sync) {
  std::map<std::pair<uint64_t, int64_t>, std::set<uint32_t>> waiters;  // by (flag, release)
  std::set<uint64_t> team;
  for (const SyncRecord& r : sync)
    if (r.kind == SyncKind::SpinBarrier) {
      std::set<uint32_t>& threads = waiters[{r.object, r.arg1}];
      threads.insert(r.thread);
      if (threads.size() >= 2) team.insert(r.object);
    }
  return team;
}

// Adds each of the thread's segments to the team of the record closing it.
void add_thread_segments(uint32_t thread, const std::vector<const SyncRecord*>& records,
                         const Joiners& joined_by, const std::set<uint64_t>& refused,
                         const std::set<uint64_t>& team_flags, Teams& teams) {
  uint32_t segment = 0;
  uint32_t first_segment = 0;  // a point-to-point spin part closes a segment, not a section
  uint64_t segment_start = 0;
  uint64_t outlined_body = 0;
  std::map<uint64_t, uint64_t> barrier_arrivals;  // by barrier object
  std::map<uint64_t, uint64_t> omp_barriers;      // by outlined body
  uint64_t waited = 0;  // in point-to-point spin waits since the section's start
  for (const SyncRecord* r : records) {
    if (r->kind == SyncKind::OmpImplicitTaskBegin) outlined_body = r->object;
    // A wait or a release of a flag that is no team's barrier, or a release
    // that came before the flag was learned (release 0, whose write was not
    // logged): the section goes on; a wait's time is waiting, not busy.
    if ((r->kind == SyncKind::SpinBarrier || r->kind == SyncKind::SpinRelease) &&
        (r->arg1 < 1 || !team_flags.contains(r->object))) {
      if (r->kind == SyncKind::SpinBarrier)
        waited += r->time_ns - std::min(r->time_ns, static_cast<uint64_t>(r->arg0));
      ++segment;
      continue;
    }
    if (!closes_section(r->kind)) {
      if (resumes_section(r->kind)) {
        segment_start = r->time_ns;
        waited = 0;
      }
      continue;
    }
    std::optional<TeamKey> key;
    uint64_t site = r->pc;
    uint64_t arrival = r->time_ns;
    switch (r->kind) {
      case SyncKind::CondBarrier:  // logged where the thread resumed
        arrival = static_cast<uint64_t>(r->arg0);
        if (!refused.contains(r->object))
          key = TeamKey{TeamKind::CondBarrier, r->object, static_cast<uint64_t>(r->arg1), 0};
        break;
      case SyncKind::SpinBarrier:  // likewise
      case SyncKind::SpinRelease:
        arrival = static_cast<uint64_t>(r->arg0);
        key = TeamKey{TeamKind::SpinBarrier, r->object, static_cast<uint64_t>(r->arg1), 0};
        break;
      case SyncKind::BarrierEnter:
        key = TeamKey{TeamKind::Barrier, r->object, barrier_arrivals[r->object]++, 0};
        break;
      case SyncKind::OmpBarrierEnter:
      case SyncKind::OmpImplicitBarrier:
        key = TeamKey{TeamKind::OpenMp, outlined_body, omp_barriers[outlined_body]++, 0};
        break;
      case SyncKind::ThreadExit:
        site = kThreadExitSectionSite;
        if (auto it = joined_by.find(thread); it != joined_by.end()) {
          const auto& [joiner, join_pc, phase] = it->second;
          key = TeamKey{TeamKind::Joined, joiner, join_pc, phase};
        }
        break;
      default:
        break;
    }
    if (key) {
      SectionInstance& instance = teams.instances[*key];
      instance.threads.push_back({thread, first_segment, segment, segment_start, arrival, site,
                                  std::min(waited, arrival - std::min(arrival, segment_start))});
      auto [it, fresh] = teams.first_arrival.try_emplace(*key, arrival);
      if (!fresh) it->second = std::min(it->second, arrival);
    }
    first_segment = ++segment;
    segment_start = r->time_ns;
    waited = 0;
  }
}

// Sorts the instance's threads by id and names it by its most common
// closing site (the lowest on ties).
void name_by_site(SectionInstance& instance) {
  std::sort(instance.threads.begin(), instance.threads.end(),
            [](const auto& a, const auto& b) { return a.thread < b.thread; });
  std::map<uint64_t, std::pair<size_t, uint32_t>> sites;  // site -> (threads, first thread)
  for (const SectionInstanceThread& t : instance.threads) {
    auto [it, fresh] = sites.try_emplace(t.site, 0, t.thread);
    ++it->second.first;
  }
  size_t best = 0;
  for (const auto& [site, count_thread] : sites)
    if (count_thread.first > best) {
      best = count_thread.first;
      instance.site = site;
      instance.site_thread = count_thread.second;
    }
}

}  // namespace

std::vector<SectionInstance> find_section_instances(const std::vector<SyncRecord>& sync) {
  const RecordsByThread by_thread = records_by_thread(sync);
  const Joiners joined_by = find_joiners(by_thread);
  const std::set<uint64_t> refused = refused_condvars(sync);
  const std::set<uint64_t> team_flags = team_spin_flags(sync);
  Teams teams;
  for (const auto& [thread, records] : by_thread)
    add_thread_segments(thread, records, joined_by, refused, team_flags, teams);

  std::vector<std::pair<uint64_t, SectionInstance>> ordered;
  for (auto& [key, instance] : teams.instances) {
    if (instance.threads.size() < 2) continue;
    name_by_site(instance);
    ordered.emplace_back(teams.first_arrival.at(key), std::move(instance));
  }
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<SectionInstance> result;
  for (auto& entry : ordered) result.push_back(std::move(entry.second));
  return result;
}

}  // namespace weft
