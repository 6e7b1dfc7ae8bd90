// The regions of one run (docs/metrics.md, "Region"): each pc belongs to the
// innermost natural loop that contains it, else its function (an outlined
// OpenMP body is a region of its own, nested in the function it came from);
// each parallel section is a region named after the site that closes it.
// The profile builder names them here before writing anything.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/run_capture.h"
#include "static/binary_structure.h"
#include "static/symbolizer.h"

namespace weft {

// A region while its code locations are being gathered.
struct RegionDraft {
  std::string kind;
  std::string function;
  std::string file;
  uint32_t first_line = 0;
  uint32_t last_line = 0;
  std::string parent_name;
  std::string function_region;  // loops: the function or outlined body they are in
  int64_t id = 0;

  void add_line(uint32_t line);
};

// Names the region of each code location and gathers each region's extent.
class RegionBuilder {
 public:
  // Returns the name of the region `location` belongs to.
  std::string add(const CodeLocation& location);
  // The region of a pc inside `loop` of `function` (whose region is
  // `function_region`): the loop, registered with its enclosing loops.
  std::string add_loop(const std::string& function_region, const FunctionStructure& function,
                       const Loop& loop);
  // A parallel section, named after the site that closes it. Sections are a
  // second partition of the events: their `function` is their own name, so
  // selecting a function never pools them with its code regions.
  std::string add_section(const std::string& name, const std::string& file, uint32_t line);
  // The function an outlined body came from, learnt from the call site of
  // the parallel region (for names that do not tell, see omp_parent_function).
  void suggest_parent_function(const std::string& region, const std::string& function);
  // Links outlined bodies to their function's region (created when the
  // function had no code location of its own) and numbers the regions.
  void finish();

  int64_t id_of(const std::string& name) const { return drafts_.at(name).id; }
  const std::map<std::string, RegionDraft>& drafts() const { return drafts_; }

 private:
  std::map<std::string, RegionDraft> drafts_;  // by name, so ids are stable across runs
  std::map<std::pair<std::string, uint64_t>, std::string> loop_names_;  // (function, header)
};

// Every region of a run, numbered, with the region of each pc and of each
// (thread, closing site) of a section.
class RunRegions {
 public:
  // Names the regions of `pcs` and of `sections` ((thread, closing site)
  // pairs as the capture records them), then numbers them. The capture's
  // sync log tells which join waited for each thread and which call site
  // began each parallel region.
  RunRegions(const RunCapture& capture, const std::set<uint64_t>& pcs,
             const std::set<std::pair<uint32_t, uint64_t>>& sections, Symbolizer& symbolizer,
             BinaryStructureCache& structures);

  const std::map<std::string, RegionDraft>& drafts() const { return builder_.drafts(); }
  int64_t id_of(const std::string& name) const { return builder_.id_of(name); }
  int64_t of_pc(uint64_t pc) const { return id_of_pc_.at(pc); }
  // The section that (thread, site) closed; `site` as the capture records it.
  int64_t of_section(uint32_t thread, uint64_t site) const {
    return builder_.id_of(section_name_.at({thread, site}));
  }

 private:
  void name_code(const RunCapture& capture, const std::set<uint64_t>& pcs, Symbolizer& symbolizer,
                 BinaryStructureCache& structures);
  void name_section(uint32_t thread, uint64_t site, Symbolizer& symbolizer);

  RegionBuilder builder_;
  std::map<uint64_t, std::string> region_of_pc_;
  std::unordered_map<uint64_t, int64_t> id_of_pc_;
  std::map<uint32_t, uint64_t> join_site_of_;  // thread -> pc of the join that waited for it
  std::map<std::pair<uint32_t, uint64_t>, std::string> section_name_;
};

}  // namespace weft
