#include "views/falseshare_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "findings/source_lines.h"
#include "views/text_table.h"

namespace weft {

namespace {

using nlohmann::json;

json line_json(const FalseSharingLine& line) {
  json threads = json::array();
  for (const ThreadOffsets& t : line.threads) {
    json ranges = json::array();
    for (const auto& [first, last] : t.ranges) ranges.push_back({first, last});
    threads.push_back({{"thread", t.thread}, {"offsets", std::move(ranges)}});
  }
  json pairs = json::array();
  for (const FalseSharingPair& p : line.pairs)
    pairs.push_back({{"writer", p.writer}, {"reader", p.reader}, {"events", p.events}});
  json sites = json::array();
  for (const FalseSharingSite& s : line.sites)
    sites.push_back({{"file", s.position.file},
                     {"line", s.position.line},
                     {"function", s.position.function},
                     {"thread", s.thread},
                     {"pc", s.pc},
                     {"events", s.events}});
  json allocated = nullptr;
  if (line.allocated_at)
    allocated = {{"file", line.allocated_at->file},
                 {"line", line.allocated_at->line},
                 {"function", line.allocated_at->function}};
  return {{"address", line.line_address},
          {"symbol", line.object.kind == "global" ? json(line.object.name) : json(nullptr)},
          {"object_kind", line.object.kind},
          {"object_address",
           line.object.kind == "unknown" ? json(nullptr) : json(line.object.object_address)},
          {"object_size",
           line.object.kind == "unknown" ? json(nullptr) : json(line.object.object_size)},
          {"allocated_at", std::move(allocated)},
          {"events", line.events},
          {"threads", std::move(threads)},
          {"pairs", std::move(pairs)},
          {"sites", std::move(sites)},
          {"fix", line.fix}};
}

std::string render_json(const std::vector<FalseSharingLine>& lines) {
  json entries = json::array();
  for (const FalseSharingLine& line : lines) entries.push_back(line_json(line));
  return entries.dump() + "\n";
}

// The line numbered `rank`: its data, the bytes each thread used, the
// thread pairs and the instructions involved.
std::string render_line(size_t rank, const FalseSharingLine& line) {
  std::string text = fmt::format("\n{}. line 0x{:x}  {} false-sharing event{}\n   data: {}\n", rank,
                                 line.line_address, line.events, line.events == 1 ? "" : "s",
                                 data_object_description(line));
  std::string offsets;
  for (const ThreadOffsets& t : line.threads)
    offsets +=
        fmt::format("{}t{} {}", offsets.empty() ? "" : "  ", t.thread, format_offsets(t.ranges));
  text += "   bytes used: " + offsets + "\n";
  std::string pairs;
  for (const FalseSharingPair& p : line.pairs)
    pairs += fmt::format("{}{}->{} {}", pairs.empty() ? "" : "  ", p.writer, p.reader, p.events);
  text += "   pairs (writer->reader events): " + pairs + "\n";
  using A = TextTable::Align;
  TextTable sites({A::Right, A::Right, A::Left, A::Left});
  sites.add_row({"thread", "events", "where", "code"});
  for (const FalseSharingSite& s : line.sites)
    sites.add_row({std::to_string(s.thread), std::to_string(s.events),
                   code_location(s.position, s.pc), s.code});
  text += sites.render("   ");
  text += "   fix: " + line.fix + "\n";
  return text;
}

std::string render_table(const FalseSharingFindings& findings,
                         const std::vector<FalseSharingLine>& lines) {
  std::string text = fmt::format("False sharing: {}\n", findings.profile.path);
  if (!findings.profile.complete)
    text += "  (profile INCOMPLETE: " + findings.profile.incomplete_reason + ")\n";
  const std::string& untracked = findings.untracked_accesses;
  if (!untracked.empty() && untracked != "0")
    text +=
        fmt::format("  note: {} accesses by threads 48 and above were not analyzed\n", untracked);
  if (lines.empty()) return text + "  none: no line was shared by threads using different bytes\n";
  for (size_t i = 0; i < lines.size(); ++i) text += render_line(i + 1, lines[i]);
  return text;
}

}  // namespace

std::string render_false_sharing(const FalseSharingFindings& findings,
                                 const FalseShareRenderOptions& options) {
  if (options.format == OutputFormat::Csv)
    throw ViewError("falseshare has no csv format; use --format table or json");
  const std::vector<FalseSharingLine> lines(
      findings.lines.begin(), findings.lines.begin() + static_cast<std::ptrdiff_t>(std::min(
                                                           options.top, findings.lines.size())));
  if (options.format == OutputFormat::Json) return render_json(lines);
  return render_table(findings, lines);
}

}  // namespace weft
