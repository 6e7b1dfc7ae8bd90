// `weft loops`: the static performance of a binary's innermost loops
// (static/loop_performance.h), grouped by the source loop they come from:
// the versions and copies a compiler makes of one loop (vectorized body,
// scalar epilogue, alias-checked fallback, peeled iterations) are shown
// together, as MAQAO does. docs/loops.md.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "calibration/machine_calibration.h"
#include "static/loop_performance.h"

namespace weft {

struct LoopQuery {
  std::string binary;     // an executable or a shared library, unmodified
  std::string function;   // empty: every function
  std::string line_file;  // with `line`: only the source loops that span FILE:LINE
  uint32_t line = 0;
  std::string cpu;  // empty: the host's
  // The calibration of the L2/RAM estimates: this file (--calibration),
  // used as it is; empty: the machine's own in weft's cache directory
  // (default_calibration_path()), when its key is this machine's.
  std::string calibration_file;
  // The iterations per entry of the loops (--trip-count; 0: unknown): a loop
  // nested in another gets LoopPerformance::with_trip_count, and its L2/RAM
  // estimates start from that.
  uint32_t trip_count = 0;
  // Per loop header (--trip-count HEADER=N), before trip_count.
  std::map<uint64_t, uint32_t> trip_counts;
  // A profile of a run of this binary, or of another build of the same
  // program (--profile): the strides and footprints its memory traces
  // recorded replace the addressing's in the L2/RAM estimates.
  std::string profile;
};

// Memory-level parallelism of irregular accesses: how many of one loop's
// independent misses are assumed in flight at once (a core's line-fill
// buffers: 10 on Intel cores since Nehalem, 22+ on AMD Zen; weft assumes
// the smaller). docs/loops.md, "L2 and RAM estimates".
inline constexpr double kIrregularMemoryParallelism = 10.0;

// The calibration `weft loops` used, or why it has none.
struct LoopCalibration {
  bool used = false;
  std::string path;  // the file read
  std::string note;  // when not used: one line saying how to get one
  // When used: the L1, L2 and RAM levels of the file, line size. In core
  // cycles when the file has its TSC ticks per core cycle (then that ratio
  // here), else in TSC ticks as the file has them (ratio 0). A file without
  // an L1 level leaves l1 empty (cache_bytes 0).
  MemoryLevelCalibration l1, l2, ram;
  double tsc_ticks_per_core_cycle = 0;
  uint32_t line_bytes = 0;
};

// The binary loops of one source loop: same function, same file, line
// ranges that overlap.
struct SourceLoop {
  std::string function;
  std::string file;  // empty without debug info (then one binary loop per source loop)
  uint32_t first_line = 0;
  uint32_t last_line = 0;
  std::vector<LoopPerformance> versions;  // in address order
};

struct LoopFindings {
  std::string binary;
  CpuModel cpu;
  uint32_t functions_analyzed = 0;
  std::vector<SourceLoop> source_loops;  // by function address, then first line
  LoopCalibration calibration;
  // With a profile (LoopQuery::profile): its path, and the memory accesses
  // of the loops (every version) that got a recorded stride from it.
  std::string profile;
  uint32_t recorded_accesses = 0;
};

// The calibration in `explicit_file`, or (empty) this machine's in weft's
// cache directory: a missing, unreadable or other machine's default file
// gives a note and no calibration; an explicit file that cannot be used
// throws FindingError.
LoopCalibration resolve_calibration(const std::string& explicit_file);

// Throws FindingError (one line) when the file is missing or is no x86-64
// ELF file, has no function symbols, has no function named `function`, or
// the CPU is unknown.
LoopFindings find_loops(const LoopQuery& query);

// The cycles per iteration of a modeled loop with its operands in `level`
// (docs/loops.md, "L2 and RAM estimates"): the bytes per iteration of its
// strided streams (accesses with the same address registers and
// direction), |stride| bytes for a stride up to a line, a line per access
// (per distinct line the stream's accesses touch in one iteration) beyond;
// unknown-stride accesses counted as stride 1 (their size); irregular
// accesses each paying the level's latency / kIrregularMemoryParallelism.
// An access with a stride recorded by a run (MemoryAccess::recorded, set for
// the report's hot loops and by `weft loops --profile`) is estimated with
// that pattern and stride, its bytes or latency weighted by its executions
// per iteration; a recorded irregular access whose footprint fits in half
// of one of the `nearer` caches (nearest first) pays that cache's latency
// instead of the level's, none when that cache is L1 (MCA's own figure).
MemoryLevelEstimate estimate_memory_level(const LoopPerformance& loop,
                                          const MemoryLevelCalibration& level, uint32_t line_bytes,
                                          const std::vector<MemoryLevelCalibration>& nearer = {});

// The loop's L2 and RAM estimates with `calibration` (used): what
// LoopPerformance::memory_levels holds.
std::vector<MemoryLevelEstimate> memory_level_estimates(const LoopPerformance& loop,
                                                        const LoopCalibration& calibration);

// Groups binary loops into source loops (exposed for tests).
std::vector<SourceLoop> group_by_source_loop(std::vector<LoopPerformance> loops);

}  // namespace weft
