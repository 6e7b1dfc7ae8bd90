#include "analyzers/imbalance/imbalance_tables.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <optional>
#include <set>
#include <span>
#include <utility>

#include "analyzers/imbalance/imbalance_records.h"
#include "profile/analysis_tables.h"
#include "profile/section_instances.h"

namespace weft {

double idle_fraction(const std::vector<double>& busy) {
  const double longest = busy.empty() ? 0 : *std::max_element(busy.begin(), busy.end());
  if (longest <= 0) return 0;
  double idle = 0;
  for (double b : busy) idle += (longest - b) / longest;
  return idle / static_cast<double>(busy.size());
}

namespace {

constexpr const char* kSchemaSql = R"sql(
CREATE TABLE section_instances(
  id INTEGER PRIMARY KEY, region_id INTEGER NOT NULL REFERENCES regions(id),
  instance INTEGER NOT NULL, thread_count INTEGER NOT NULL, imbalance REAL NOT NULL,
  memory_weight INTEGER NOT NULL);
CREATE TABLE section_instance_threads(
  instance_id INTEGER NOT NULL REFERENCES section_instances(id), thread INTEGER NOT NULL,
  start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL, wall_ns INTEGER NOT NULL,
  instructions INTEGER NOT NULL, l1_misses INTEGER NOT NULL, l2_misses INTEGER NOT NULL,
  llc_misses INTEGER NOT NULL, modeled_cycles REAL NOT NULL,
  PRIMARY KEY(instance_id, thread)) WITHOUT ROWID;
CREATE TABLE instance_edges(
  instance_id INTEGER NOT NULL REFERENCES section_instances(id), thread INTEGER NOT NULL,
  from_pc INTEGER NOT NULL, to_pc INTEGER NOT NULL, count INTEGER NOT NULL,
  PRIMARY KEY(instance_id, thread, from_pc, to_pc)) WITHOUT ROWID;
CREATE TABLE instance_instructions(
  instance_id INTEGER NOT NULL REFERENCES section_instances(id), thread INTEGER NOT NULL,
  pc INTEGER NOT NULL, executions INTEGER NOT NULL, l1_misses INTEGER NOT NULL,
  l2_misses INTEGER NOT NULL, llc_misses INTEGER NOT NULL,
  PRIMARY KEY(instance_id, thread, pc)) WITHOUT ROWID;
CREATE TABLE control_flow_blocks(
  pc INTEGER PRIMARY KEY, instructions INTEGER NOT NULL, decision_pc INTEGER NOT NULL);
)sql";

// A block the imbalance analysis saw start: its static size and the address
// of its last instruction (the branch that decides where control goes next,
// whose source line a control-flow cause is reported at).
struct ControlFlowBlock {
  uint64_t instructions = 0;
  uint64_t decision_pc = 0;
};

// The block of the binary containing `pc`; a pc outside any known function
// keeps itself as decision and the size the source gave (or 1).
ControlFlowBlock resolve_block(uint64_t pc, uint64_t source_instructions, const ModuleMap& modules,
                               BinaryStructureCache& structures) {
  ControlFlowBlock block{source_instructions != 0 ? source_instructions : 1, pc};
  const std::optional<ModuleAddress> at = modules.resolve(pc);
  if (!at || !at->in_elf) return block;
  const FunctionStructure* function = structures.function_at(at->module, at->module_offset);
  const BasicBlock* found = function ? function->block_at(at->module_offset) : nullptr;
  if (!found) return block;
  if (source_instructions == 0) block.instructions = found->instructions;
  block.decision_pc = pc + (found->last_instruction - at->module_offset);
  return block;
}

// Per-thread busy measures of one instance.
struct InstanceThreadTotals {
  uint64_t instructions = 0;
  uint64_t misses[3] = {0, 0, 0};
  double modeled_cycles = 0;
  uint64_t code = 0;  // a hash of the blocks the thread ran (not how often)
};

// The misses at `level` of `executed` instructions at the rate of a
// measured instance's thread (`rates`): how an unmeasured instance's misses
// are estimated.
uint64_t estimated_misses(const InstanceThreadTotals& rates, uint64_t executed, int level) {
  if (rates.instructions == 0) return 0;
  return static_cast<uint64_t>(
      std::llround(static_cast<double>(executed) * static_cast<double>(rates.misses[level]) /
                   static_cast<double>(rates.instructions)));
}

// Orders records and (thread, segment) keys by thread, then segment.
struct BySegment {
  using Key = std::pair<uint32_t, uint32_t>;
  template <class Record>
  static Key key(const Record& r) {
    return {r.thread, r.segment};
  }
  template <class Record>
  bool operator()(const Record& a, const Record& b) const {
    return key(a) < key(b);
  }
  template <class Record>
  bool operator()(const Record& a, const Key& b) const {
    return key(a) < b;
  }
  template <class Record>
  bool operator()(const Key& a, const Record& b) const {
    return a < key(b);
  }
};

// The records sorted by (thread, segment), the order of each thread's log.
template <class Record>
std::vector<Record> by_segment(std::vector<Record> records) {
  if (!std::is_sorted(records.begin(), records.end(), BySegment{}))
    std::stable_sort(records.begin(), records.end(), BySegment{});
  return records;
}

// The records of one segment among records sorted by segment.
template <class Record>
std::span<const Record> records_of(const std::vector<Record>& records, uint32_t thread,
                                   uint32_t segment) {
  const auto [first, last] = std::equal_range(records.begin(), records.end(),
                                              BySegment::Key{thread, segment}, BySegment{});
  return {first, last};
}

// The analysis' records grouped into section instances (the segments of
// each thread, delimited by the sync log: profile/section_instances.h). A
// segment the capture logged as a repeat of an earlier one has that
// segment's records: each instance gets its threads' full counts, as if
// every segment had been logged in full.
class ImbalanceRows : public AnalysisRows {
 public:
  explicit ImbalanceRows(const ProfileBuild& build)
      : info_(build.info),
        edges_(by_segment(build.capture.records(kSegmentEdges))),
        instructions_(by_segment(build.capture.records(kSegmentInstructions))),
        repeats_(by_segment(build.capture.records(kSegmentRepeats))),
        instances_(find_section_instances(build.capture.sync)) {
    for (const SegmentMemoryWeight& w : build.capture.records(kSegmentMemoryWeights))
      weights_[{w.thread, w.segment}] = w.weight;
    for (const SectionInstance& instance : instances_)
      for (const SectionInstanceThread& t : instance.threads)
        for (uint32_t segment = t.first_segment; segment <= t.segment; ++segment)
          counted_.insert({t.thread, counts_segment(t.thread, segment)});
    // Every block of a segment is some edge's target (its first one, the
    // entry's), so the targets are all the blocks.
    for (const auto& [thread, segment] : counted_)
      for (const SegmentEdge& e : records_of(edges_, thread, segment))
        if (!blocks_.contains(e.to))
          blocks_[e.to] =
              resolve_block(e.to, e.to_instructions, build.symbolizer.modules(), build.structures);
  }

