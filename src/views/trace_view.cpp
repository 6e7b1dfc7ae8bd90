#include "views/trace_view.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "findings/source_lines.h"

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

}  // namespace

std::string render_traces(const TraceFindings& findings, const TraceRenderOptions& options) {
  nlohmann::json entries = nlohmann::json::array();
  std::string text;
  if (!options.json && !findings.profile.complete)
    text += fmt::format("warning: INCOMPLETE profile ({})\n", findings.profile.incomplete_reason);
  if (!options.json)
    if (const std::string note = instance_sampling_note(findings.profile); !note.empty())
      text += "note: " + note + "\n";
  for (const TraceStream& s : findings.streams) {
    if (options.json) {
      nlohmann::json nodes = nlohmann::json::array();
      for (const TraceNode& node : s.trace.elements) nodes.push_back(node_json(node));
      entries.push_back({{"thread", s.thread},
                         {"pc", s.pc},
                         {"file", s.position.file},
                         {"line", s.position.line},
                         {"function", s.position.function},
                         {"kind", s.kind},
                         {"access_size", s.access_size},
                         {"accesses", s.accesses},
                         {"recorded", s.recorded},
                         {"lost", s.lost},
                         {"lossless", s.lost == 0},
                         {"encoded_bytes", s.encoded_bytes},
                         {"trace", std::move(nodes)}});
      continue;
    }
    text += fmt::format(
        "thread {}  pc 0x{:x}  {}  {} {} bytes  {} accesses  {}  {} bytes encoded ({:.0f}x)\n",
        s.thread, s.pc, code_location(s.position, s.pc), s.kind, s.access_size, s.accesses,
        s.lost == 0 ? std::string("lossless") : fmt::format("LOSSY: last {} not recorded", s.lost),
        s.encoded_bytes, s.compression);
    if (!s.code.empty()) text += "  | " + s.code + "\n";
    const std::string body = format_loop_trace(s.trace, options.max_lines);
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
