#include "views/diff_view.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "views/text_table.h"

namespace weft {
namespace {

// One profile's view of a region.
struct Side {
  RegionInfo region;
  LocalityMetrics metrics;
};

struct RegionDiff {
  RegionInfo region;  // as B names it, else as A does
  std::optional<Side> a;
  std::optional<Side> b;
  std::optional<double> events_ratio;  // events B / events A, when A has events
  std::optional<double> median_ratio;  // (median B + 1) / (median A + 1), when both have one
  std::optional<double> bin_shift;     // mean log2 bin B - A, when both have events
  bool scales_badly = false;
  std::vector<std::string> reasons;
};

struct DiffData {
  CacheModel cache_a;
  CacheModel cache_b;
  std::vector<RegionDiff> both;    // ranked, worst first
  std::vector<RegionDiff> only_a;  // by events descending
  std::vector<RegionDiff> only_b;
};

// The ids a region stands for: itself and everything nested in it, so that a
// function compares as a whole even when its loops changed (a blocked
// version has other loops than the original).
std::vector<int64_t> pooled_ids(const Profile& profile, const RegionInfo& region) {
  std::vector<int64_t> ids;
  for (const RegionInfo& nested : profile.select_regions(region.name)) ids.push_back(nested.id);
  return ids;
}

// Regions with communication (their own or nested), by name.
std::map<std::string, Side> communicating_regions(const Profile& profile, const CacheModel& cache) {
  std::map<std::string, Side> sides;
  const std::vector<RegionVolume> volumes = profile.region_volumes();
  std::map<int64_t, uint64_t> volume_of;
  for (const RegionVolume& volume : volumes) volume_of[volume.region.id] = volume.raw + volume.rar;
  for (const RegionVolume& volume : volumes) {
    const std::vector<int64_t> ids = pooled_ids(profile, volume.region);
    uint64_t pooled = 0;
    for (int64_t id : ids) pooled += volume_of[id];
    if (pooled == 0) continue;
    LocalityMetrics metrics = compute_locality(profile, ids, cache);
    sides.emplace(volume.region.name, Side{volume.region, std::move(metrics)});
  }
  return sides;
}

// A region of one profile that has no communication there but has it in the other.
Side quiet_side(const Profile& profile, const RegionInfo& region, const CacheModel& cache) {
  return {region, compute_locality(profile, pooled_ids(profile, region), cache)};
}

void judge(RegionDiff& diff) {
  const LocalityMetrics& a = diff.a->metrics;
  const LocalityMetrics& b = diff.b->metrics;
  if (a.crd.events > 0) {
    diff.events_ratio = static_cast<double>(b.crd.events) / static_cast<double>(a.crd.events);
  }
  if (a.crd.events > 0 && b.crd.events > 0) {
    diff.bin_shift = b.crd.mean_log2_bin - a.crd.mean_log2_bin;
  }
  if (!a.crd.median || !b.crd.median) return;
  const uint64_t median_a = *a.crd.median, median_b = *b.crd.median;
  diff.median_ratio = (static_cast<double>(median_b) + 1.0) / (static_cast<double>(median_a) + 1.0);
  if (median_b > median_a && *diff.median_ratio > kScalingSlack * *diff.events_ratio) {
    diff.scales_badly = true;
    diff.reasons.push_back(fmt::format("median CRD x{:.2f} outgrows events x{:.2f}",
                                       *diff.median_ratio, *diff.events_ratio));
  }
  if (median_a < a.cutoffs.min && median_b >= b.cutoffs.min) {
    diff.scales_badly = true;
    diff.reasons.push_back(fmt::format("median CRD crosses the min cutoff ({} < {} -> {} >= {})",
                                       median_a, a.cutoffs.min, median_b, b.cutoffs.min));
  }
}

// Descending, a missing value after every present one.
int compare_desc(const std::optional<double>& x, const std::optional<double>& y) {
  if (x && y) return *x > *y ? -1 : *x < *y ? 1 : 0;
  if (x) return -1;
  if (y) return 1;
  return 0;
}

void rank(std::vector<RegionDiff>& diffs) {
  std::stable_sort(diffs.begin(), diffs.end(), [](const RegionDiff& x, const RegionDiff& y) {
    if (x.scales_badly != y.scales_badly) return x.scales_badly;
    if (int c = compare_desc(x.median_ratio, y.median_ratio); c != 0) return c < 0;
    if (int c = compare_desc(x.events_ratio, y.events_ratio); c != 0) return c < 0;
    return x.b->metrics.crd.events > y.b->metrics.crd.events;
  });
}

void sort_by_events(std::vector<RegionDiff>& diffs, bool in_a) {
  std::stable_sort(diffs.begin(), diffs.end(), [in_a](const RegionDiff& x, const RegionDiff& y) {
    const Side& sx = in_a ? *x.a : *x.b;
    const Side& sy = in_a ? *y.a : *y.b;
    return sx.metrics.crd.events > sy.metrics.crd.events;
  });
}

DiffData gather(const Profile& a, const Profile& b, const DiffOptions& options) {
  DiffData data;
  data.cache_a = resolve_cache(a, options.cache);
  data.cache_b = resolve_cache(b, options.cache);
  std::map<std::string, Side> sides_a = communicating_regions(a, data.cache_a);
  std::map<std::string, Side> sides_b = communicating_regions(b, data.cache_b);
  std::map<std::string, RegionInfo> all_a, all_b;
  for (RegionInfo& region : a.regions()) all_a.emplace(region.name, std::move(region));
  for (RegionInfo& region : b.regions()) all_b.emplace(region.name, std::move(region));

  std::map<std::string, RegionDiff> by_name;
  for (auto& [name, side] : sides_a) {
    RegionDiff& diff = by_name[name];
    diff.region = side.region;
    diff.a = std::move(side);
  }
  for (auto& [name, side] : sides_b) {
    RegionDiff& diff = by_name[name];
    diff.region = side.region;
    diff.b = std::move(side);
  }
  for (auto& [name, diff] : by_name) {
    if (!diff.a) {
      if (auto it = all_a.find(name); it != all_a.end())
        diff.a = quiet_side(a, it->second, data.cache_a);
    }
    if (!diff.b) {
      if (auto it = all_b.find(name); it != all_b.end())
        diff.b = quiet_side(b, it->second, data.cache_b);
    }
    if (diff.a && diff.b) {
      judge(diff);
      data.both.push_back(std::move(diff));
    } else if (diff.a) {
      data.only_a.push_back(std::move(diff));
    } else {
      data.only_b.push_back(std::move(diff));
    }
  }
  rank(data.both);
  sort_by_events(data.only_a, true);
  sort_by_events(data.only_b, false);
  return data;
}

std::string median_text(const LocalityMetrics& m) {
  return m.crd.median ? std::to_string(*m.crd.median) : std::string("-");
}

std::string beyond_text(const LocalityMetrics& m) {
  return m.crd.events > 0 ? fmt::format("{:.1f}%", m.crd.fraction_beyond_min() * 100)
                          : std::string("-");
}

std::string ratio_text(const std::optional<double>& ratio) {
  return ratio ? fmt::format("x{:.2f}", *ratio) : std::string("-");
}

std::string profile_line(const char* label, const Profile& profile, const CacheModel& cache) {
  std::string line =
      fmt::format("{} = {}: {} threads, granularity {} bytes, cache {} ({})\n", label,
                  profile.path(), profile.thread_count(), profile.meta_value("granularity"),
                  human_bytes(cache.bytes), cache_source_name(cache.source));
  if (!profile.complete()) {
    line += fmt::format("warning: {} is an INCOMPLETE profile ({})\n", label,
                        profile.meta_value("incomplete_reason"));
  }
  return line;
}

std::string render_only(const char* title, const std::vector<RegionDiff>& diffs, bool in_a) {
  std::string text = fmt::format("\n{}\n", title);
  if (diffs.empty()) return text + "  none\n";
  using A = TextTable::Align;
  TextTable table({A::Left, A::Left, A::Left, A::Right, A::Right, A::Right});
  table.add_row({"region", "kind", "location", "raw+rar", "crd events", "median crd"});
  for (const RegionDiff& diff : diffs) {
    const Side& side = in_a ? *diff.a : *diff.b;
    table.add_row({diff.region.name, diff.region.kind, region_location(diff.region),
                   std::to_string(side.metrics.raw_total + side.metrics.rar_total),
                   std::to_string(side.metrics.crd.events), median_text(side.metrics)});
  }
  return text + table.render("  ");
}

std::string render_table(const Profile& a, const Profile& b, const DiffData& data) {
  std::string text = "weft diff: communication locality, region by region\n";
  text += profile_line("A", a, data.cache_a);
  text += profile_line("B", b, data.cache_b);
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
          {"median", m.crd.median ? json(*m.crd.median) : json(nullptr)},
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

nlohmann::json granularity_of(const Profile& profile) {
  try {
    return std::stoull(profile.meta_value("granularity"));
  } catch (const std::exception&) {
    return nullptr;
  }
}

nlohmann::json profile_json(const Profile& profile, const CacheModel& cache) {
  return {{"profile", profile.path()},
          {"threads", profile.thread_count()},
          {"granularity", granularity_of(profile)},
          {"complete", profile.complete()},
          {"cache_bytes", cache.bytes},
          {"cache_source", cache_source_name(cache.source)}};
}

std::string render_json(const Profile& a, const Profile& b, const DiffData& data) {
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
  json profile_a = profile_json(a, data.cache_a);
  json profile_b = profile_json(b, data.cache_b);
  json out = {{"a", std::move(profile_a)},
              {"b", std::move(profile_b)},
              {"regions", std::move(both)},
              {"only_in_a", only(data.only_a, true)},
              {"only_in_b", only(data.only_b, false)}};
  return out.dump() + "\n";
}

}  // namespace

std::string render_diff(const Profile& a, const Profile& b, const DiffOptions& options) {
  if (options.format == OutputFormat::Csv) {
    throw ViewError("diff has no csv format; use --format table or json");
  }
  require_crd(a);
  require_crd(b);
  DiffData data = gather(a, b, options);
  if (options.format == OutputFormat::Json) return render_json(a, b, data);
  return render_table(a, b, data);
}

}  // namespace weft
