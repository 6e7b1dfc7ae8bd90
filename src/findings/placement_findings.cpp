#include "findings/placement_findings.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <tuple>

#include "analyzers/page_usage/page_usage_tables.h"
#include "findings/false_sharing_findings.h"
#include "findings/source_lines.h"
#include "static/binary_structure.h"

namespace weft {

const PlacementRow& PlacementFindings::row(MappingAlgorithm algorithm) const {
  for (const PlacementRow& r : rows)
    if (r.mapping.algorithm == algorithm) return r;
  throw std::logic_error("no placement row for an algorithm");
}

double PlacementFindings::reduction(MappingAlgorithm algorithm, double baseline) const {
  return baseline > 0 ? 1.0 - row(algorithm).cost.hop_bytes / baseline : 0.0;
}

ThreadVolumes pair_volumes(const CommunicationMatrix& raw, const CommunicationMatrix& rar) {
  const size_t n = raw.size();
  ThreadVolumes v(n, std::vector<double>(n, 0.0));
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n && j < raw[i].size(); ++j)
      if (i != j) {
        const double events = static_cast<double>(raw[i][j] + rar[i][j]);
        v[i][j] += events;
        v[j][i] += events;
      }
  return v;
}

ThreadVolumes thread_volumes(const Profile& profile, const std::optional<std::string>& region,
                             bool with_rar) {
  std::vector<int64_t> region_ids;
  if (region)
    for (const RegionInfo& r : profile.select_regions(*region)) region_ids.push_back(r.id);
  const CommunicationMatrix raw = profile.matrix(region_ids, MatrixKind::Raw);
  const CommunicationMatrix rar =
      with_rar ? profile.matrix(region_ids, MatrixKind::Rar)
               : CommunicationMatrix(raw.size(), std::vector<uint64_t>(raw.size(), 0));
  return pair_volumes(raw, rar);
}

PlacementFindings find_placement(const Profile& profile, const PlacementOptions& options,
                                 const PuDistances& machine, const std::string& machine_summary,
                                 const LevelDistances& level_distances, bool measured_distances) {
  PlacementFindings findings;
  findings.profile = profile_facts(profile);
  findings.region = options.region;
  findings.with_rar = options.with_rar;
  findings.machine = machine_summary;
  findings.pu_os_index = machine.os_index;
  findings.level_distances = level_distances;
  findings.measured_distances = measured_distances;
  findings.chosen = options.algorithm;
  const ThreadVolumes volume = thread_volumes(profile, options.region, options.with_rar);
  findings.threads = volume.size();
  for (size_t i = 0; i < volume.size(); ++i)
    for (size_t j = i + 1; j < volume.size(); ++j) findings.volume += volume[i][j];
  for (MappingAlgorithm algorithm : kMappingAlgorithms) {
    PlacementRow row;
    row.mapping = map_threads(algorithm, volume, machine);
    row.cost = mapping_cost(volume, machine, row.mapping);
    findings.rows.push_back(std::move(row));
  }
  findings.unpinned = expected_unpinned_cost(volume, machine);
  findings.data = find_data_placement(profile, machine, findings.row(options.algorithm).mapping);
  return findings;
}