  // The pcs the tables name: decisions and memory instructions.
  void add_pcs(std::set<uint64_t>& pcs) const override {
    for (const auto& [pc, block] : blocks_) pcs.insert(block.decision_pc);
    for (const auto& [thread, segment] : counted_)
      for (const SegmentInstruction& r : records_of(instructions_, thread, segment))
        pcs.insert(r.pc);
  }
  void add_sections(std::set<std::pair<uint32_t, uint64_t>>& sections) const override {
    for (const SectionInstance& instance : instances_)
      sections.insert({instance.site_thread, instance.site});
  }
  void write(const sqlite::Database& db, const RunRegions& regions) const override;

 private:
  // The segment whose records hold the counts of the thread's `segment`:
  // itself, or the earlier one it repeats.
  uint32_t counts_segment(uint32_t thread, uint32_t segment) const {
    for (;;) {
      const std::span<const SegmentRepeat> repeat = records_of(repeats_, thread, segment);
      if (repeat.empty() || repeat.front().same_as >= segment) return segment;
      segment = repeat.front().same_as;
    }
  }
  InstanceThreadTotals totals_of(const SectionInstanceThread& t) const;
  // How many instances the memory counts of the instance stand for (sampled
  // section instances): 0 when a segment of it was not counted, else the
  // largest weight of its segments (1, or the sample's N: the members of a
  // team decide alike).
  uint32_t memory_weight(const SectionInstance& instance) const {
    uint32_t weight = 1;
    for (const SectionInstanceThread& t : instance.threads)
      for (uint32_t s = t.first_segment; s <= t.segment; ++s)
        if (auto w = weights_.find({t.thread, s}); w != weights_.end()) {
          if (w->second == 0) return 0;
          weight = std::max(weight, w->second);
        }
    return weight;
  }
  double modeled_cycles(const InstanceThreadTotals& total) const {
    double cycles = static_cast<double>(total.instructions);
    for (int level = 0; level < 3; ++level)
      cycles += static_cast<double>(total.misses[level]) * info_.miss_penalties[level];
    return cycles;
  }

