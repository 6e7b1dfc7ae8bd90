// The compressed memory traces of a profile, decoded: per thread and memory
// instruction, the addresses it accessed as nested loops (MAQAO's
// representation), with how many accesses they stand for and whether any
// were lost.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyzers/traces/traces_tables.h"
#include "common/loop_trace.h"
#include "diagnosis/trace_hints.h"
#include "findings/profile_facts.h"
#include "profile/profile.h"

namespace weft {

struct TraceOptions {
  std::optional<uint32_t> thread;
  std::optional<uint64_t> pc;
  std::optional<std::string> line;  // FILE:LINE: every instruction of that source line
};

struct TraceStream {
  uint32_t thread = 0;
  uint64_t pc = 0;
  SourcePosition position;
  std::string code;  // the source line's text, when readable
  std::string kind;  // "read", "write" or "read-write"
  uint32_t access_size = 0;
  uint64_t accesses = 0;
  uint64_t recorded = 0;  // accesses the trace holds (trace_length)
  uint64_t lost = 0;      // accesses beyond the trace budget, not recorded
  size_t encoded_bytes = 0;
  // 8-byte addresses recorded per encoded byte; 0 when nothing is encoded.
  double compression = 0;
  LoopTrace trace;
};

struct TraceFindings {
  ProfileFacts profile;
  std::vector<TraceStream> streams;  // by thread, then pc
};

// One row of the memory_traces table decoded, as the trace hints
// (diagnosis/trace_hints.h) take it.
TracedInstruction traced_instruction(const MemoryTraceInfo& trace);

// Throws FindingError when the profile has no traces, for a malformed
// --line, for both --pc and --line, or when nothing matches the selection.
TraceFindings find_traces(const Profile& profile, const TraceOptions& options);

}  // namespace weft
