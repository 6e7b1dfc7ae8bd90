// Section instances (docs/metrics.md, "Parallel section"):
// the dynamic occurrences of a parallel section, each with the threads of the
// team that closed it together. They are recovered after the run from each
// thread's synchronization log, in the thread's own order:
//
//   - segment k of a thread is its execution up to its k-th section-closing
//     record (the numbering the imbalance analyzer's segments use); it starts
//     at the thread's previous closing or opening record (a barrier left, an
//     implicit task begun, a create or join returned, the thread's start);
//   - a pthread barrier (and the weft_section_end annotation) groups the
//     n-th arrival of every thread at the same barrier object;
//   - an OpenMP barrier (explicit, worksharing or the region's implicit
//     one) groups the n-th barrier of every thread under the same outlined
//     body (the object of its last implicit-task begin; 0 when the runtime
//     does not tell, as under OMPT);
//   - a recognised condition-variable barrier (a CondBarrier record, logged
//     by the capture session) groups the threads of one episode (its arg1)
//     on one condvar, unless a release on that condvar ended no episode;
//     such a thread's segment ends at its arrival (the record's arg0) and
//     the next one starts where it resumed (the record's time);
//   - a spin flag two threads or more waited for in one release is a team's
//     barrier: its waits and releases (SpinBarrier, SpinRelease) group by
//     release (arg1, from 1) of the flag (the object), arrival and
//     resumption as for a condvar barrier; the waits and releases of other
//     flags, and those of release 0 (before the flag was learned), close a
//     segment of the thread but no section: the thread's part in the next
//     instance spans its segments since the last section it closed, and
//     their waits are its waited_ns;
//   - a thread's exit groups with the other threads joined by the same
//     thread at the same join site during the same fork phase (a create
//     after a join starts a new phase);
//   - creates, joins and parallel-region begins close a single thread's
//     segment and form no team.
//
// Instances with fewer than two threads are not kept.
#pragma once

#include <cstdint>
#include <vector>

#include "common/run_capture.h"

namespace weft {

struct SectionInstanceThread {
  uint32_t thread = 0;
  // The thread's segments in the instance: first_segment..segment (more
  // than one when point-to-point spin waits split it).
  uint32_t first_segment = 0;
  uint32_t segment = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;  // arrival at the closing point
  // The site that closed the segment: the record's pc, or
  // kThreadExitSectionSite for a thread's exit.
  uint64_t site = 0;
  // Time spent in point-to-point spin waits within the segments: waiting,
  // not busy.
  uint64_t waited_ns = 0;
};

struct SectionInstance {
  std::vector<SectionInstanceThread> threads;  // by thread id
  // The most common closing site among the threads (the lowest on ties),
  // with a thread that closed there: what names the section.
  uint64_t site = 0;
  uint32_t site_thread = 0;
};

// Instances in order of their first arrival.
std::vector<SectionInstance> find_section_instances(const std::vector<SyncRecord>& sync);

}  // namespace weft