  const RunInfo& info_;
  std::vector<SegmentEdge> edges_;                // by segment
  std::vector<SegmentInstruction> instructions_;  // by segment
  std::vector<SegmentRepeat> repeats_;            // by segment
  std::vector<SectionInstance> instances_;
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> weights_;  // (thread, segment): != 1
  // The (thread, segment) pairs whose records hold some instance's counts
  std::set<std::pair<uint32_t, uint32_t>> counted_;
  std::map<uint64_t, ControlFlowBlock> blocks_;  // by the pc a block record gave
};

InstanceThreadTotals ImbalanceRows::totals_of(const SectionInstanceThread& t) const {
  InstanceThreadTotals total;
  std::set<uint64_t> blocks;
  for (uint32_t s = t.first_segment; s <= t.segment; ++s) {
    const uint32_t segment = counts_segment(t.thread, s);
    for (const SegmentEdge& e : records_of(edges_, t.thread, segment)) {
      total.instructions += e.count * blocks_.at(e.to).instructions;
      blocks.insert(e.to);
    }
    for (const SegmentInstruction& r : records_of(instructions_, t.thread, segment)) {
      total.misses[0] += r.l1_misses;
      total.misses[1] += r.l2_misses;
      total.misses[2] += r.llc_misses;
    }
  }
  total.modeled_cycles = modeled_cycles(total);
  for (uint64_t block : blocks)
    total.code = (total.code ^ block) * 0x100000001b3ULL;  // over the sorted set
  return total;
}

// The miss rates of a thread's measured instances, by instance index
// (ascending): the nearest one to instance `i`, before it when there is one.
using MeasuredRates = std::vector<std::pair<size_t, InstanceThreadTotals>>;
const InstanceThreadTotals* nearest_rates(const MeasuredRates* measured, size_t i) {
  if (measured == nullptr || measured->empty()) return nullptr;
  auto after = std::lower_bound(measured->begin(), measured->end(), i,
                                [](const auto& m, size_t index) { return m.first < index; });
  return after != measured->begin() ? &std::prev(after)->second : &after->second;
}

void ImbalanceRows::write(const sqlite::Database& db, const RunRegions& regions) const {
  sqlite::Statement insert_block(db,
                                 "INSERT INTO control_flow_blocks(pc, instructions, decision_pc)"
                                 " VALUES (?, ?, ?)");
  for (const auto& [pc, block] : blocks_)
    insert_block.run(pc, block.instructions, block.decision_pc);
  sqlite::Statement insert_instance(
      db,
      "INSERT INTO section_instances(id, region_id, instance,"
      " thread_count, imbalance, memory_weight) VALUES (?, ?, ?, ?, ?, ?)");
  sqlite::Statement insert_thread(
      db,
      "INSERT INTO section_instance_threads(instance_id, thread, start_ns, end_ns, wall_ns,"
      " instructions, l1_misses, l2_misses, llc_misses, modeled_cycles)"
      " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  sqlite::Statement insert_edge(db,
                                "INSERT INTO instance_edges(instance_id, thread, from_pc, to_pc,"
                                " count) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET"
                                " count = count + excluded.count");
  sqlite::Statement insert_instruction(
      db,
      "INSERT INTO instance_instructions(instance_id, thread, pc, executions, l1_misses,"
      " l2_misses, llc_misses) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET"
      " executions = executions + excluded.executions, l1_misses = l1_misses + excluded.l1_misses,"
      " l2_misses = l2_misses + excluded.l2_misses, llc_misses = llc_misses + excluded.llc_misses");
  // Every instance's totals, and each thread's measured instances per
  // section, by the code they ran and all together.
  std::vector<std::vector<InstanceThreadTotals>> totals(instances_.size());
  std::vector<uint32_t> weight(instances_.size());
  std::vector<int64_t> region_of(instances_.size());
  std::map<std::tuple<int64_t, uint32_t, uint64_t>, MeasuredRates> same_code;
  std::map<std::pair<int64_t, uint32_t>, MeasuredRates> any_code;
  for (size_t i = 0; i < instances_.size(); ++i) {
    const SectionInstance& instance = instances_[i];
    region_of[i] = regions.of_section(instance.site_thread, instance.site);
    weight[i] = memory_weight(instance);
    for (const SectionInstanceThread& t : instance.threads) {
      totals[i].push_back(totals_of(t));
      if (weight[i] == 0) continue;
      const InstanceThreadTotals& measured = totals[i].back();
      same_code[{region_of[i], t.thread, measured.code}].emplace_back(i, measured);
      any_code[{region_of[i], t.thread}].emplace_back(i, measured);
    }
  }
  // An unmeasured instance's misses: its exact instruction count at the
  // thread's miss rates in the nearest measured instance of the section
  // that ran the same blocks (a section may alternate loops), before it
  // when there is one; else in the nearest measured one; none: no misses
  // (docs/metrics.md, "Sampled section instances").
  auto rates_of = [](const auto& map, const auto& key) {
    auto found = map.find(key);
    return found != map.end() ? &found->second : nullptr;
  };
  for (size_t i = 0; i < instances_.size(); ++i) {
    if (weight[i] != 0) continue;
    for (size_t k = 0; k < instances_[i].threads.size(); ++k) {
      InstanceThreadTotals& total = totals[i][k];
      const uint32_t thread = instances_[i].threads[k].thread;
      const InstanceThreadTotals* nearest =
          nearest_rates(rates_of(same_code, std::tuple{region_of[i], thread, total.code}), i);
      if (!nearest) nearest = nearest_rates(rates_of(any_code, std::pair{region_of[i], thread}), i);
      for (int level = 0; level < 3; ++level)
        total.misses[level] = nearest ? estimated_misses(*nearest, total.instructions, level) : 0;
      total.modeled_cycles = modeled_cycles(total);
    }
  }
  std::map<int64_t, int64_t> ordinal_in_region;
  std::vector<double> cycles;
  for (size_t i = 0; i < instances_.size(); ++i) {
    const SectionInstance& instance = instances_[i];
    const int64_t id = static_cast<int64_t>(i) + 1;
    cycles.clear();
    for (const InstanceThreadTotals& total : totals[i]) cycles.push_back(total.modeled_cycles);
    const int64_t region = region_of[i];
    insert_instance.run(id, region, ordinal_in_region[region]++, instance.threads.size(),
                        idle_fraction(cycles), weight[i]);
    for (size_t k = 0; k < instance.threads.size(); ++k) {
      const SectionInstanceThread& t = instance.threads[k];
      const InstanceThreadTotals& total = totals[i][k];
      insert_thread.run(
          id, t.thread, t.start_ns, t.end_ns,
          t.end_ns > t.start_ns + t.waited_ns ? t.end_ns - t.start_ns - t.waited_ns : 0,
          total.instructions, total.misses[0], total.misses[1], total.misses[2],
          total.modeled_cycles);
      for (uint32_t s = t.first_segment; s <= t.segment; ++s) {
        const uint32_t segment = counts_segment(t.thread, s);
        for (const SegmentEdge& e : records_of(edges_, t.thread, segment))
          insert_edge.run(id, t.thread, e.from, e.to, e.count);
        if (weight[i] == 0) continue;  // a part measured alone is no instance's events
        for (const SegmentInstruction& r : records_of(instructions_, t.thread, segment))
          insert_instruction.run(id, t.thread, r.pc, r.executions, r.l1_misses, r.l2_misses,
                                 r.llc_misses);
      }
    }
  }
}

}  // namespace

