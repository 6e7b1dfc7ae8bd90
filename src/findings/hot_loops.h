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
};

struct HotLoopFindings {
  bool recorded = false;      // the profile has the imbalance analysis' block counts
  uint64_t instructions = 0;  // every executed instruction the counts saw
  std::string cpu;            // the CPU model of the static analysis
  std::string plain_binary;   // the uninstrumented build given, if any
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
HotLoopFindings find_hot_loops(const Profile& profile, size_t top, const std::string& cpu = "",
                               const std::string& plain_binary = "");

// Gives each hot loop the memory findings whose source line lies in its
// file and lines.
void attach_memory_hints(HotLoopFindings& loops, const MemoryHints& memory);

}  // namespace weft
