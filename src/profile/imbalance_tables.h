// The imbalance analysis' tables (docs/profile-format.md): the segments of
// each thread grouped into section instances, the blocks the analysis saw
// with their decisions, and per instance and thread the edges, the memory
// instructions' misses and the busy measures.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "common/run_capture.h"
#include "profile/profile_writer.h"
#include "profile/section_instances.h"
#include "profile/sqlite_db.h"
#include "static/binary_structure.h"
#include "static/module_map.h"

namespace weft {

// A block the imbalance analysis saw start: its static size and the address
// of its last instruction (the branch that decides where control goes next,
// whose source line a control-flow cause is reported at).
struct ControlFlowBlock {
  uint64_t instructions = 0;
  uint64_t decision_pc = 0;
};

// The imbalance analysis' data, grouped into section instances.
struct ImbalanceData {
  std::vector<SectionInstance> instances;
  // (thread, segment) -> index in `instances`
  std::map<std::pair<uint32_t, uint32_t>, size_t> instance_of_segment;
  std::map<uint64_t, ControlFlowBlock> blocks;  // by the pc a block record gave

  std::optional<size_t> instance_of(uint32_t thread, uint32_t segment) const {
    auto it = instance_of_segment.find({thread, segment});
    return it == instance_of_segment.end() ? std::nullopt : std::optional<size_t>(it->second);
  }
  // The pcs the tables name (decisions, memory instructions), to symbolize.
  void add_pcs(const RunCapture& capture, std::set<uint64_t>& pcs) const;
};

// Empty unless the capture ran the imbalance analysis.
ImbalanceData gather_imbalance(const RunCapture& capture, const ModuleMap& modules,
                               BinaryStructureCache& structures);

// `region_of_instance[i]`: the section region of instance i.
void write_imbalance(const sqlite::Database& db, const RunCapture& capture, const RunInfo& info,
                     const ImbalanceData& data, const std::vector<int64_t>& region_of_instance);

}  // namespace weft