namespace {

// An object's pages, summed while the findings are drawn.
struct ObjectPlacement {
  DataPlacementItem item;
  double weighted_share = 0;        // main share x accesses, misplaced pages
  uint64_t misplaced_accesses = 0;  // accesses to its misplaced pages
  std::map<std::pair<uint32_t, uint64_t>, uint64_t> writers;  // (thread, pc) -> misplaced pages
  std::map<uint32_t, uint64_t> users;                         // thread -> accesses, misplaced pages
  std::set<uint64_t> blocks;                                  // heap: its blocks' addresses
};

// What the object's rows are grouped by: a global by itself, heap blocks
// by the call that allocated them, data of no known object all together.
std::tuple<std::string, uint64_t> object_group(const DataObject& o) {
  if (o.kind == "global") return {o.kind, o.object_address};
  if (o.kind == "heap") return {o.kind, o.allocation_pc};
  return {o.kind, 0};
}

std::string placement_fix(const DataPlacementItem& item, const std::string& what) {
  const std::string writer = code_location(item.first_write_at, item.first_write_pc);
  if (item.writer_use_share >= kProducerUseShare)
    return fmt::format(
        "thread {} writes most of the misplaced pages of {} first (at {}) and uses them itself, "
        "but threads on another node use them more: run the producer and its main users on one "
        "node, or have the users write the pages first",
        item.first_writer, what, writer);
  if (item.main_node_share >= kPartitionedMainNodeShare)
    return fmt::format(
        "initialise {} in parallel, with the same threads and schedule as the loops that use "
        "it, so that each page is first written by the thread that uses it (thread {} first "
        "wrote most of the misplaced pages, at {})",
        what, item.first_writer, writer);
  return fmt::format(
      "threads on every node use {} alike: interleave its pages over the nodes "
      "(numactl --interleave=all, or set_mempolicy/mbind with MPOL_INTERLEAVE for this "
      "allocation); thread {} first wrote most of them, at {}",
      what, item.first_writer, writer);
}

}  // namespace

DataPlacementFindings find_data_placement(const Profile& profile, const PuDistances& machine,
                                          const ThreadMapping& mapping) {
  DataPlacementFindings f;
  f.nodes = machine.numa_nodes();
  for (size_t pu : mapping.pu)
    f.thread_node.push_back(pu < machine.numa_node.size() ? machine.numa_node[pu] : 0);
  f.recorded = profile.has_analysis(AnalysisId::PageUsage);
  if (!f.recorded || f.nodes < 2) return f;

  const std::vector<PageFirstWriteRow> first_writes = page_first_writes(profile);
  const std::vector<PageAccesses> accesses = page_accesses(profile);
  const std::vector<DataObject> objects = page_objects(profile);
  std::map<std::tuple<std::string, uint64_t>, ObjectPlacement> groups;
  std::vector<uint64_t> per_node(f.nodes);
  size_t a = 0;
  for (const PageFirstWriteRow& page : first_writes) {
    while (a < accesses.size() && accesses[a].page_address < page.write.page_address) ++a;
    const uint32_t writer = page.write.thread;
    if (writer >= f.thread_node.size() || page.object >= objects.size()) continue;
    std::fill(per_node.begin(), per_node.end(), 0);
    uint64_t total = 0;
    const size_t first_access = a;
    for (; a < accesses.size() && accesses[a].page_address == page.write.page_address; ++a) {
      const PageAccesses& r = accesses[a];
      if (r.thread >= f.thread_node.size()) continue;
      per_node[f.thread_node[r.thread]] += r.reads + r.writes;
      total += r.reads + r.writes;
    }
    const unsigned home = f.thread_node[writer];
    const size_t main_node =
        static_cast<size_t>(std::max_element(per_node.begin(), per_node.end()) - per_node.begin());
    ObjectPlacement& g = groups[object_group(objects[page.object])];
    DataPlacementItem& item = g.item;
    if (item.pages == 0) item.object = objects[page.object];
    g.blocks.insert(objects[page.object].object_address);
    ++item.pages;
    item.accesses += total;
    item.remote += total - per_node[home];
    item.remote_if_placed += total - per_node[main_node];
    ++f.pages;
    f.accesses += total;
    f.remote += total - per_node[home];
    f.remote_if_placed += total - per_node[main_node];
    if (per_node[main_node] <= per_node[home]) continue;
    ++item.misplaced_pages;
    g.weighted_share += static_cast<double>(per_node[main_node]);
    g.misplaced_accesses += total;
    ++g.writers[{writer, page.write.pc}];
    for (size_t i = first_access; i < a; ++i)
      g.users[accesses[i].thread] += accesses[i].reads + accesses[i].writes;
  }

  for (auto& [key, g] : groups) {
    DataPlacementItem& item = g.item;
    const uint64_t gain = item.remote - item.remote_if_placed;
    if (item.misplaced_pages == 0) continue;
    if (gain < kMinPlacementGain || item.misplaced_pages < kMinMisplacedPages ||
        static_cast<double>(gain) < kMinPlacementGainShare * static_cast<double>(item.accesses)) {
      ++f.smaller_items;
      continue;
    }
    item.main_node_share =
        g.misplaced_accesses > 0 ? g.weighted_share / static_cast<double>(g.misplaced_accesses) : 0;
    const auto top_writer =
        std::max_element(g.writers.begin(), g.writers.end(),
                         [](const auto& x, const auto& y) { return x.second < y.second; });
    item.first_writer = top_writer->first.first;
    item.writer_use_share = g.misplaced_accesses > 0
                                ? static_cast<double>(g.users[item.first_writer]) /
                                      static_cast<double>(g.misplaced_accesses)
                                : 0;
    item.first_write_pc = top_writer->first.second;
    item.first_write_at =
        profile.source_position(item.first_write_pc).value_or(SourcePosition{"??", "", 0});
    std::vector<std::pair<uint64_t, uint32_t>> users;
    for (const auto& [thread, n] : g.users) users.push_back({n, thread});
    std::sort(users.begin(), users.end(), [](const auto& x, const auto& y) {
      return x.first != y.first ? x.first > y.first : x.second < y.second;
    });
    for (const auto& [n, thread] : users) item.users.push_back(thread);
    if (item.object.kind == "heap" && item.object.allocation_pc != 0)
      item.allocated_at = profile.source_position(item.object.allocation_pc);
    item.description = data_object_description(item.object, item.allocated_at, g.blocks.size(),
                                               item.object.line_address);
    item.fix = placement_fix(item, item.object.kind == "global" ? "'" + item.object.name + "'"
                                   : item.object.kind == "heap" ? "this allocation"
                                                                : "this data");
    f.items.push_back(std::move(item));
  }
  std::sort(f.items.begin(), f.items.end(),
            [](const DataPlacementItem& x, const DataPlacementItem& y) {
              return x.remote - x.remote_if_placed > y.remote - y.remote_if_placed;
            });
  return f;
}

