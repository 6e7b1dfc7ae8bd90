#include "views/crd_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <nlohmann/json.hpp>

namespace weft {
namespace {

nlohmann::json optional_text(const std::string& text) {
  return text.empty() ? nlohmann::json(nullptr) : nlohmann::json(text);
}

nlohmann::json optional_line(uint32_t line) {
  return line == 0 ? nlohmann::json(nullptr) : nlohmann::json(line);
}

nlohmann::json histogram_json(const CrdSummary& crd) {
  nlohmann::json histogram = nlohmann::json::array();
  for (const CrdBin& bin : crd.histogram)
    histogram.push_back({{"lo", bin.lo}, {"hi", bin.hi}, {"count", bin.count}});
  return histogram;
}

// Each pair's median as reported: of its line visits.
std::map<std::pair<uint32_t, uint32_t>, uint64_t> visit_medians(const LocalityMetrics& m) {
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> medians;
  for (const CrdPairSummary& pair : m.visits.pairs)
    medians[{pair.writer, pair.reader}] = pair.median;
  return medians;
}

uint64_t median_of(const std::map<std::pair<uint32_t, uint32_t>, uint64_t>& medians,
                   const CrdPairSummary& pair) {
  auto it = medians.find({pair.writer, pair.reader});
  return it == medians.end() ? 0 : it->second;
}

nlohmann::json entry_json(const CrdEntry& entry) {
  using nlohmann::json;
  const LocalityMetrics& m = entry.metrics;
  json pairs = json::array();
  const auto medians = visit_medians(m);
  for (const CrdPairSummary& pair : m.crd.pairs) {
    pairs.push_back({{"writer", pair.writer},
                     {"reader", pair.reader},
                     {"events", pair.events},
                     {"median", median_of(medians, pair)},
                     {"granule_median", pair.median}});
  }
  json object = {
      {"region", entry.region.name},
      {"kind", entry.region.kind},
      {"pooled", entry.pooled},
      {"file", optional_text(entry.region.file)},
      {"first_line", optional_line(entry.region.first_line)},
      {"last_line", optional_line(entry.region.last_line)},
      {"median", m.median() ? json(*m.median()) : json(nullptr)},
      {"visits", m.visits.events},
      {"word_median", m.words.median ? json(*m.words.median) : json(nullptr)},
      {"granule_median", m.crd.median ? json(*m.crd.median) : json(nullptr)},
      {"granule_repeats", m.granule_repeats()},
      {"word_histogram", histogram_json(m.words)},
      {"word_events", m.words.events},
      {"events", m.crd.events},
      {"unmeasured", m.unmeasured},
      {"histogram", histogram_json(m.crd)},
      {"min_cutoff", m.cutoffs.min},
      {"max_cutoff", m.cutoffs.max},
      {"fraction_below_min", m.crd.fraction_below_min},
      {"fraction_between", m.crd.fraction_between},
      {"fraction_above_max", m.crd.fraction_above_max},
      {"homogeneity", m.homogeneity},
      {"balance", m.balance},
      {"pairs", std::move(pairs)},
      {"private_granules", m.footprint.private_granules},
      {"shared_granules", m.footprint.shared_granules},
      {"granularity", m.granularity},
      {"cache_bytes", m.cache.bytes},
      {"cache_source", cache_source_name(m.cache.source)},
      {"cache_origin", m.cache.origin},
  };
  if (entry.pooled) {
    object["raw"] = m.raw;
    object["rar"] = m.rar;
    // null when the profile cannot tell (a weft before crr_epochs): crr is rar / raw.
    object["borrowed"] = m.borrowed_known ? nlohmann::json(m.borrowed) : nlohmann::json(nullptr);
    object["crr"] = m.crr;
  }
  return object;
}

std::string render_json(const std::vector<CrdEntry>& entries) {
  nlohmann::json list = nlohmann::json::array();
  for (const CrdEntry& entry : entries) list.push_back(entry_json(entry));
  return list.dump() + "\n";
}

std::string render_csv(const std::vector<CrdEntry>& entries) {
  std::string text = "region,lo,hi,count\n";
  for (const CrdEntry& entry : entries) {
    for (const CrdBin& bin : entry.metrics.crd.histogram) {
      text += fmt::format("{},{},{},{}\n", csv_field(entry.region.name), bin.lo, bin.hi, bin.count);
    }
  }
  return text;
}

// The histogram from its first to its last non-empty bin, one bar per bin,
// with a line for each cutoff before the first bin that reaches it.
std::string render_histogram(const LocalityMetrics& m) {
  constexpr size_t kBarWidth = 40;
  if (m.crd.histogram.empty()) return "    no distances measured\n";
  const std::vector<CrdBin> rows = contiguous_bins(m.crd.histogram);
  uint64_t largest = 0;
  for (const CrdBin& row : rows) largest = std::max(largest, row.count);
  std::vector<std::string> labels;
  size_t label_width = std::string("distance").size(), count_width = std::string("events").size();
  for (const CrdBin& row : rows) {
    labels.push_back(fmt::format("[{},{}]", row.lo, row.hi));
    label_width = std::max(label_width, labels.back().size());
    count_width = std::max(count_width, std::to_string(row.count).size());
  }
  struct Marker {
    const char* name;
    uint64_t value;
    bool shown = false;
  };
  std::array<Marker, 2> markers = {Marker{"min cutoff", m.cutoffs.min},
                                   Marker{"max cutoff", m.cutoffs.max}};
  auto marker_line = [&](Marker& marker, const CrdBin* row) {
    marker.shown = true;
    std::string where = row && row->lo < marker.value
                            ? fmt::format(" (inside [{},{}])", row->lo, row->hi)
                            : std::string();
    return fmt::format("    {:-<{}} {} {} granules{}\n", "", label_width, marker.name, marker.value,
                       where);
  };

  std::string text =
      fmt::format("    {:<{}}  {:>{}}\n", "distance", label_width, "events", count_width);
  for (size_t i = 0; i < rows.size(); ++i) {
    for (Marker& marker : markers) {
      if (!marker.shown && rows[i].hi >= marker.value) text += marker_line(marker, &rows[i]);
    }
    size_t bar = 0;
    if (rows[i].count > 0) {
      bar = std::max<size_t>(1, static_cast<size_t>(static_cast<double>(rows[i].count) * kBarWidth /
                                                        static_cast<double>(largest) +
                                                    0.5));
    }
    text += fmt::format("    {:<{}}  {:>{}}{}\n", labels[i], label_width, rows[i].count,
                        count_width, bar == 0 ? std::string() : " " + std::string(bar, '#'));
  }
  for (Marker& marker : markers) {
    if (!marker.shown) text += marker_line(marker, nullptr);
  }
  return text;
}

std::string render_crr(const CrrMatrix& crr) {
  std::string text =
      "  CRR (rar / true communications of the data read here, wherever first read; rows = "
      "writers, columns = readers)\n";
  size_t width = 4;
  for (const auto& row : crr) {
    for (double value : row) width = std::max(width, fmt::format("{:.2f}", value).size());
  }
  text += fmt::format("    {:>4}", "w\\r");
  for (size_t reader = 0; reader < crr.size(); ++reader)
    text += fmt::format(" {:>{}}", reader, width);
  text += "\n";
  for (size_t writer = 0; writer < crr.size(); ++writer) {
    text += fmt::format("    {:>4}", writer);
    for (double value : crr[writer]) text += fmt::format(" {:>{}.2f}", value, width);
    text += "\n";
  }
  return text;
}

std::string render_block(const CrdEntry& entry) {
  constexpr size_t kPairsShown = 8;
  constexpr size_t kCrrMaxThreads = 32;
  const LocalityMetrics& m = entry.metrics;
  const CrdSummary& crd = m.crd;
  std::string text =
      entry.region.kind == kProgramRegionKind
          ? std::string("whole program (every code region)\n")
          : fmt::format("{}{} ({}, {})\n", entry.pooled ? "pooled selection " : "",
                        entry.region.name, entry.region.kind, region_location(entry.region));
  const auto median_text = [](const std::optional<uint64_t>& median) {
    return median ? std::to_string(*median) : std::string("-");
  };
  text += fmt::format(
      "  events {}, unmeasured {}, median CRD {} over {} line visits (of all events: {}; {:.1f}% "
      "re-read the granule just read)",
      crd.events, m.unmeasured, median_text(m.median()), m.visits.events, median_text(crd.median),
      crd.events
          ? 100.0 * static_cast<double>(m.granule_repeats()) / static_cast<double>(crd.events)
          : 0.0);
  if (m.has_words() && m.words.median)
    text += fmt::format("; words of 8 bytes, sampled: {}", *m.words.median);
  text += "\n";
  text += fmt::format(
      "  cutoffs: min {} granules, max {} granules (footprint: {} private, {} shared granules)\n",
      m.cutoffs.min, m.cutoffs.max, m.footprint.private_granules, m.footprint.shared_granules);
  text += fmt::format("  CRR homogeneity {:.4g}, balance {:.1f}%\n", m.homogeneity, m.balance);
  text += render_histogram(m);
  text += fmt::format(
      "  no capacity miss (below min) {}, probable capacity miss (between) {}, certain capacity "
      "miss (above max) {}\n",
      fmt::format("{:.1f}%", crd.fraction_below_min * 100),
      fmt::format("{:.1f}%", crd.fraction_between * 100),
      fmt::format("{:.1f}%", crd.fraction_above_max * 100));
  if (!crd.pairs.empty()) {
    text += "  pairs (writer -> reader: events, median of the line visits):";
    const auto medians = visit_medians(m);
    for (size_t i = 0; i < crd.pairs.size() && i < kPairsShown; ++i) {
      const CrdPairSummary& pair = crd.pairs[i];
      text += fmt::format("{} {} -> {}: {}, {}", i == 0 ? "" : ";", pair.writer, pair.reader,
                          pair.events, median_of(medians, pair));
    }
    if (crd.pairs.size() > kPairsShown)
      text += fmt::format("; and {} more", crd.pairs.size() - kPairsShown);
    text += "\n";
  }
  if (entry.pooled && !m.crr.empty()) {
    text += m.crr.size() <= kCrrMaxThreads
                ? render_crr(m.crr)
                : "  CRR: see `weft comm --kind crr` (too many threads to show here)\n";
  }
  return text;
}

std::string render_table(const CrdFindings& findings) {
  std::string text = fmt::format(
      "crd: communication reuse distance ({}) in {}; cache {} ({}), granularity {} "
      "bytes\n",
      "granules", findings.region ? "region " + *findings.region : findings.profile.path,
      human_bytes(findings.cache.bytes), findings.cache.origin, findings.profile.granularity);
  if (!findings.profile.complete) {
    text += fmt::format("warning: INCOMPLETE profile ({})\n", findings.profile.incomplete_reason);
  }
  if (const std::string note = crd_sampling_note(findings.profile); !note.empty())
    text += "note: " + note + "\n";
  if (findings.entries.empty()) return text + "no CRD events recorded\n";
  for (const CrdEntry& entry : findings.entries) text += "\n" + render_block(entry);
  return text;
}

}  // namespace

std::string render_crd(const CrdFindings& findings, OutputFormat format) {
  switch (format) {
    case OutputFormat::Csv:
      return render_csv(findings.entries);
    case OutputFormat::Json:
      return render_json(findings.entries);
    case OutputFormat::Table:
      break;
  }
  return render_table(findings);
}

}  // namespace weft
