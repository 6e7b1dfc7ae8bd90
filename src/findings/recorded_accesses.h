// What a run's memory traces recorded for the memory accesses of a loop the
// static analysis read (static/loop_performance.h): each access's stride,
// its executions per iteration and, for an irregular access, the bytes it
// touched (its footprint). The report's hot loops (findings/hot_loops.h)
// and `weft loops --profile` (findings/loop_findings.h) join them the same
// way; the L2/RAM estimates then use them instead of the addressing's guess
// (docs/loops.md, "Strides from the run").
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "diagnosis/trace_hints.h"
#include "profile/profile.h"
#include "static/loop_performance.h"
#include "static/symbolizer.h"

namespace weft {

// Memory traces of a profile, decoded, by runtime pc (every thread's
// stream). Empty when the profile has no traces.
struct TracedPcs {
  std::vector<TracedInstruction> streams;
  std::map<uint64_t, std::vector<const TracedInstruction*>> by_pc;
};
// The traces of the pcs `wanted` accepts (never every trace: decoding all
// of a run's, random gathers over megabytes among them, takes gigabytes).
TracedPcs traced_pcs_if(const Profile& profile, const std::function<bool(uint64_t pc)>& wanted);

// Addresses sampled from each thread's trace of an irregular access to
// measure its footprint: every line of a table as large as an L1 cache is
// seen about a hundred times; one larger than an L2 still counts as larger
// than it.
inline constexpr size_t kFootprintSamples = 65536;

// What the traces recorded for one instruction, its threads' streams pooled
// (diagnosis/trace_hints.h, stride_pattern). The footprint of an irregular
// access is the largest number of distinct lines one thread touched among
// kFootprintSamples of its addresses, in bytes.
std::optional<MemoryAccess::Recorded> recorded_access(
    const std::vector<const TracedInstruction*>& streams, uint32_t line_bytes = 64);

// The source lines of a loop, for pairing the instructions of another build.
struct LineRange {
  std::string file;
  uint32_t first_line = 0;
  uint32_t last_line = 0;
};

// Whether `at` lies within one of `lines` (files matched on their names:
// the two builds' paths may differ).
bool on_lines(const std::vector<LineRange>& lines, const SourcePosition& at);

// The source lines of the memory accesses of `loop` (read from
// `analyzed_file`), one range each: where the instructions of a loop
// inlined from another function are (the loop's own lines, and its region,
// are those of the call).
std::vector<LineRange> memory_access_lines(const LoopPerformance& loop,
                                           const std::string& analyzed_file,
                                           Symbolizer& symbolizer);

// The traces of the instructions on the given lines only (file matched on
// its name): a run's traces of every instruction, random gathers over
// megabytes among them, can take gigabytes once decoded.
TracedPcs traced_pcs_on_lines(const Profile& profile, const std::vector<LineRange>& lines);

// Gives the accesses of `loop` (read from `analyzed_file`) what the run
// recorded for their instructions, and returns how many it gave:
//  - the recorded build itself (a traced pc in the same file as
//    `analyzed_file`): the instruction at the pc's ELF address;
//  - another build of the program (a plain build of a weft-cc profiled one):
//    the accesses on the same source line within one of `lines`, of the
//    same kind and size, paired in address order when both builds have as
//    many (a loop inlined at several places has more on its lines in one
//    build than the other, and stays unpaired).
// Each recorded access's executions per iteration are its executions over
// those of the loop's most executed recorded access.
uint32_t join_recorded_accesses(LoopPerformance& loop, const std::string& analyzed_file,
                                const std::vector<LineRange>& lines, const TracedPcs& traced,
                                const Profile& profile, Symbolizer& symbolizer);

}  // namespace weft
