#include "findings/recorded_accesses.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <tuple>
#include <unordered_set>

#include "analyzers/traces/traces_tables.h"
#include "findings/trace_findings.h"

namespace weft {
namespace {

std::string base_name(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

// The recorded path of a module and a file named on the command line are the
// same file (or, when either is gone, the same path).
bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  const bool equivalent = std::filesystem::equivalent(a, b, ec);
  return ec ? a == b : equivalent;
}

// Distinct lines among kFootprintSamples addresses of one thread's trace.
uint64_t sampled_lines(const TracedInstruction& stream, uint32_t line_bytes) {
  std::unordered_set<uint64_t> lines;
  for (uint64_t address : sample_loop_trace(stream.trace, kFootprintSamples))
    lines.insert(address / line_bytes);
  return lines.size();
}

}  // namespace

namespace {
TracedPcs decode_traces_of(const Profile& profile, const std::set<uint64_t>& pcs) {
  TracedPcs traced;
  for (uint64_t pc : pcs)
    for (const MemoryTraceInfo& t : memory_traces(profile, std::nullopt, pc))
      traced.streams.push_back(traced_instruction(t));
  for (const TracedInstruction& i : traced.streams) traced.by_pc[i.pc].push_back(&i);
  return traced;
}
}  // namespace

TracedPcs traced_pcs_if(const Profile& profile, const std::function<bool(uint64_t pc)>& wanted) {
  if (!profile.has_analysis(AnalysisId::Traces)) return {};
  std::set<uint64_t> pcs;
  for (uint64_t pc : memory_trace_pcs(profile))
    if (wanted(pc)) pcs.insert(pc);
  return decode_traces_of(profile, pcs);
}

TracedPcs traced_pcs_on_lines(const Profile& profile, const std::vector<LineRange>& lines) {
  if (!profile.has_analysis(AnalysisId::Traces)) return {};
  std::set<std::pair<std::string, uint32_t>> asked;
  std::set<uint64_t> pcs;
  for (const LineRange& range : lines) {
    if (range.file.empty()) continue;
    for (uint32_t line = range.first_line; line != 0 && line <= range.last_line; ++line)
      if (asked.emplace(base_name(range.file), line).second)
        for (uint64_t pc : profile.pcs_at_line(base_name(range.file), line)) pcs.insert(pc);
  }
  return decode_traces_of(profile, pcs);
}

std::optional<MemoryAccess::Recorded> recorded_access(
    const std::vector<const TracedInstruction*>& streams, uint32_t line_bytes) {
  const StridePattern pattern = stride_pattern(streams);
  if (pattern.addresses == 0) return std::nullopt;
  MemoryAccess::Recorded r;
  r.irregular = pattern.kind == StrideClass::Irregular;
  r.stride = pattern.stride;
  r.irregular_share = 1.0 - pattern.coverage;
  for (const TracedInstruction* stream : streams) {
    // A read-modify-write instruction (`add [rsi + 4*rax], 1`) is traced as
    // a read and a write per execution.
    r.accesses += stream->reads && stream->writes ? stream->accesses / 2 : stream->accesses;
    if (r.irregular)
      r.footprint_bytes =
          std::max(r.footprint_bytes, sampled_lines(*stream, line_bytes) * line_bytes);
  }
  return r;
}

bool on_lines(const std::vector<LineRange>& lines, const SourcePosition& at) {
  return !at.file.empty() && std::any_of(lines.begin(), lines.end(), [&](const LineRange& range) {
    return !range.file.empty() && base_name(at.file) == base_name(range.file) &&
           at.line >= range.first_line && at.line <= range.last_line;
  });
}

std::vector<LineRange> memory_access_lines(const LoopPerformance& loop,
                                           const std::string& analyzed_file,
                                           Symbolizer& symbolizer) {
  std::vector<LineRange> lines;
  for (const MemoryAccess& access : loop.memory_accesses) {
    const CodeLocation at = symbolizer.symbolize_module_offset(
        analyzed_file, loop.instruction_addresses[access.instruction]);
    if (at.file.empty() || at.line == 0) continue;
    const bool known = std::any_of(lines.begin(), lines.end(), [&](const LineRange& range) {
      return range.file == at.file && range.first_line == at.line;
    });
    if (!known) lines.push_back({at.file, at.line, at.line});
  }
  return lines;
}

uint32_t join_recorded_accesses(LoopPerformance& loop, const std::string& analyzed_file,
                                const std::vector<LineRange>& lines, const TracedPcs& traced,
                                const Profile& profile, Symbolizer& symbolizer) {
  // The recorded build itself: traced pcs at the ELF addresses of the
  // loop's instructions.
  std::map<uint64_t, uint32_t> instruction_at;
  for (uint32_t i = 0; i < loop.instruction_addresses.size(); ++i)
    instruction_at[loop.instruction_addresses[i]] = i;
  std::map<std::string, bool> is_analyzed_file;  // by recorded module path
  std::map<uint32_t, std::optional<MemoryAccess::Recorded>> by_instruction;
  bool in_place = false;
  for (const auto& [pc, streams] : traced.by_pc) {
    const std::optional<Profile::ModuleAddress> at = profile.module_address(pc);
    if (!at) continue;
    auto known = is_analyzed_file.find(at->path);
    if (known == is_analyzed_file.end())
      known = is_analyzed_file.emplace(at->path, same_file(at->path, analyzed_file)).first;
    if (!known->second) continue;
    in_place = true;
    if (auto i = instruction_at.find(at->vaddr); i != instruction_at.end())
      by_instruction[i->second] = recorded_access(streams);
  }
  if (!in_place) {
    // Another build: the accesses of one source line, kind and size, paired
    // in address order.
    using Key = std::tuple<std::string, uint32_t, bool, uint32_t>;  // file, line, store, bytes
    std::map<Key, std::vector<uint64_t>> traced_at;
    for (const auto& [pc, streams] : traced.by_pc) {
      const std::optional<SourcePosition> at = profile.source_position(pc);
      if (!at || !on_lines(lines, *at)) continue;
      const TracedInstruction& first = *streams.front();
      if (first.reads)
        traced_at[{base_name(at->file), at->line, false, first.access_size}].push_back(pc);
      if (first.writes)
        traced_at[{base_name(at->file), at->line, true, first.access_size}].push_back(pc);
    }
    std::map<Key, std::vector<uint32_t>> analyzed_at;  // access indices
    for (uint32_t a = 0; a < loop.memory_accesses.size(); ++a) {
      const MemoryAccess& access = loop.memory_accesses[a];
      const CodeLocation at = symbolizer.symbolize_module_offset(
          analyzed_file, loop.instruction_addresses[access.instruction]);
      if (at.file.empty() || at.line == 0) continue;
      analyzed_at[{base_name(at.file), at.line, access.store, access.bytes}].push_back(a);
    }
    for (const auto& [key, pcs] : traced_at) {
      auto accesses = analyzed_at.find(key);
      if (accesses == analyzed_at.end() || accesses->second.size() != pcs.size()) continue;
      for (size_t k = 0; k < pcs.size(); ++k)
        loop.memory_accesses[accesses->second[k]].recorded =
            recorded_access(traced.by_pc.at(pcs[k]));
    }
  }
  for (MemoryAccess& access : loop.memory_accesses)
    if (auto r = by_instruction.find(access.instruction); r != by_instruction.end())
      access.recorded = r->second;
  // Executions per iteration: over the most executed recorded access's.
  uint64_t most = 0;
  for (const MemoryAccess& access : loop.memory_accesses)
    if (access.recorded) most = std::max(most, access.recorded->accesses);
  uint32_t recorded = 0;
  for (MemoryAccess& access : loop.memory_accesses)
    if (access.recorded) {
      ++recorded;
      access.recorded->per_iteration =
          most ? static_cast<double>(access.recorded->accesses) / static_cast<double>(most) : 1.0;
    }
  return recorded;
}

}  // namespace weft