const AnalysisTables imbalance_tables = {
    kSchemaSql,
    [](const ProfileBuild& build) -> std::unique_ptr<AnalysisRows> {
      return std::make_unique<ImbalanceRows>(build);
    },
};

std::vector<SectionInstanceInfo> section_instances(const Profile& profile) {
  return profile.read([&](const sqlite::Database& db) {
    std::vector<SectionInstanceInfo> out;
    std::map<int64_t, size_t> index;
    sqlite::Statement instances(db,
                                "SELECT id, region_id, instance, imbalance, memory_weight"
                                " FROM section_instances ORDER BY id");
    while (instances.step()) {
      index[instances.column_int(0)] = out.size();
      out.push_back({instances.column_int(0),
                     instances.column_int(1),
                     instances.column_int(2),
                     instances.column_double(3),
                     static_cast<uint32_t>(instances.column_int(4)),
                     {}});
    }
    sqlite::Statement threads(db,
                              "SELECT instance_id, thread, start_ns, end_ns, wall_ns, instructions,"
                              " l1_misses, l2_misses, llc_misses, modeled_cycles FROM"
                              " section_instance_threads ORDER BY instance_id, thread");
    while (threads.step()) {
      auto it = index.find(threads.column_int(0));
      if (it == index.end()) continue;
      out[it->second].threads.push_back({static_cast<uint32_t>(threads.column_int(1)),
                                         threads.column_u64(2), threads.column_u64(3),
                                         threads.column_u64(4), threads.column_u64(5),
                                         threads.column_u64(6), threads.column_u64(7),
                                         threads.column_u64(8), threads.column_double(9)});
    }
    return out;
  });
}

