// The loops that ran most, joined with what weft knows of each: their
// share of the executed instructions (the imbalance analysis' block
// counts), the communication read there, and the static performance of
// the binary loop (static/loop_performance.h: vectorization, cycles per
// iteration in L1, bottleneck) — one line of truth per loop in the report
// (docs/loops.md, "Joined with a profile").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "findings/cache_model.h"
#include "findings/loop_findings.h"
#include "findings/memory_findings.h"
#include "profile/profile.h"
#include "static/loop_performance.h"

namespace weft {

struct HotLoop {
  RegionInfo region;                          // kind "loop"
  uint64_t instructions = 0;                  // executed in it, every thread
  double share = 0;                           // of every executed instruction of the run
  std::vector<uint64_t> thread_instructions;  // by thread id
  // The busiest thread's instructions over the mean of the threads that ran
  // it (1: balanced; 2: one thread did twice the average).
  double thread_spread = 0;
  // The report's memory findings (traces, false sharing) on its source lines.
  std::vector<MemoryHint> memory;
  uint64_t raw = 0;  // communication its instructions read
  uint64_t rar = 0;
  // The binary loop holding the block that ran most instructions there:
  // its file and ELF address, and its static analysis (nullopt, with the
  // reason, when the file cannot be analyzed).
  std::string module;
  uint64_t vaddr = 0;
  std::string function;     // the physical function of that block, as symbolized
  std::string analyzed_in;  // the file the static analysis read (module, or the plain build)
  std::optional<LoopPerformance> performance;
  std::string not_analyzed;
  // A loop with several paths whose blocks' executions the profile counts
  // (in place only: the blocks of a plain build are not the profiled
  // ones): its hot path, the blocks run in at least half of its iterations
  // (the header's executions), when that leaves some out. `performance`
  // then simulates those blocks only (its `blocks` stays the loop's), and
  // all_paths_cycles is the simulation of every block. 0: every block.
  uint32_t hot_path_blocks = 0;
  double all_paths_cycles = 0;
  // Memory accesses of `performance` whose stride the run's traces
  // recorded (MemoryAccess::recorded): the L2/RAM estimates use those.
  uint32_t recorded_strides = 0;
  // The CRD of the communication read by its instructions (the crd
  // analysis), as the report's locality table gives a region's: the median
  // of the line visits, and the shares of the events beyond the cache's
  // min and max cutoffs (probable and certain capacity misses).
  struct Crd {
    uint64_t events = 0;  // with a distance
    std::optional<uint64_t> median;
    double beyond_min = 0;
    double above_max = 0;
  };
  std::optional<Crd> crd;
};

struct HotLoopFindings {
  bool recorded = false;                 // the profile has the imbalance analysis' block counts
  uint64_t instructions = 0;             // every executed instruction the counts saw
  std::string cpu;                       // the CPU model of the static analysis
  std::vector<std::string> cpu_caveats;  // where its tables are wrong (CpuModel::caveats)
  std::string plain_binary;              // the uninstrumented build given, if any
  // Without this machine's calibration, how to get one (the loops then have
  // no L2/RAM estimates).
  std::string calibration_note;
  std::vector<HotLoop> loops;  // by instructions, descending, at most `top`
};

// Loops below this share of the executed instructions are not hot.
inline constexpr double kMinHotLoopShare = 0.01;

// The `top` loop regions by executed instructions, of kMinHotLoopShare at
// least. `cpu`: an LLVM CPU name,
// empty for this machine's. A loop of an instrumented (weft-cc) build is
// analyzed in `plain_binary`, a build of the same program without weft-cc,
// found there by its function and source lines (instrumentation changes
// the code: calls in every loop, registers spilled around them); without
// one it is not analyzed, and not_analyzed says how to get it. Never throws
// for a binary it cannot analyze; throws FindingError for an unknown CPU.
// `calibration`: the file of the L2/RAM estimates (as `weft loops
// --calibration`); empty: this machine's. A memory access whose instruction
// the traces analysis recorded gets the stride of its streams
// (MemoryAccess::recorded), in place by its address, in the plain build by
// its source line, kind and size (one-to-one only).
HotLoopFindings find_hot_loops(const Profile& profile, size_t top, const std::string& cpu = "",
                               const std::string& plain_binary = "",
                               const std::string& calibration = "");

// Gives each hot loop the memory findings whose source line lies in its
// file and lines.
void attach_memory_hints(HotLoopFindings& loops, const MemoryHints& memory);

// Gives each hot loop the CRD of its region against `cache` (a profile
// with the crd analysis; docs/metrics.md, "CRD").
void attach_crd(HotLoopFindings& loops, const Profile& profile, const CacheModel& cache);

}  // namespace weft
