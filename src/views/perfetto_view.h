// `weft export --perfetto`: the run's timeline (findings/timeline_findings.h)
// as Chrome trace-event JSON, which Perfetto (ui.perfetto.dev) and
// chrome://tracing open. One process; per thread three tracks (thread
// ids tid = 3 * T, 3 * T + 1, 3 * T + 2, named "T<T> ...", sorted by T):
//   - "T<T>": the thread's lifetime, and in it the synchronization spans of
//     its log (barrier waits, joins, OpenMP parallel regions and barriers);
//   - "T<T> sections": each section instance the thread took part in, named
//     as `weft imbalance` names the section ("file.c:93 #4"), with its
//     "busy" span (start to arrival) and "waiting" span (arrival to the
//     team's last arrival, or to the thread's next section if that began
//     first) nested in it;
//   - "T<T> omp chunks": the chunks of worksharing loops.
// Every span is a complete event (ph "X") with ts and dur in microseconds
// since the run's first recorded time; exact nanoseconds are in its args
// (start_ns, end_ns). Field names: docs/commands.md.
#pragma once

#include <string>

#include "findings/timeline_findings.h"

namespace weft {

std::string render_perfetto(const TimelineFindings& timeline);

}  // namespace weft
