#include "views/falseshare_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "findings/source_lines.h"
#include "views/text_table.h"

namespace weft {

namespace {

using nlohmann::json;

json position_json(const SourcePosition& p) {
  return {{"file", p.file}, {"line", p.line}, {"function", p.function}};
}

json item_json(const SharingItem& item) {
  json threads = json::array();
  for (const ThreadOffsets& t : item.threads) {
    json ranges = json::array();
    for (const auto& [first, last] : t.ranges) ranges.push_back({first, last});
    threads.push_back({{"thread", t.thread}, {"offsets", std::move(ranges)}});
  }
  json pairs = json::array();
  for (const FalseSharingPair& p : item.pairs)
    pairs.push_back({{"writer", p.writer}, {"reader", p.reader}, {"events", p.events}});
  json sites = json::array();
  for (const FalseSharingSite& s : item.sites)
    sites.push_back({{"file", s.position.file},
                     {"line", s.position.line},
                     {"function", s.position.function},
                     {"thread", s.thread},
                     {"pc", s.pc},
                     {"events", s.events}});
  json source_lines = json::array();
  for (const SharingSourceLine& s : item.source_lines) {
    json line = position_json(s.position);
    line["pc"] = s.pc;
    line["events"] = s.events;
    source_lines.push_back(std::move(line));
  }
  json top_lines = json::array();
  for (const SharingLineEvents& l : item.top_lines)
    top_lines.push_back({{"address", l.line_address}, {"events", l.events}});
  const bool known = item.object.kind != "unknown";
  return {{"kind", sharing_kind_name(item.kind)},
          {"events", item.events},
          {"false_events", item.false_events},
          {"lines", item.lines},
          {"address", item.line_address},
          {"symbol", item.object.kind == "global" ? json(item.object.name) : json(nullptr)},
          {"object_kind", item.object.kind},
          {"object_address", known ? json(item.object.object_address) : json(nullptr)},
          {"object_size", known ? json(item.object.object_size) : json(nullptr)},
          {"allocated_at", item.allocated_at ? position_json(*item.allocated_at) : json(nullptr)},
          {"blocks", item.blocks},
          {"read_only", item.read_only},
          {"neighbours", item.neighbours},
          {"source_lines", std::move(source_lines)},
          {"threads", std::move(threads)},
          {"pairs", std::move(pairs)},
          {"sites", std::move(sites)},
          {"top_lines", std::move(top_lines)},
          {"time_share", item.time_share >= 0 ? json(item.time_share) : json(nullptr)},
          {"negligible", item.negligible()},
          {"hand_over", item.hand_over},
          {"fix", item.fix}};
}

std::string render_json(const std::vector<SharingItem>& items) {
  json entries = json::array();
  for (const SharingItem& item : items) entries.push_back(item_json(item));
  return entries.dump() + "\n";
}

// The item numbered `rank`: its volume and data, the bytes each thread
// used, the thread pairs, its busiest lines and the instructions involved.
std::string render_item(size_t rank, const SharingItem& item) {
  const bool race = item.kind == SharingKind::Unsynchronised;
  std::string text =
      fmt::format("\n{}. {} {} on {}\n", rank, group_digits(item.events),
                  race ? (item.events == 1 ? "unsynchronised write" : "unsynchronised writes")
                       : (item.events == 1 ? "false-sharing transfer" : "false-sharing transfers"),
                  item_headline(item));
  if (race && item.false_events > 0)
    text += fmt::format("   and {} false-sharing transfer{} of these lines for it\n",
                        group_digits(item.false_events), item.false_events == 1 ? "" : "s");
  std::string offsets;
  for (const ThreadOffsets& t : item.threads)
    offsets +=
        fmt::format("{}t{} {}", offsets.empty() ? "" : "  ", t.thread, format_offsets(t.ranges));
  text += (race ? "   bytes written over: " : "   bytes used: ") + offsets + "\n";
  std::string pairs;
  for (const FalseSharingPair& p : item.pairs)
    pairs += fmt::format("{}{}->{} {}", pairs.empty() ? "" : "  ", p.writer, p.reader, p.events);
  text += (race ? "   writes (earlier writer->writer events): "
                : "   pairs (writer->reader events): ") +
          pairs + "\n";
  if (item.lines > 1) {
    std::string lines;
    for (const SharingLineEvents& l : item.top_lines)
      lines += fmt::format("{}0x{:x} {}", lines.empty() ? "" : "  ", l.line_address, l.events);
    text += "   busiest lines: " + lines + "\n";
  }
  using A = TextTable::Align;
  TextTable sites({A::Right, A::Right, A::Left, A::Left});
  sites.add_row({"thread", "events", "where", "code"});
  for (const FalseSharingSite& s : item.sites)
    sites.add_row({std::to_string(s.thread), group_digits(s.events),
                   code_location(s.position, s.pc), s.code});
  text += sites.render("   ");
  if (item.time_share >= 0 && item.actionable())  // a negligible one's fix says it, a hand-over's
    text += "   cost: " + time_share_estimate(item) + "\n";
  text += "   fix: " + item.fix + "\n";
  return text;
}

std::string render_table(const FalseSharingFindings& findings,
                         const std::vector<SharingItem>& items) {
  std::string text =
      fmt::format("False sharing and unsynchronised sharing: {}\n", findings.profile.path);
  if (!findings.profile.complete)
    text += "  (profile INCOMPLETE: " + findings.profile.incomplete_reason + ")\n";
  const std::string& untracked = findings.untracked_accesses;
  if (!untracked.empty() && untracked != "0")
    text +=
        fmt::format("  note: {} accesses by threads 48 and above were not analyzed\n", untracked);
  if (const std::string note = instance_sampling_note(findings.profile); !note.empty())
    text += "  note: " + note + "\n";
  const auto races =
      static_cast<size_t>(std::count_if(items.begin(), items.end(), [](const SharingItem& item) {
        return item.kind == SharingKind::Unsynchronised;
      }));
  if (races > 0) text += "\nUnsynchronised sharing (possible data races)\n";
  for (size_t i = 0; i < races; ++i) text += render_item(i + 1, items[i]);
  text += fmt::format("\nFalse sharing (items of at least {} transfer{})\n", findings.min_events,
                      findings.min_events == 1 ? "" : "s");
  if (races == items.size()) text += "  none\n";
  for (size_t i = races; i < items.size(); ++i) text += render_item(i + 1, items[i]);
  if (findings.smaller_items > 0)
    text += fmt::format(
        "\n  {} smaller false-sharing item{} ({} transfer{} in all) below --min-events {} not "
        "listed\n",
        findings.smaller_items, findings.smaller_items == 1 ? "" : "s",
        group_digits(findings.smaller_events), findings.smaller_events == 1 ? "" : "s",
        findings.min_events);
  return text;
}

}  // namespace

std::string render_false_sharing(const FalseSharingFindings& findings,
                                 const FalseShareRenderOptions& options) {
  if (options.format == OutputFormat::Csv)
    throw ViewError("falseshare has no csv format; use --format table or json");
  const std::vector<SharingItem> items(
      findings.items.begin(), findings.items.begin() + static_cast<std::ptrdiff_t>(std::min(
                                                           options.top, findings.items.size())));
  if (options.format == OutputFormat::Json) return render_json(items);
  return render_table(findings, items);
}

}  // namespace weft
