#include "profile/imbalance_tables.h"

#include <set>

namespace weft {
namespace {

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
};

}  // namespace

void ImbalanceData::add_pcs(const RunCapture& capture, std::set<uint64_t>& pcs) const {
  for (const auto& [pc, block] : blocks) pcs.insert(block.decision_pc);
  for (const SegmentInstruction& r : capture.segment_instructions)
    if (instance_of(r.thread, r.segment)) pcs.insert(r.pc);
}

ImbalanceData gather_imbalance(const RunCapture& capture, const ModuleMap& modules,
                               BinaryStructureCache& structures) {
  ImbalanceData data;
  if (!capture.analyses.has(AnalysisId::Imbalance)) return data;
  data.instances = find_section_instances(capture.sync);
  for (size_t i = 0; i < data.instances.size(); ++i)
    for (const SectionInstanceThread& t : data.instances[i].threads)
      data.instance_of_segment[{t.thread, t.segment}] = i;
  // Every block of a segment is some edge's target (its first one, the
  // entry's), so the targets are all the blocks.
  for (const SegmentEdge& e : capture.segment_edges)
    if (data.instance_of(e.thread, e.segment) && !data.blocks.contains(e.to))
      data.blocks[e.to] = resolve_block(e.to, e.to_instructions, modules, structures);
  return data;
}

void write_imbalance(const sqlite::Database& db, const RunCapture& capture, const RunInfo& info,
                     const ImbalanceData& data, const std::vector<int64_t>& region_of_instance) {
  sqlite::Statement insert_block(db,
                                 "INSERT INTO control_flow_blocks(pc, instructions, decision_pc)"
                                 " VALUES (?, ?, ?)");
  for (const auto& [pc, block] : data.blocks)
    insert_block.run(pc, block.instructions, block.decision_pc);

  // Totals per (instance, thread), from the segments' records.
  std::map<std::pair<size_t, uint32_t>, InstanceThreadTotals> totals;
  sqlite::Statement insert_edge(db,
                                "INSERT INTO instance_edges(instance_id, thread, from_pc, to_pc,"
                                " count) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET"
                                " count = count + excluded.count");
  for (const SegmentEdge& e : capture.segment_edges) {
    const std::optional<size_t> instance = data.instance_of(e.thread, e.segment);
    if (!instance) continue;
    insert_edge.run(*instance + 1, e.thread, e.from, e.to, e.count);
    totals[{*instance, e.thread}].instructions += e.count * data.blocks.at(e.to).instructions;
  }
  sqlite::Statement insert_instruction(
      db,
      "INSERT INTO instance_instructions(instance_id, thread, pc, executions, l1_misses,"
      " l2_misses, llc_misses) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET"
      " executions = executions + excluded.executions, l1_misses = l1_misses + excluded.l1_misses,"
      " l2_misses = l2_misses + excluded.l2_misses, llc_misses = llc_misses + excluded.llc_misses");
  for (const SegmentInstruction& r : capture.segment_instructions) {
    const std::optional<size_t> instance = data.instance_of(r.thread, r.segment);
    if (!instance) continue;
    insert_instruction.run(*instance + 1, r.thread, r.pc, r.executions, r.l1_misses, r.l2_misses,
                           r.llc_misses);
    InstanceThreadTotals& t = totals[{*instance, r.thread}];
    t.misses[0] += r.l1_misses;
    t.misses[1] += r.l2_misses;
    t.misses[2] += r.llc_misses;
  }

  sqlite::Statement insert_instance(db,
                                    "INSERT INTO section_instances(id, region_id, instance,"
                                    " thread_count, imbalance) VALUES (?, ?, ?, ?, ?)");
  sqlite::Statement insert_thread(
      db,
      "INSERT INTO section_instance_threads(instance_id, thread, start_ns, end_ns, wall_ns,"
      " instructions, l1_misses, l2_misses, llc_misses, modeled_cycles)"
      " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  std::map<int64_t, int64_t> ordinal_in_region;
  for (size_t i = 0; i < data.instances.size(); ++i) {
    const SectionInstance& instance = data.instances[i];
    std::vector<double> cycles;
    for (const SectionInstanceThread& t : instance.threads) {
      InstanceThreadTotals& total = totals[{i, t.thread}];
      total.modeled_cycles = static_cast<double>(total.instructions);
      for (int level = 0; level < 3; ++level)
        total.modeled_cycles +=
            static_cast<double>(total.misses[level]) * info.miss_penalties[level];
      cycles.push_back(total.modeled_cycles);
    }
    const int64_t region = region_of_instance[i];
    insert_instance.run(i + 1, region, ordinal_in_region[region]++, instance.threads.size(),
                        idle_fraction(cycles));
    for (const SectionInstanceThread& t : instance.threads) {
      const InstanceThreadTotals& total = totals[{i, t.thread}];
      insert_thread.run(i + 1, t.thread, t.start_ns, t.end_ns,
                        t.end_ns > t.start_ns ? t.end_ns - t.start_ns : 0, total.instructions,
                        total.misses[0], total.misses[1], total.misses[2], total.modeled_cycles);
    }
  }
}

}  // namespace weft
