#include "views/place_view.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "views/text_table.h"

namespace weft {
namespace {

std::vector<unsigned> chosen_cpus(const PlacementFindings& f) {
  std::vector<unsigned> cpus;
  for (size_t pu : f.row(f.chosen).mapping.pu) cpus.push_back(f.pu_os_index[pu]);
  return cpus;
}

std::string percent_text(double fraction) { return fmt::format("{:.1f}%", 100.0 * fraction); }

// The volume at each level, as shares of the whole.
std::vector<std::string> traffic_cells(const MappingCost& cost, double volume) {
  std::vector<std::string> cells;
  for (size_t l = 0; l < kSharedLevels; ++l)
    cells.push_back(volume > 0 ? percent_text(cost.traffic[l] / volume) : "-");
  return cells;
}

std::string render_table(const PlacementFindings& f) {
  std::string text = fmt::format("Thread placement of {} ({}), {} thread{} on {}\n",
                                 f.region ? "region " + *f.region : "the whole program",
                                 f.with_rar ? "raw + rar" : "raw", f.threads,
                                 f.threads == 1 ? "" : "s", f.machine);
  if (!f.profile.complete)
    text += fmt::format("warning: INCOMPLETE profile ({})\n", f.profile.incomplete_reason);
  if (f.measured_distances) {
    text += "distances: the given matrix\n";
  } else {
    std::vector<std::string> d;
    for (size_t l = 1; l < kSharedLevels; ++l)
      d.push_back(fmt::format("{} {:g}", shared_level_name(static_cast<SharedLevel>(l)),
                              f.level_distances.of[l]));
    text += fmt::format("distances by shared level: {}\n", fmt::join(d, ", "));
  }
  if (f.volume == 0) {
    text += "no communication between threads: every placement costs the same (0)\n";
  }
  const double scatter = f.row(MappingAlgorithm::Scatter).cost.hop_bytes;
  const double unpinned = f.unpinned.hop_bytes;
  std::vector<TextTable::Align> columns(3 + kSharedLevels + 1, TextTable::Align::Right);
  columns[0] = TextTable::Align::Left;
  TextTable table(columns);
  std::vector<std::string> header = {"mapping", "hop-bytes", "vs scatter", "vs unpinned"};
  for (size_t l = 0; l < kSharedLevels; ++l)
    header.push_back(shared_level_name(static_cast<SharedLevel>(l)));
  table.add_row(header);
  auto add = [&](const std::string& name, const MappingCost& cost) {
    std::vector<std::string> row = {
        name, fmt::format("{:.0f}", cost.hop_bytes),
        scatter > 0 ? percent_text(1.0 - cost.hop_bytes / scatter) : "-",
        unpinned > 0 ? percent_text(1.0 - cost.hop_bytes / unpinned) : "-"};
    for (std::string& c : traffic_cells(cost, f.volume)) row.push_back(std::move(c));
    table.add_row(row);
  };
  for (const PlacementRow& r : f.rows)
    add(std::string(mapping_algorithm_name(r.mapping.algorithm)) +
            (r.mapping.algorithm == f.chosen ? " *" : ""),
        r.cost);
  add("unpinned (expected)", f.unpinned);
  text += "\n" + table.render("  ");
  text +=
      "  (vs: hop-bytes fewer than scatter's and than the expected unpinned run's; the level "
      "columns: the share of the volume between threads that share that level)\n";
  const std::vector<unsigned> cpus = chosen_cpus(f);
  text += fmt::format("\n{} mapping (* above), thread -> CPU (OS index):\n",
                      mapping_algorithm_name(f.chosen));
  for (size_t t = 0; t < cpus.size(); ++t) text += fmt::format("  thread {}: CPU {}\n", t, cpus[t]);
  std::vector<std::string> places;
  for (unsigned c : cpus) places.push_back(fmt::format("{{{}}}", c));
  text += fmt::format("  OMP_PLACES=\"{}\" OMP_PROC_BIND=true\n", fmt::join(places, ","));
  text += fmt::format("  GOMP_CPU_AFFINITY=\"{}\"\n", fmt::join(cpus, " "));
  text += "  taskset, one per thread in creation order:";
  for (unsigned c : cpus) text += fmt::format(" -c {}", c);
  text += "\n";
  return text;
}

nlohmann::json cost_json(const MappingCost& cost) {
  nlohmann::json traffic = nlohmann::json::object();
  for (size_t l = 0; l < kSharedLevels; ++l)
    traffic[shared_level_name(static_cast<SharedLevel>(l))] = cost.traffic[l];
  return {{"hop_bytes", cost.hop_bytes}, {"traffic", traffic}};
}

std::string render_json(const PlacementFindings& f) {
  nlohmann::json out;
  out["region"] = f.region ? nlohmann::json(*f.region) : nlohmann::json(nullptr);
  out["volume_kind"] = f.with_rar ? "raw+rar" : "raw";
  out["machine"] = f.machine;
  out["threads"] = f.threads;
  out["volume"] = f.volume;
  out["measured_distances"] = f.measured_distances;
  nlohmann::json levels = nlohmann::json::object();
  for (size_t l = 1; l < kSharedLevels; ++l)
    levels[shared_level_name(static_cast<SharedLevel>(l))] = f.level_distances.of[l];
  out["level_distances"] = levels;
  const double scatter = f.row(MappingAlgorithm::Scatter).cost.hop_bytes;
  nlohmann::json mappings = nlohmann::json::array();
  for (const PlacementRow& r : f.rows) {
    nlohmann::json cpus = nlohmann::json::array();
    for (size_t pu : r.mapping.pu) cpus.push_back(f.pu_os_index[pu]);
    nlohmann::json m = cost_json(r.cost);
    m["algorithm"] = mapping_algorithm_name(r.mapping.algorithm);
    m["cpus"] = cpus;
    m["reduction_vs_scatter"] = f.reduction(r.mapping.algorithm, scatter);
    m["reduction_vs_unpinned"] = f.reduction(r.mapping.algorithm, f.unpinned.hop_bytes);
    mappings.push_back(m);
  }
  out["mappings"] = mappings;
  out["unpinned"] = cost_json(f.unpinned);
  out["chosen"] = mapping_algorithm_name(f.chosen);
  out["cpu_list"] = placement_cpu_list(f);
  out["complete"] = f.profile.complete;
  return out.dump(2);
}

}  // namespace

std::string placement_cpu_list(const PlacementFindings& findings) {
  return fmt::format("{}", fmt::join(chosen_cpus(findings), ";"));
}

std::string render_placement(const PlacementFindings& findings, OutputFormat format) {
  switch (format) {
    case OutputFormat::Json:
      return render_json(findings);
    case OutputFormat::Csv: {
      std::string text = "thread,cpu\n";
      const std::vector<unsigned> cpus = chosen_cpus(findings);
      for (size_t t = 0; t < cpus.size(); ++t) text += fmt::format("{},{}\n", t, cpus[t]);
      return text;
    }
    case OutputFormat::Table:
      break;
  }
  return render_table(findings);
}

}  // namespace weft