std::vector<InstanceEdgeCount> instance_edges(const Profile& profile, int64_t instance_id) {
  return profile.read([&](const sqlite::Database& db) {
    std::vector<InstanceEdgeCount> out;
    sqlite::Statement query(db,
                            "SELECT thread, from_pc, to_pc, count FROM instance_edges"
                            " WHERE instance_id = ? ORDER BY from_pc, to_pc, thread");
    query.bind(1, instance_id);
    while (query.step())
      out.push_back({static_cast<uint32_t>(query.column_int(0)), query.column_u64(1),
                     query.column_u64(2), query.column_u64(3)});
    return out;
  });
}

std::vector<InstanceInstructionCount> instance_instructions(const Profile& profile,
                                                            int64_t instance_id) {
  return profile.read([&](const sqlite::Database& db) {
    std::vector<InstanceInstructionCount> out;
    sqlite::Statement query(
        db,
        "SELECT thread, pc, executions, l1_misses, l2_misses, llc_misses"
        " FROM instance_instructions WHERE instance_id = ? ORDER BY pc, thread");
    query.bind(1, instance_id);
    while (query.step())
      out.push_back({static_cast<uint32_t>(query.column_int(0)), query.column_u64(1),
                     query.column_u64(2), query.column_u64(3), query.column_u64(4),
                     query.column_u64(5)});
    return out;
  });
}

std::map<uint64_t, uint64_t> block_decisions(const Profile& profile) {
  return profile.read([&](const sqlite::Database& db) {
    std::map<uint64_t, uint64_t> out;
    sqlite::Statement query(db, "SELECT pc, decision_pc FROM control_flow_blocks");
    while (query.step()) out[query.column_u64(0)] = query.column_u64(1);
    return out;
  });
}

std::vector<DecisionInstructions> executed_instructions(const Profile& profile) {
  return profile.read([&](const sqlite::Database& db) {
    std::vector<DecisionInstructions> out;
    sqlite::Statement query(
        db,
        "SELECT b.decision_pc, l.region_id, e.thread, SUM(e.count * b.instructions)"
        " FROM instance_edges e JOIN control_flow_blocks b ON b.pc = e.to_pc"
        " JOIN code_locations l ON l.pc = b.decision_pc"
        " GROUP BY b.decision_pc, e.thread ORDER BY b.decision_pc, e.thread");
    while (query.step())
      out.push_back({query.column_u64(0), query.column_int(1),
                     static_cast<uint32_t>(query.column_int(2)), query.column_u64(3)});
    return out;
  });
}

std::vector<EdgeTotal> edge_totals(const Profile& profile) {
  return profile.read([&](const sqlite::Database& db) {
    std::vector<EdgeTotal> out;
    sqlite::Statement query(db,
                            "SELECT from_pc, to_pc, SUM(count) FROM instance_edges e"
                            " JOIN section_instances i ON i.id = e.instance_id"
                            " WHERE from_pc != 0 AND i.memory_weight != 0"
                            " GROUP BY from_pc, to_pc ORDER BY from_pc, to_pc");
    while (query.step())
      out.push_back({query.column_u64(0), query.column_u64(1), query.column_u64(2)});
    return out;
  });
}

std::map<uint64_t, uint64_t> instruction_executions(const Profile& profile) {
  return profile.read([&](const sqlite::Database& db) {
    std::map<uint64_t, uint64_t> out;
    sqlite::Statement query(
        db,
        "SELECT pc, SUM(executions) FROM instance_instructions r"
        " JOIN section_instances i ON i.id = r.instance_id WHERE i.memory_weight != 0"
        " GROUP BY pc ORDER BY pc");
    while (query.step()) out[query.column_u64(0)] = query.column_u64(1);
    return out;
  });
}

}  // namespace weft
