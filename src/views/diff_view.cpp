#include "views/diff_view.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>
#include <optional>

#include "views/text_table.h"

namespace weft {
namespace {

std::string median_text(const LocalityMetrics& m) {
  return m.median() ? std::to_string(*m.median()) : std::string("-");
}

std::string beyond_text(const LocalityMetrics& m) {
  return m.crd.events > 0 ? fmt::format("{:.1f}%", m.crd.fraction_beyond_min() * 100)
                          : std::string("-");
}

std::string ratio_text(const std::optional<double>& ratio) {
  return ratio ? fmt::format("x{:.2f}", *ratio) : std::string("-");
}

std::string profile_line(const char* label, const DiffProfile& profile) {
  const ProfileFacts& facts = profile.facts;
  std::string line = fmt::format("{} = {}: {} threads, granularity {} bytes, cache {} ({})\n",
                                 label, facts.path, facts.threads, facts.granularity,
                                 human_bytes(profile.cache.bytes), profile.cache.origin);
  if (!facts.complete) {
    line +=
        fmt::format("warning: {} is an INCOMPLETE profile ({})\n", label, facts.incomplete_reason);
  }
  if (const std::string note = crd_sampling_note(facts); !note.empty())
    line += fmt::format("note: {}: {}\n", label, note);
  return line;
}

std::string render_only(const char* title, const std::vector<RegionDiff>& diffs, bool in_a) {
  std::string text = fmt::format("\n{}\n", title);
  if (diffs.empty()) return text + "  none\n";
  using A = TextTable::Align;
  TextTable table({A::Left, A::Left, A::Left, A::Right, A::Right, A::Right});
  table.add_row({"region", "kind", "location", "raw+rar", "crd events", "median crd"});
  for (const RegionDiff& diff : diffs) {
    const DiffSide& side = in_a ? *diff.a : *diff.b;
    table.add_row({diff.region.name, diff.region.kind, region_location(diff.region),
                   std::to_string(side.metrics.raw_total + side.metrics.rar_total),
                   std::to_string(side.metrics.crd.events), median_text(side.metrics)});
  }
  return text + table.render("  ");
}

std::string render_table(const DiffFindings& data) {
  std::string text = "weft diff: communication locality, region by region\n";
  text += profile_line("A", data.a);
  text += profile_line("B", data.b);
  text += fmt::format(
      "\nRegions in both, worst scaling first (scales badly, then median CRD growth "
      "(B+1)/(A+1), then events B/A)\n");
  if (data.both.empty()) {
    text += "  none\n";
  } else {
    using A = TextTable::Align;
    TextTable table({A::Right, A::Left, A::Right, A::Right, A::Right, A::Right, A::Right, A::Right,
                     A::Right, A::Right, A::Left});
    table.add_row({"#", "region", "events A -> B", "x", "median A -> B", "x", "beyond min A -> B",
                   "bin shift", "H A -> B", "B A -> B", "verdict"});
    for (size_t i = 0; i < data.both.size(); ++i) {
      const RegionDiff& diff = data.both[i];
      const LocalityMetrics& ma = diff.a->metrics;
      const LocalityMetrics& mb = diff.b->metrics;
      table.add_row(
          {std::to_string(i + 1), diff.region.name,
           fmt::format("{} -> {}", ma.crd.events, mb.crd.events), ratio_text(diff.events_ratio),
           fmt::format("{} -> {}", median_text(ma), median_text(mb)), ratio_text(diff.median_ratio),
           fmt::format("{} -> {}", beyond_text(ma), beyond_text(mb)),
           diff.bin_shift ? fmt::format("{:+.2f}", *diff.bin_shift) : std::string("-"),
           fmt::format("{:.3g} -> {:.3g}", ma.homogeneity, mb.homogeneity),
           fmt::format("{:.1f}% -> {:.1f}%", ma.balance, mb.balance),
           diff.scales_badly ? "scales badly: " + fmt::format("{}", fmt::join(diff.reasons, "; "))
                             : std::string("ok")});
    }
    text += table.render("  ");
  }
  text += render_only("Only in A (no region of that name in B)", data.only_a, true);
  text += render_only("Only in B (no region of that name in A)", data.only_b, false);
  return text;
}

nlohmann::json optional_number(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

nlohmann::json side_json(const LocalityMetrics& m) {
  using nlohmann::json;
  return {{"raw", m.raw_total},
          {"rar", m.rar_total},
          {"events", m.crd.events},
          {"unmeasured", m.unmeasured},
          {"median", m.median() ? json(*m.median()) : json(nullptr)},
          {"granule_median", m.crd.median ? json(*m.crd.median) : json(nullptr)},
          {"min_cutoff", m.cutoffs.min},
          {"max_cutoff", m.cutoffs.max},
          {"fraction_beyond_min", m.crd.fraction_beyond_min()},
          {"mean_log2_bin", m.crd.mean_log2_bin},
          {"homogeneity", m.homogeneity},
          {"balance", m.balance}};
}

nlohmann::json region_json(const RegionInfo& region) {
  using nlohmann::json;
  return {{"region", region.name},
          {"kind", region.kind},
          {"file", region.file.empty() ? json(nullptr) : json(region.file)},
          {"first_line", region.first_line == 0 ? json(nullptr) : json(region.first_line)},
          {"last_line", region.last_line == 0 ? json(nullptr) : json(region.last_line)}};
}

nlohmann::json profile_json(const DiffProfile& profile) {
  return {{"profile", profile.facts.path},
          {"threads", profile.facts.threads},
          {"granularity",
           profile.granularity ? nlohmann::json(*profile.granularity) : nlohmann::json(nullptr)},
          {"complete", profile.facts.complete},
          {"cache_bytes", profile.cache.bytes},
          {"cache_source", cache_source_name(profile.cache.source)},
          {"cache_origin", profile.cache.origin}};
}

std::string render_json(const DiffFindings& data) {
  using nlohmann::json;
  json both = json::array();
  for (const RegionDiff& diff : data.both) {
    json object = region_json(diff.region);
    object["a"] = side_json(diff.a->metrics);
    object["b"] = side_json(diff.b->metrics);
    object["events_ratio"] = optional_number(diff.events_ratio);
    object["median_ratio"] = optional_number(diff.median_ratio);
    object["mean_log2_bin_change"] = optional_number(diff.bin_shift);
    object["scales_badly"] = diff.scales_badly;
    object["reasons"] = diff.reasons;
    both.push_back(std::move(object));
  }
  auto only = [](const std::vector<RegionDiff>& diffs, bool in_a) {
    json list = json::array();
    for (const RegionDiff& diff : diffs) {
      json object = region_json(diff.region);
      object.update(side_json((in_a ? *diff.a : *diff.b).metrics));
      list.push_back(std::move(object));
    }
    return list;
  };
  json profile_a = profile_json(data.a);
  json profile_b = profile_json(data.b);
  json out = {{"a", std::move(profile_a)},
              {"b", std::move(profile_b)},
              {"regions", std::move(both)},
              {"only_in_a", only(data.only_a, true)},
              {"only_in_b", only(data.only_b, false)}};
  return out.dump() + "\n";
}

}  // namespace

std::string render_diff(const DiffFindings& findings, OutputFormat format) {
  if (format == OutputFormat::Csv) {
    throw ViewError("diff has no csv format; use --format table or json");
  }
  if (format == OutputFormat::Json) return render_json(findings);
  return render_table(findings);
}

}  // namespace weft
