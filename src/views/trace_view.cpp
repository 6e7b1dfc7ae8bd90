#include "views/trace_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "common/loop_trace.h"
#include "findings/source_lines.h"
#include "views/view_format.h"

namespace weft {
namespace {

nlohmann::json node_json(const TraceNode& node) {
  using nlohmann::json;
  if (node.kind == TraceNode::Kind::Loop) {
    json body = json::array();
    for (const TraceNode& child : node.body) body.push_back(node_json(child));
    return {{"for", node.count}, {"body", std::move(body)}};
  }
  return {{"val", node.base}, {"coefficients", node.coefficients}};
}

std::vector<uint64_t> selected_pcs(const Profile& profile, const TraceOptions& options) {
  if (options.pc && options.line) throw ViewError("give either --pc or --line, not both");
  if (options.pc) return {*options.pc};
  if (!options.line) return {};
  const std::string& spec = *options.line;
  const size_t colon = spec.rfind(':');
  uint32_t line = 0;
  if (colon == std::string::npos || colon == 0 ||
      spec.find_first_not_of("0123456789", colon + 1) != std::string::npos ||
      colon + 1 == spec.size() ||
      (line = static_cast<uint32_t>(std::stoul(spec.substr(colon + 1)))) == 0)
    throw ViewError("--line '" + spec + "' is not FILE:LINE");
  std::vector<uint64_t> pcs = profile.pcs_at_line(spec.substr(0, colon), line);
  if (pcs.empty()) throw ViewError("no instruction of the profile is at " + spec);
  return pcs;
}

}  // namespace

std::string render_traces(const Profile& profile, const TraceOptions& options) {
  if (!profile.has_traces())
    throw ViewError(profile.path() +
                    " has no memory traces: record it with the traces analysis "
                    "(weft record --analyses comm,traces ...)");
  const std::vector<uint64_t> pcs = selected_pcs(profile, options);
  std::vector<MemoryTraceInfo> traces;
  if (pcs.empty()) {
    traces = profile.memory_traces(options.thread);
  } else {
    for (uint64_t pc : pcs)
      for (MemoryTraceInfo& t : profile.memory_traces(options.thread, pc))
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
    throw ViewError("no memory trace" + what + " in " + profile.path());
  }

  SourceLines sources;
  nlohmann::json entries = nlohmann::json::array();
  std::string text;
  for (const MemoryTraceInfo& t : traces) {
    const LoopTrace trace = decode_loop_trace(t.encoding.data(), t.encoding.size());
    const SourcePosition position =
        profile.source_position(t.pc).value_or(SourcePosition{"??", "", 0});
    const uint64_t recorded = trace_length(trace);
    const std::string kind = t.reads && t.writes ? "read-write" : t.writes ? "write" : "read";
    if (options.json) {
      nlohmann::json nodes = nlohmann::json::array();
      for (const TraceNode& node : trace.elements) nodes.push_back(node_json(node));
      entries.push_back({{"thread", t.thread},
                         {"pc", t.pc},
                         {"file", position.file},
                         {"line", position.line},
                         {"function", position.function},
                         {"kind", kind},
                         {"access_size", t.access_size},
                         {"accesses", t.accesses},
                         {"recorded", recorded},
                         {"lost", t.lost},
                         {"lossless", t.lost == 0},
                         {"encoded_bytes", t.encoding.size()},
                         {"trace", std::move(nodes)}});
      continue;
    }
    const double ratio = t.encoding.empty() ? 0.0
                                            : 8.0 * static_cast<double>(recorded) /
                                                  static_cast<double>(t.encoding.size());
    text += fmt::format(
        "thread {}  pc 0x{:x}  {}  {} {} bytes  {} accesses  {}  {} bytes encoded ({:.0f}x)\n",
        t.thread, t.pc, code_location(position, t.pc), kind, t.access_size, t.accesses,
        t.lost == 0 ? std::string("lossless") : fmt::format("LOSSY: last {} not recorded", t.lost),
        t.encoding.size(), ratio);
    const std::string code = sources.line(position.file, position.line);
    if (!code.empty()) text += "  | " + code + "\n";
    const std::string body = format_loop_trace(trace, options.max_lines);
    size_t start = 0;
    while (start < body.size()) {
      size_t end = body.find('\n', start);
      if (end == std::string::npos) end = body.size();
      text += "  " + body.substr(start, end - start) + "\n";
      start = end + 1;
    }
    text += "\n";
  }
  return options.json ? entries.dump() + "\n" : text;
}

}  // namespace weft
