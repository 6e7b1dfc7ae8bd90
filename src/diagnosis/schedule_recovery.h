// The OpenMP schedule a loop actually executed (MAQAO, section 3.3: "OpenMP
// work distribution scheme"), from the iterations each thread ran: either
// chunks the runtime reported, or runs of consecutive iterations recovered
// from the memory trace of one instruction that runs once per iteration.
// A loop run several times is recovered per execution (its chunks, or its
// instruction's addresses, in that execution only) and the executions'
// schedules are then merged (merge_executions). Pure analysis: no I/O, no
// profile.
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
  auto operator<=>(const IterationChunk&) const = default;
};

// Per thread, its chunks in execution order.
using ThreadChunks = std::vector<std::vector<IterationChunk>>;

enum class ScheduleKind { Static, Dynamic, Guided, Unknown };

// How many executions of a loop showed one schedule.
struct ScheduleTally {
  std::string schedule;  // schedule_name()
  int64_t executions = 0;
  bool operator==(const ScheduleTally&) const = default;
};

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
  // The loop's executions this result covers, how many of them showed this
  // schedule (kind and chunk), and what the others showed, most frequent
  // first (merge_executions; one execution of its own).
  int64_t executions = 1;
  int64_t agreeing = 1;
  std::vector<ScheduleTally> others;
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

// One execution's part of a stream: its accesses [begin, end), numbered
// from 0 in the stream's order, were made during execution `execution` of
// the loop.
struct StreamPiece {
  size_t stream = 0;
  size_t execution = 0;
  uint64_t begin = 0;
  uint64_t end = 0;
};

// chunks_from_traces for each execution of a loop run several times: the
// addresses of execution e's pieces, over all streams, qualify on their own
// (the rules of chunks_from_traces: one thread per stream and execution,
// at least 2 addresses, pairwise distinct, one arithmetic progression, each
// thread in increasing iteration order), so a loop whose executions
// revisit the same addresses, or alternate between arrays, is recovered
// execution by execution. Result: `executions` entries, nullopt for an
// execution without pieces or that does not qualify, also when one of its
// pieces reaches past the stream's trace (accesses lost to the budget).
// Accesses in no piece are ignored. Pieces with execution >= executions,
// stream >= streams.size() or begin > end are ignored.
std::vector<std::optional<ThreadChunks>> chunks_per_execution(
    const std::vector<TracedInstruction>& streams, const std::vector<StreamPiece>& pieces,
    size_t executions, uint32_t thread_count);

// classify_schedule of chunks recovered from traces, Unknown when the result
// is not to be trusted: chunks of about one iteration (fewer than 2 on
// average) are what an instruction of an inner loop that qualifies by
// chance shows too, so a non-static schedule made of them is Unknown
// rather than "dynamic,1".
RecoveredSchedule classify_traced_chunks(const ThreadChunks& chunks);

// The schedule one instruction's streams show: chunks_from_traces, then
// classify_traced_chunks. Unknown when the instruction does not qualify.
RecoveredSchedule schedule_from_traces(const std::vector<TracedInstruction>& per_thread_streams,
                                       uint32_t thread_count);

// One execution's schedule per entry, in run order, merged into the loop's:
//   - the schedule (kind and chunk, schedule_name) shown by the most
//     executions wins; "unknown" only when no execution showed a schedule;
//     ties: the one whose first execution came first;
//   - kind, chunk and evidence are those of the first execution showing it;
//     iterations and threads the largest among them;
//   - executions = entries, agreeing = those showing it, others = the other
//     schedules with their counts, most frequent first (ties: first seen).
// No entry: Unknown with executions 0.
RecoveredSchedule merge_executions(const std::vector<RecoveredSchedule>& per_execution);

// The instruction whose streams tell a loop's schedule, per execution: per
// candidate, its streams and their pieces (as for chunks_per_execution).
struct TracedCandidate {
  std::vector<TracedInstruction> streams;
  std::vector<StreamPiece> pieces;
};
struct RepresentativeChunks {
  size_t candidate = 0;
  std::vector<std::optional<ThreadChunks>> chunks;  // chunks_per_execution's result
};
// The candidate whose executions qualify most often (ties: the fewest
// traced addresses, then the lower index: an instruction of the loop body
// proper runs once per iteration, one of an inner loop more often), with
// its chunks; nullopt when no candidate qualifies in any execution.
std::optional<RepresentativeChunks> pick_representative(
    const std::vector<TracedCandidate>& candidates, size_t executions, uint32_t thread_count);

}  // namespace weft