std::vector<std::string> planned_start_routines(const Profile& profile,
                                                const std::string& program) {
  // Base names of the files themselves (what /proc/PID/maps, and so the
  // profile, names): a link's target.
  const auto base_name = [](const std::string& path) {
    std::error_code error;
    const std::filesystem::path real = std::filesystem::canonical(path, error);
    return (error ? std::filesystem::path(path) : real).filename().string();
  };
  const std::string executable = base_name(profile.meta_value("command"));
  const std::unique_ptr<BinaryStructure> binary = BinaryStructure::open(program);
  std::vector<std::string> plan;
  for (const ThreadInfo& t : profile.threads()) {
    if (t.creation_order >= plan.size()) plan.resize(t.creation_order + 1);
    if (t.start_routine_pc == 0) continue;
    const std::optional<Profile::ModuleAddress> at = profile.module_address(t.start_routine_pc);
    if (!at) continue;
    std::string module = base_name(at->path);
    uint64_t vaddr = at->vaddr;
    if (module == executable) {
      // The launched program may be another build: find the routine there.
      const std::vector<const FunctionStructure*> named =
          binary ? binary->functions_named(t.start_routine)
                 : std::vector<const FunctionStructure*>{};
      // Not there (another program): the profiled address stays, which no
      // routine of this run has, and the launcher says so.
      if (named.size() == 1) {
        module = base_name(program);
        vaddr = named.front()->start;
      }
    }
    plan[t.creation_order] = fmt::format("{}:0x{:x}", module, vaddr);
  }
  return plan;
}

}  // namespace weft
