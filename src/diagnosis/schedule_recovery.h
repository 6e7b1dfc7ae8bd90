// The OpenMP schedule a loop actually executed (MAQAO, section 3.3: "OpenMP
// work distribution scheme"), from the iterations each thread ran: either
// chunks the runtime reported, or runs of consecutive iterations recovered
// from the memory trace of one instruction that runs once per iteration.
// Pure analysis: no I/O, no profile.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "diagnosis/trace_hints.h"

namespace weft {

struct IterationChunk {
  int64_t begin = 0;
  int64_t end = 0;  // [begin, end), in iteration-number units
  bool operator==(const IterationChunk&) const = default;
};

enum class ScheduleKind { Static, Dynamic, Guided, Unknown };

struct RecoveredSchedule {
  ScheduleKind kind = ScheduleKind::Unknown;
  // static: 0 = unchunked (one block per thread), else the chunk; dynamic:
  // the chunk size; guided: the smallest chunk handed out, the final
  // remainder excluded (an estimate when merged runs hide the last chunks).
  // 0 also when a runtime kind came with chunks that do not tile a range.
  int64_t chunk = 0;
  int64_t iterations = 0;
  unsigned threads = 0;  // threads that ran iterations
  std::string evidence;  // one line, e.g. "4 threads, 1024 iterations, 64 chunks of 16, ..."
};

// "static", "static,4", "dynamic,16", "guided,1", "unknown".
std::string schedule_name(const RecoveredSchedule& schedule);

// chunks_per_thread[t]: the chunks thread t (the OpenMP thread number, so
// chunks_per_thread.size() is the team size) ran, in execution order.
// Iterations need not start at 0 but must tile one range: overlaps or gaps
// give Unknown (or, with a runtime kind, that kind with chunk 0). Empty
// chunks are ignored.
//
// With runtime_kind (the runtime said which schedule it ran), only the chunk
// is derived from the chunks as given:
//   static  - 0 when every thread ran at most one block, blocks in thread
//             order; else as dynamic;
//   dynamic - the most frequent size among the chunks but the one ending at
//             the last iteration (ties: the smaller); when some of those
//             sizes are not multiples of it (merged records), their gcd;
//   guided  - the smallest chunk but the one ending at the last iteration,
//             taken from the libgomp / libomp guided sequence that
//             reproduces every chunk boundary with the fewest merges (the
//             chunks as given when they are exact), else from the chunks.
// Without it the schedule is inferred (see schedule_recovery.cpp for the
// rules); a thread's chunks that are adjacent in execution order are first
// merged into runs, as a trace cannot tell them apart.
RecoveredSchedule classify_schedule(
    const std::vector<std::vector<IterationChunk>>& chunks_per_thread,
    std::optional<ScheduleKind> runtime_kind = std::nullopt);

// The iterations each thread ran, from the streams of one instruction inside
// an OpenMP loop (one TracedInstruction per thread that ran it; `thread` is
// the OpenMP thread number, < thread_count). The instruction qualifies when
// it runs once per iteration at addresses base + s * iteration, s != 0: no
// stream lost accesses, the union of all addresses (at least 2) is pairwise
// distinct and one arithmetic progression, and every thread meets its
// iterations in increasing order (what OpenMP loop schedules do). The sign
// of s comes from the execution order (positive when no thread ran two
// iterations). Iteration = (address - base) / s; a thread's consecutive
// iterations in execution order form one chunk. Result: thread_count
// vectors; nullopt when the instruction does not qualify (also for a thread
// >= thread_count, two streams of one thread, or more than 2^30 addresses).
std::optional<std::vector<std::vector<IterationChunk>>> chunks_from_traces(
    const std::vector<TracedInstruction>& per_thread_streams_of_one_pc, uint32_t thread_count);

// The schedule one instruction's streams show: chunks_from_traces, then
// classify_schedule. Unknown when the instruction does not qualify, and
// when the result is not to be trusted: chunks of about one iteration
// (fewer than 2 on average) are what an instruction of an inner loop that
// qualifies by chance shows too, so a non-static schedule made of them is
// Unknown rather than "dynamic,1".
RecoveredSchedule schedule_from_traces(const std::vector<TracedInstruction>& per_thread_streams,
                                       uint32_t thread_count);

// Among several instructions of one loop (each a vector of per-thread
// streams), the index of the one that qualifies for chunks_from_traces
// (thread_count: 1 + the largest thread number of its streams) with the
// fewest total addresses (ties: the lower index): an instruction of the
// loop body proper runs once per iteration, one of an inner loop more
// often. nullopt when none qualifies.
std::optional<size_t> pick_representative(
    const std::vector<std::vector<TracedInstruction>>& candidates);

}  // namespace weft
