#include "views/place_view.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "findings/false_sharing_findings.h"
#include "findings/source_lines.h"
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

std::string share_text(uint64_t part, uint64_t whole) {
  return whole > 0 ? percent_text(static_cast<double>(part) / static_cast<double>(whole)) : "-";
}

std::string render_data_placement(const PlacementFindings& f) {
  const DataPlacementFindings& d = f.data;
  const std::string title =
      fmt::format("\nData placement under the {} mapping", mapping_algorithm_name(f.chosen));
  if (!d.recorded)
    return title +
           ": not recorded (the profile has no page usage: record with the 'pages' analysis)\n";
  if (d.nodes < 2) return title + ": one NUMA node, where pages sit does not matter\n";
  std::vector<std::string> nodes;
  constexpr size_t kShownThreads = 16;
  for (size_t t = 0; t < d.thread_node.size() && t < kShownThreads; ++t)
    nodes.push_back(fmt::format("{}:{}", t, d.thread_node[t]));
  if (d.thread_node.size() > kShownThreads)
    nodes.push_back(fmt::format("... ({} threads; --format json lists all)", d.thread_node.size()));
  std::string text =
      fmt::format("{} ({} NUMA nodes; thread:node {})\n", title, d.nodes, fmt::join(nodes, " "));
  text += fmt::format(
      "  {} pages first written in the run; {} of their accesses come from another node than "
      "the page's, {} if each page sat on the node that uses it most\n",
      group_digits(d.pages), share_text(d.remote, d.accesses),
      share_text(d.remote_if_placed, d.accesses));
  if (d.items.empty()) {
    text += "  no data object is used mostly off the node that first wrote it\n";
    return text;
  }
  size_t rank = 0;
  for (const DataPlacementItem& item : d.items) {
    std::vector<std::string> users;
    for (size_t i = 0; i < item.users.size() && i < 8; ++i)
      users.push_back(fmt::format("{}", item.users[i]));
    text += fmt::format(
        "  {}. {}: {} of {} pages on another node than their main users; {} of its accesses "
        "remote, {} if placed by use\n     used most by threads {}\n     fix: {}\n",
        ++rank, item.description, group_digits(item.misplaced_pages), group_digits(item.pages),
        share_text(item.remote, item.accesses), share_text(item.remote_if_placed, item.accesses),
        fmt::join(users, ", "), item.fix);
  }
  if (d.smaller_items > 0)
    text += fmt::format("  ({} more object{} with a few misplaced pages: below the threshold)\n",
                        d.smaller_items, d.smaller_items == 1 ? "" : "s");
  return text;
}

nlohmann::json data_placement_json(const DataPlacementFindings& d) {
  nlohmann::json out;
  out["recorded"] = d.recorded;
  out["numa_nodes"] = d.nodes;
  out["thread_node"] = d.thread_node;
  out["pages"] = d.pages;
  out["accesses"] = d.accesses;
  out["remote"] = d.remote;
  out["remote_if_placed"] = d.remote_if_placed;
  nlohmann::json items = nlohmann::json::array();
  for (const DataPlacementItem& item : d.items)
    items.push_back({{"object", item.description},
                     {"kind", item.object.kind},
                     {"pages", item.pages},
                     {"misplaced_pages", item.misplaced_pages},
                     {"accesses", item.accesses},
                     {"remote", item.remote},
                     {"remote_if_placed", item.remote_if_placed},
                     {"main_node_share", item.main_node_share},
                     {"first_writer", item.first_writer},
                     {"writer_use_share", item.writer_use_share},
                     {"first_write", code_location(item.first_write_at, item.first_write_pc)},
                     {"users", item.users},
                     {"fix", item.fix}});
  out["items"] = items;
  out["smaller_items"] = d.smaller_items;
  return out;
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
  return text + render_data_placement(f);
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
  out["data_placement"] = data_placement_json(f.data);
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
