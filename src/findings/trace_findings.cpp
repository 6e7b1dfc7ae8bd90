#include "findings/trace_findings.h"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

#include "analyzers/traces/traces_tables.h"
#include "findings/finding_error.h"
#include "findings/profile_facts.h"
#include "findings/source_lines.h"

namespace weft {
namespace {

std::vector<uint64_t> selected_pcs(const Profile& profile, const TraceOptions& options) {
  if (options.pc && options.line) throw FindingError("give either --pc or --line, not both");
  if (options.pc) return {*options.pc};
  if (!options.line) return {};
  const std::string& spec = *options.line;
  const size_t colon = spec.rfind(':');
  uint32_t line = 0;
  if (colon == std::string::npos || colon == 0 ||
      spec.find_first_not_of("0123456789", colon + 1) != std::string::npos ||
      colon + 1 == spec.size() ||
      (line = static_cast<uint32_t>(std::stoul(spec.substr(colon + 1)))) == 0)
    throw FindingError("--line '" + spec + "' is not FILE:LINE");
  std::vector<uint64_t> pcs = profile.pcs_at_line(spec.substr(0, colon), line);
  if (pcs.empty()) throw FindingError("no instruction of the profile is at " + spec);
  return pcs;
}

}  // namespace

TracedInstruction traced_instruction(const MemoryTraceInfo& trace) {
  TracedInstruction i;
  i.thread = trace.thread;
  i.pc = trace.pc;
  i.access_size = trace.access_size;
  i.reads = trace.reads;
  i.writes = trace.writes;
  i.accesses = trace.accesses;
  i.lost = trace.lost;
  i.trace = decode_loop_trace(trace.encoding.data(), trace.encoding.size());
  return i;
}

TraceFindings find_traces(const Profile& profile, const TraceOptions& options) {
  refuse_lost_data(profile, "traces");
  if (!profile.has_analysis(AnalysisId::Traces))
    throw FindingError(profile.path() +
                       " has no memory traces: record it with the traces analysis "
                       "(weft record --analyses comm,traces ...)");
  const std::vector<uint64_t> pcs = selected_pcs(profile, options);
  std::vector<MemoryTraceInfo> traces;
  if (pcs.empty()) {
    traces = memory_traces(profile, options.thread);
  } else {
    for (uint64_t pc : pcs)
      for (MemoryTraceInfo& t : memory_traces(profile, options.thread, pc))
        traces.push_back(std::move(t));
    std::stable_sort(traces.begin(), traces.end(),
                     [](const MemoryTraceInfo& a, const MemoryTraceInfo& b) {
                       return std::tie(a.thread, a.pc) < std::tie(b.thread, b.pc);
                     });
  }
  if (traces.empty()) {
    std::string what = options.thread ? fmt::format(" of thread {}", *options.thread) : "";
    if (options.pc) what += fmt::format(" at pc 0x{:x}", *options.pc);
    if (options.line) what += " at " + *options.line;
    throw FindingError("no memory trace" + what + " in " + profile.path());
  }

  SourceLines sources;
  TraceFindings findings;
  findings.profile = profile_facts(profile);
  for (const MemoryTraceInfo& t : traces) {
    TraceStream s;
    s.thread = t.thread;
    s.pc = t.pc;
    s.position = profile.source_position(t.pc).value_or(SourcePosition{"??", "", 0});
    s.code = sources.line(s.position.file, s.position.line);
    s.kind = t.reads && t.writes ? "read-write" : t.writes ? "write" : "read";
    s.access_size = t.access_size;
    s.accesses = t.accesses;
    s.lost = t.lost;
    s.encoded_bytes = t.encoding.size();
    s.trace = decode_loop_trace(t.encoding.data(), t.encoding.size());
    s.recorded = trace_length(s.trace);
    s.compression = t.encoding.empty() ? 0.0
                                       : 8.0 * static_cast<double>(s.recorded) /
                                             static_cast<double>(t.encoding.size());
    findings.streams.push_back(std::move(s));
  }
  return findings;
}

}  // namespace weft
