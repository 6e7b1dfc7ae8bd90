// The run as per-thread timelines, for `weft export --perfetto`: each
// thread's lifetime; the parallel section instances the profile holds
// (section_instances: each thread busy from its start to its arrival at the
// closing point, then waiting until the team's last arrival); and the spans
// of the synchronization log (barrier waits, joins, OpenMP parallel regions,
// OpenMP barriers, the chunks of worksharing loops). Times are the profile's
// CLOCK_MONOTONIC nanoseconds, as recorded.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "findings/profile_facts.h"
#include "profile/profile.h"

namespace weft {

struct TimelineThread {
  uint32_t id = 0;
  std::string start_routine;  // "" for the main thread
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
};

struct TimelineInstanceThread {
  uint32_t thread = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;  // arrival at the closing point: busy before, waiting after
};

// One dynamic instance of a parallel section (section_instances), named as
// `weft imbalance` names its section.
struct TimelineInstance {
  int64_t id = 0;                               // section_instances.id
  std::string section;                          // section_location(): "file.c:93"
  std::string region;                           // the region's full name
  int64_t instance = 0;                         // ordinal among the section's instances
  double imbalance = 0;                         // by modeled cycles
  uint64_t team_end_ns = 0;                     // the last arrival
  std::vector<TimelineInstanceThread> threads;  // by thread id
};

enum class TimelineSpanKind {
  Barrier,          // pthread barrier: enter -> leave
  CondBarrier,      // a recognised condition-variable barrier: arrival -> resumption
  SpinWait,         // a wait on a learned spin flag: arrival -> resumption
  Join,             // pthread_join: enter -> return
  OmpParallel,      // the encountering thread: parallel begin -> end
  OmpImplicitTask,  // a team member's implicit task: its begin -> the region's closing barrier
  OmpBarrier,       // an OpenMP barrier: enter -> leave
  OmpChunk,         // a worksharing loop's chunk: handed out -> the thread's next record
};
const char* timeline_span_kind_name(TimelineSpanKind kind);  // "barrier", "omp_chunk", ...

struct TimelineSpan {
  uint32_t thread = 0;
  TimelineSpanKind kind = TimelineSpanKind::Barrier;
  std::string name;      // "barrier 0x…", "join T3", "omp parallel f._omp_fn.0", "chunk 0-16"
  std::string location;  // code_location() of its call site or loop; "" when unknown
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  int64_t first = 0;  // chunks: first iteration
  int64_t last = 0;   // chunks: end iteration (exclusive)
};

struct TimelineFindings {
  ProfileFacts profile;
  std::string command;
  uint64_t origin_ns = 0;     // the earliest time of the run: time 0 of the export
  bool has_sections = false;  // the profile recorded the imbalance analysis (section_instances)
  std::vector<TimelineThread> threads;      // by id
  std::vector<TimelineInstance> instances;  // by id
  std::vector<TimelineSpan> spans;          // by thread, then start
};

TimelineFindings find_timeline(const Profile& profile);

}  // namespace weft
