#include "profile/profile_writer.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "profile/memory_tables.h"
#include "profile/region_naming.h"
#include "profile/schema.h"
#include "profile/section_instances.h"
#include "profile/sqlite_db.h"
#include "static/binary_structure.h"

#ifndef WEFT_VERSION_STRING
#define WEFT_VERSION_STRING "unknown"
#endif

namespace weft {
namespace {

using MetaEntries = std::vector<std::pair<std::string, std::string>>;

std::string format_double(double value) {
  char buffer[64];
  auto [end, error] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return error == std::errc() ? std::string(buffer, end) : std::string("0");
}

// The meta rows every profile has; capture-derived ones are filled by the caller.
MetaEntries run_meta(const RunInfo& info, const std::string& source, uint32_t granularity,
                     bool complete, const std::string& incomplete_reason) {
  return {
      {"schema_version", std::to_string(kProfileSchemaVersion)},
      {"weft_version", info.weft_version.empty() ? WEFT_VERSION_STRING : info.weft_version},
      {"source", source},
      {"command", info.command},
      {"args", nlohmann::json(info.args).dump()},
      {"cwd", info.cwd},
      {"start_time", format_utc_iso8601(info.start_time)},
      {"duration_s", format_double(info.duration_s)},
      {"exit_status", info.exit_status ? std::to_string(*info.exit_status) : std::string()},
      {"exit_signal", info.exit_signal.value_or("")},
      {"complete", complete ? "1" : "0"},
      {"incomplete_reason", complete ? std::string() : incomplete_reason},
      {"granularity", std::to_string(granularity)},
      {"topology", info.topology},
      {"llc_bytes", std::to_string(info.llc_bytes)},
      {"hostname", info.hostname},
  };
}

// "0x1a2b": loops and sections without source lines are named after an address.
std::string hex_address(uint64_t value) {
  char buffer[24];
  std::snprintf(buffer, sizeof buffer, "0x%llx", static_cast<unsigned long long>(value));
  return buffer;
}

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

  void add_line(uint32_t line) {
    if (line == 0) return;
    first_line = first_line == 0 ? line : std::min(first_line, line);
    last_line = std::max(last_line, line);
  }
};

// Names the region of each code location and gathers each region's extent.
class RegionBuilder {
 public:
  // Returns the name of the region `location` belongs to.
  std::string add(const CodeLocation& location) {
    if (!location.known()) {
      std::string name = location.module.empty()
                             ? std::string(kUnknownFunction)
                             : std::string(kUnknownFunction) + " (" +
                                   std::string(path_basename(location.module)) + ")";
      RegionDraft& draft = drafts_[name];
      draft.kind = kRegionFunction;
      draft.function = kUnknownFunction;
      return name;
    }

    const InlineFrame& outermost = location.frames.back();
    const bool outlined = is_omp_outlined(location.function);
    const std::string function = without_clone_suffix(location.function);
    std::string name = function;
    if (outlined && is_anonymous_omp_outlined(location.function)) {
      // Every clang outlined body has the same name; its position tells them apart.
      uint32_t line =
          location.function_decl_line != 0 ? location.function_decl_line : outermost.line;
      if (!outermost.file.empty() && line != 0) {
        name += "@" + std::string(path_basename(outermost.file)) + ":" + std::to_string(line);
      }
    }

    RegionDraft& draft = drafts_[name];
    draft.kind = outlined ? kRegionOmpParallel : kRegionFunction;
    if (draft.function.empty()) {
      draft.function = outlined ? omp_parent_function(function) : function;
    }
    if (draft.file.empty()) draft.file = outermost.file;
    if (!draft.file.empty() && outermost.file == draft.file) {
      draft.add_line(location.function_decl_line);
    }
    for (const InlineFrame& frame : location.frames) {
      // Lines inside the physical function; clang inlines an outlined body's
      // code from a "_debug__" copy, whose lines belong to the region too.
      bool own = &frame == &outermost || is_omp_outlined(frame.function);
      if (own && frame.file == draft.file) draft.add_line(frame.line);
    }
    return name;
  }

  // The region of a pc inside `loop` of `function` (whose region is
  // `function_region`): the loop, registered with its enclosing loops.
  std::string add_loop(const std::string& function_region, const FunctionStructure& function,
                       const Loop& loop) {
    const auto key = std::make_pair(function_region, loop.header);
    if (auto it = loop_names_.find(key); it != loop_names_.end()) return it->second;
    std::string name = function_region + ":loop@";
    if (!loop.file.empty() && loop.first_line != 0)
      name += std::string(path_basename(loop.file)) + ":" + std::to_string(loop.first_line);
    else
      name += hex_address(loop.header);
    // Two loops starting on one line (`for (..) for (..)`): outer keeps the name.
    const std::string base = name;
    for (int n = 2; drafts_.contains(name); ++n) name = base + "#" + std::to_string(n);
    loop_names_[key] = name;
    RegionDraft& draft = drafts_[name];
    draft.kind = kRegionLoop;
    draft.file = loop.file;
    draft.first_line = loop.first_line;
    draft.last_line = loop.last_line;
    draft.function_region = function_region;
    draft.parent_name =
        loop.parent >= 0
            ? add_loop(function_region, function, function.loops[static_cast<size_t>(loop.parent)])
            : function_region;
    return name;
  }

  // A parallel section, named after the site that closes it. Sections are a
  // second partition of the events: their `function` is their own name, so
  // selecting a function never pools them with its code regions.
  std::string add_section(const std::string& name, const std::string& file, uint32_t line) {
    RegionDraft& draft = drafts_[name];
    draft.kind = kRegionSection;
    draft.function = name;
    draft.file = file;
    draft.first_line = draft.last_line = line;
    return name;
  }

  // The function an outlined body came from, learnt from the call site of
  // the parallel region (for names that do not tell, see omp_parent_function).
  void suggest_parent_function(const std::string& region, const std::string& function) {
    auto it = drafts_.find(region);
    if (it != drafts_.end() && it->second.kind == kRegionOmpParallel &&
        it->second.function.empty()) {
      it->second.function = function;
    }
  }

  // Links outlined bodies to their function's region (created when the
  // function had no code location of its own) and numbers the regions.
  void finish() {
    std::vector<std::string> missing_parents;
    for (auto& [name, draft] : drafts_) {
      if (draft.kind != kRegionOmpParallel) continue;
      if (draft.function.empty()) {
        draft.function = name;
        continue;
      }
      draft.parent_name = draft.function;
      if (!drafts_.contains(draft.function)) missing_parents.push_back(draft.function);
    }
    for (const std::string& function : missing_parents) {
      RegionDraft& parent = drafts_[function];
      parent.kind = kRegionFunction;
      parent.function = function;
    }
    // A loop belongs to the function its enclosing function region names.
    for (auto& [name, draft] : drafts_)
      if (draft.kind == kRegionLoop) draft.function = drafts_.at(draft.function_region).function;
    int64_t next_id = 1;
    for (auto& entry : drafts_) entry.second.id = next_id++;
  }

  int64_t id_of(const std::string& name) const { return drafts_.at(name).id; }
  const std::map<std::string, RegionDraft>& drafts() const { return drafts_; }

 private:
  std::map<std::string, RegionDraft> drafts_;  // by name, so ids are stable across runs
  std::map<std::pair<std::string, uint64_t>, std::string> loop_names_;  // (function, header)
};

template <class T>
std::optional<T> unless_zero(T value) {
  return value == 0 ? std::nullopt : std::optional<T>(value);
}

std::optional<std::string> unless_empty(const std::string& text) {
  return text.empty() ? std::nullopt : std::optional<std::string>(text);
}

// Creates the database at a temporary path next to `path`; commit() renames
// it into place, and the destructor removes it if commit() never happened.
class ProfileFile {
 public:
  explicit ProfileFile(const std::string& path)
      : path_(path), temporary_(path + ".tmp." + std::to_string(::getpid())) {
    std::remove(temporary_.c_str());
    try {
      db_.emplace(temporary_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
      db_->exec("PRAGMA journal_mode = MEMORY; PRAGMA synchronous = OFF;");
      db_->exec(("PRAGMA application_id = " + std::to_string(kProfileApplicationId) +
                 "; PRAGMA user_version = " + std::to_string(kProfileSchemaVersion) + ";")
                    .c_str());
      db_->exec("BEGIN");
      db_->exec(kProfileSchemaSql);
    } catch (const sqlite::Error& error) {
      db_.reset();
      std::remove(temporary_.c_str());
      fail(error.what());
    }
  }

  ~ProfileFile() {
    if (!committed_) {
      db_.reset();
      std::remove(temporary_.c_str());
    }
  }

  // Runs `write` with SQLite errors reported against the profile's path.
  template <class Write>
  void write(Write write) {
    try {
      write(*db_);
    } catch (const sqlite::Error& error) {
      fail(error.what());
    }
  }

  void commit() {
    write([](sqlite::Database& db) { db.exec("COMMIT"); });
    db_.reset();
    if (std::rename(temporary_.c_str(), path_.c_str()) != 0) fail(std::strerror(errno));
    committed_ = true;
  }

 private:
  [[noreturn]] void fail(const std::string& cause) {
    throw ProfileError("cannot write profile " + path_ + ": " + cause);
  }

  std::string path_;
  std::string temporary_;
  std::optional<sqlite::Database> db_;
  bool committed_ = false;
};

void write_meta(const sqlite::Database& db, const MetaEntries& entries) {
  sqlite::Statement insert(db, "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)");
  for (const auto& [key, value] : entries) insert.run(key, value);
}

// Every pc the profile will describe.
std::set<uint64_t> referenced_pcs(const RunCapture& capture) {
  std::set<uint64_t> pcs;
  for (const PcCommunication& entry : capture.communication) pcs.insert(entry.pc);
  for (const SyncRecord& event : capture.sync) {
    if (event.pc != 0) pcs.insert(event.pc);
    bool outlined_object =
        event.kind == SyncKind::OmpParallelBegin || event.kind == SyncKind::OmpImplicitTaskBegin;
    if (outlined_object && event.object != 0) pcs.insert(event.object);
    if (event.kind == SyncKind::OmpLoopChunk && omp_loop_key(event.object) != 0)
      pcs.insert(omp_loop_key(event.object));
  }
  for (const ThreadRecord& thread : capture.threads) {
    if (thread.start_routine != 0) pcs.insert(thread.start_routine);
  }
  for (const PcDistanceCount& d : capture.distances) pcs.insert(d.pc);
  for (const PcFootprint& f : capture.footprints) pcs.insert(f.pc);
  for (const LineSharingRecord& r : capture.line_sharing) pcs.insert(r.pc);
  for (const RunCapture::TraceStream& t : capture.traces)
    if (t.header.pc != 0) pcs.insert(t.header.pc);
  return pcs;
}

bool has_analysis(const RunCapture& capture, const char* name) {
  return std::find(capture.analyses.begin(), capture.analyses.end(), name) !=
         capture.analyses.end();
}

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
};

ImbalanceData gather_imbalance(const RunCapture& capture, const ModuleMap& modules,
                               BinaryStructureCache& structures) {
  ImbalanceData data;
  if (!has_analysis(capture, kAnalysisImbalance)) return data;
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

// Per-thread busy measures of one instance.
struct InstanceThreadTotals {
  uint64_t instructions = 0;
  uint64_t misses[3] = {0, 0, 0};
  double modeled_cycles = 0;
};

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

}  // namespace

std::string format_utc_iso8601(std::chrono::system_clock::time_point time) {
  std::time_t seconds = std::chrono::system_clock::to_time_t(time);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buffer;
}

void build_profile(const RunCapture& capture, const RunInfo& info, const std::string& path,
                   Symbolizer& symbolizer) {
  // Symbolize and attribute every pc before touching the file.
  std::set<uint64_t> pcs = referenced_pcs(capture);
  RegionBuilder regions;
  BinaryStructureCache structures;
  const ImbalanceData imbalance = gather_imbalance(capture, symbolizer.modules(), structures);
  const std::vector<DataObject> data_objects = resolve_data_objects(capture, symbolizer);
  for (const DataObject& o : data_objects)
    if (o.allocation_pc != 0) pcs.insert(o.allocation_pc);
  for (const auto& [pc, block] : imbalance.blocks) pcs.insert(block.decision_pc);
  for (const SegmentInstruction& r : capture.segment_instructions)
    if (imbalance.instance_of(r.thread, r.segment)) pcs.insert(r.pc);
  std::map<uint64_t, std::string> region_of_pc;
  for (uint64_t pc : pcs) {
    // Innermost loop containing the pc, else its function (DESIGN.md, "Region").
    const CodeLocation& location = symbolizer.symbolize(pc);
    std::string region = regions.add(location);
    if (location.known() && !location.module.empty()) {
      if (const FunctionStructure* f =
              structures.function_at(location.module, location.module_offset)) {
        if (const Loop* loop = f->innermost_loop(location.module_offset))
          region = regions.add_loop(region, *f, *loop);
      }
    }
    region_of_pc[pc] = std::move(region);
  }
  for (const SyncRecord& event : capture.sync) {
    if (event.kind != SyncKind::OmpParallelBegin || event.object == 0 || event.pc == 0) continue;
    const CodeLocation& call_site = symbolizer.symbolize(event.pc);
    if (call_site.known()) {
      regions.suggest_parent_function(region_of_pc[event.object], call_site.function);
    }
  }
  // Sections: (owner thread, closing site) -> region name.
  std::map<uint32_t, uint64_t> join_site_of;  // thread -> pc of the join that waited for it
  for (const SyncRecord& event : capture.sync)
    if (event.kind == SyncKind::ThreadJoin && event.arg0 >= 0 && event.pc != 0)
      join_site_of[static_cast<uint32_t>(event.arg0)] = event.pc;
  std::map<std::pair<uint32_t, uint64_t>, std::string> section_name;
  auto name_section = [&](uint32_t thread, uint64_t site) {
    auto [it, fresh] = section_name.try_emplace({thread, site});
    if (!fresh) return;
    if (site == kThreadExitSectionSite) {
      auto join = join_site_of.find(thread);
      if (join == join_site_of.end()) {
        it->second = regions.add_section(
            thread == 0 ? "section@program-exit" : "section@thread-exit", "", 0);
        return;
      }
      site = join->second;
    }
    if (site == kUnknownSectionSite) {
      it->second = regions.add_section("section@unknown", "", 0);
      return;
    }
    const CodeLocation& at = symbolizer.symbolize(site);
    // The line in the physical function (outermost frame, or clang's inlined
    // `.omp_outlined._debug__` copy of a parallel body) is where the user
    // wrote the barrier.
    const InlineFrame* frame = nullptr;
    for (auto it = at.frames.rbegin(); it != at.frames.rend(); ++it) {
      if (frame && !is_outlined_body_copy(it->function)) break;
      frame = &*it;
    }
    if (frame && !frame->file.empty() && frame->line != 0) {
      it->second = regions.add_section(
          "section@" + std::string(path_basename(frame->file)) + ":" + std::to_string(frame->line),
          frame->file, frame->line);
    } else {
      it->second = regions.add_section("section@" + at.function + "+" + hex_address(site), "", 0);
    }
  };
  for (const PcCommunication& c : capture.section_communication) name_section(c.thread, c.pc);
  for (const PcDistanceCount& d : capture.section_distances) name_section(d.reader, d.pc);
  for (const SectionInstance& instance : imbalance.instances)
    name_section(instance.site_thread, instance.site);

  regions.finish();
  std::unordered_map<uint64_t, int64_t> region_id_of_pc;
  for (const auto& [pc, name] : region_of_pc) region_id_of_pc[pc] = regions.id_of(name);
  std::vector<int64_t> region_of_instance;
  for (const SectionInstance& instance : imbalance.instances)
    region_of_instance.push_back(
        regions.id_of(section_name.at({instance.site_thread, instance.site})));

  ProfileFile file(path);
  file.write([&](const sqlite::Database& db) {
    std::map<std::string, int64_t> module_ids;
    sqlite::Statement insert_module(db, "INSERT INTO modules(id, path, build_id) VALUES (?, ?, ?)");
    for (uint64_t pc : pcs) {
      const std::string& module = symbolizer.symbolize(pc).module;
      if (module.empty() || module_ids.contains(module)) continue;
      int64_t id = static_cast<int64_t>(module_ids.size()) + 1;
      module_ids[module] = id;
      insert_module.run(id, module, unless_empty(symbolizer.modules().build_id(module)));
    }

    sqlite::Statement insert_region(db,
                                    "INSERT INTO regions(id, kind, name, function, file,"
                                    " first_line, last_line, parent_id)"
                                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
    for (const auto& [name, draft] : regions.drafts()) {
      std::optional<int64_t> parent_id;
      if (!draft.parent_name.empty()) parent_id = regions.id_of(draft.parent_name);
      insert_region.run(draft.id, draft.kind, name, draft.function, unless_empty(draft.file),
                        unless_zero(draft.first_line), unless_zero(draft.last_line), parent_id);
    }

    sqlite::Statement insert_location(db,
                                      "INSERT INTO code_locations(pc, module_id, module_offset,"
                                      " function, file, line, column, region_id)"
                                      " VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
    sqlite::Statement insert_frame(db,
                                   "INSERT INTO inline_frames(pc, depth, function, file, line,"
                                   " column) VALUES (?, ?, ?, ?, ?, ?)");
    for (uint64_t pc : pcs) {
      const CodeLocation& location = symbolizer.symbolize(pc);
      std::optional<int64_t> module_id;
      if (auto it = module_ids.find(location.module); it != module_ids.end()) {
        module_id = it->second;
      }
      insert_location.run(pc, module_id, location.module_offset, location.function,
                          unless_empty(location.file), unless_zero(location.line),
                          unless_zero(location.column), region_id_of_pc.at(pc));
      for (size_t depth = 0; depth < location.frames.size(); ++depth) {
        const InlineFrame& frame = location.frames[depth];
        insert_frame.run(pc, depth, frame.function, unless_empty(frame.file),
                         unless_zero(frame.line), unless_zero(frame.column));
      }
    }

    std::set<uint32_t> thread_ids;
    for (const ThreadRecord& thread : capture.threads) thread_ids.insert(thread.id);
    sqlite::Statement insert_thread(db,
                                    "INSERT OR REPLACE INTO threads(id, os_tid, parent,"
                                    " start_routine_pc, start_routine, creation_order, start_ns,"
                                    " end_ns, basic_blocks) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
    for (const ThreadRecord& thread : capture.threads) {
      std::optional<int32_t> parent;
      if (thread.parent >= 0) parent = thread.parent;
      std::optional<std::string> start_routine;
      if (thread.start_routine != 0) {
        start_routine = symbolizer.symbolize(thread.start_routine).function;
      }
      // Thread ids are given in creation order; the rank survives gaps in the ids.
      auto creation_order = std::distance(thread_ids.begin(), thread_ids.find(thread.id));
      insert_thread.run(thread.id, thread.os_tid, parent, unless_zero(thread.start_routine),
                        start_routine, creation_order, thread.start_ns, thread.end_ns,
                        thread.basic_blocks);
    }

    // Sparse matrices per region: (region, kind, writer, reader) -> count.
    std::map<std::tuple<int64_t, MatrixKind, uint32_t, uint32_t>, uint64_t> entries;
    for (const PcCommunication& c : capture.communication) {
      int64_t region = region_id_of_pc.at(c.pc);
      if (c.comm != 0) entries[{region, MatrixKind::Raw, c.peer, c.thread}] += c.comm;
      if (c.reuse != 0) entries[{region, MatrixKind::Rar, c.peer, c.thread}] += c.reuse;
      if (c.inval != 0) entries[{region, MatrixKind::Inval, c.thread, c.peer}] += c.inval;
    }
    for (const PcCommunication& c : capture.section_communication) {
      const int64_t region = regions.id_of(section_name.at({c.thread, c.pc}));
      if (c.comm != 0) entries[{region, MatrixKind::Raw, c.peer, c.thread}] += c.comm;
      if (c.reuse != 0) entries[{region, MatrixKind::Rar, c.peer, c.thread}] += c.reuse;
      if (c.inval != 0) entries[{region, MatrixKind::Inval, c.thread, c.peer}] += c.inval;
    }
    sqlite::Statement insert_entry(db,
                                   "INSERT INTO matrix_entries(region_id, kind, writer, reader,"
                                   " count) VALUES (?, ?, ?, ?, ?)");
    for (const auto& [key, count] : entries) {
      const auto& [region, kind, writer, reader] = key;
      insert_entry.run(region, matrix_kind_name(kind), writer, reader, count);
    }

    // CRD distances per region and pair, pooled over the region's pcs.
    std::map<std::tuple<int64_t, uint32_t, uint32_t, uint64_t>, uint64_t> distances;
    std::map<std::tuple<int64_t, uint32_t, uint32_t>, uint64_t> unmeasured;
    for (const PcDistanceCount& d : capture.distances) {
      const int64_t region = region_id_of_pc.at(d.pc);
      if (d.distance == kUnmeasuredDistance)
        unmeasured[{region, d.writer, d.reader}] += d.count;
      else
        distances[{region, d.writer, d.reader, d.distance}] += d.count;
    }
    for (const PcDistanceCount& d : capture.section_distances) {
      const int64_t region = regions.id_of(section_name.at({d.reader, d.pc}));
      if (d.distance == kUnmeasuredDistance)
        unmeasured[{region, d.writer, d.reader}] += d.count;
      else
        distances[{region, d.writer, d.reader, d.distance}] += d.count;
    }
    sqlite::Statement insert_distance(db,
                                      "INSERT INTO crd_distances(region_id, writer, reader,"
                                      " distance, count) VALUES (?, ?, ?, ?, ?)");
    for (const auto& [key, count] : distances) {
      const auto& [region, writer, reader, distance] = key;
      insert_distance.run(region, writer, reader, static_cast<int64_t>(distance), count);
    }
    sqlite::Statement insert_unmeasured(db,
                                        "INSERT INTO crd_unmeasured(region_id, writer, reader,"
                                        " count) VALUES (?, ?, ?, ?)");
    for (const auto& [key, count] : unmeasured) {
      const auto& [region, writer, reader] = key;
      insert_unmeasured.run(region, writer, reader, count);
    }

    // Footprints by the region of each granule's first access.
    std::map<int64_t, std::pair<uint64_t, uint64_t>> footprints;
    for (const PcFootprint& f : capture.footprints) {
      auto& [private_granules, shared_granules] = footprints[region_id_of_pc.at(f.pc)];
      private_granules += f.private_granules;
      shared_granules += f.shared_granules;
    }
    sqlite::Statement insert_footprint(db,
                                       "INSERT INTO region_footprints(region_id, private_granules,"
                                       " shared_granules) VALUES (?, ?, ?)");
    for (const auto& [region, counts] : footprints)
      insert_footprint.run(region, counts.first, counts.second);

    sqlite::Statement insert_communication(db,
                                           "INSERT INTO pc_communication(pc, thread, peer, comm,"
                                           " reuse, inval) VALUES (?, ?, ?, ?, ?, ?)");
    for (const PcCommunication& c : capture.communication) {
      insert_communication.run(c.pc, c.thread, c.peer, c.comm, c.reuse, c.inval);
    }

    sqlite::Statement insert_sync(db,
                                  "INSERT INTO sync_events(thread, kind, time_ns, pc, object,"
                                  " arg0, arg1) VALUES (?, ?, ?, ?, ?, ?, ?)");
    for (const SyncRecord& event : capture.sync) {
      insert_sync.run(event.thread, sync_kind_name(event.kind), event.time_ns,
                      unless_zero(event.pc), event.object, event.arg0, event.arg1);
    }

    write_imbalance(db, capture, info, imbalance, region_of_instance);
    write_memory_tables(db, capture, data_objects);

    MetaEntries meta = run_meta(info, capture.source, capture.granularity, capture.complete,
                                capture.incomplete_reason);
    meta.emplace_back("max_threads", std::to_string(capture.max_threads));
    meta.emplace_back("dropped_events", std::to_string(capture.dropped_events));
    meta.emplace_back("dropped_sync_events", std::to_string(capture.dropped_sync_events));
    meta.emplace_back("unlogged_mutex_events", std::to_string(capture.unlogged_mutex_events));
    std::string analyses;
    for (const std::string& a : capture.analyses) analyses += (analyses.empty() ? "" : ",") + a;
    meta.emplace_back("analyses", analyses);
    meta.emplace_back("crd_max_granules", std::to_string(capture.crd_max_granules));
    meta.emplace_back("crd_capped_pairs", std::to_string(capture.crd_capped_pairs));
    if (has_analysis(capture, kAnalysisImbalance)) {
      meta.emplace_back("cache_levels", format_cache_levels(capture.caches));
      meta.emplace_back("miss_penalties", format_double(info.miss_penalties[0]) + "," +
                                              format_double(info.miss_penalties[1]) + "," +
                                              format_double(info.miss_penalties[2]));
    }
    if (has_analysis(capture, kAnalysisFalseSharing)) {
      meta.emplace_back("line_size", std::to_string(capture.line_size));
      meta.emplace_back("untracked_accesses", std::to_string(capture.untracked_accesses));
    }
    write_meta(db, meta);
  });
  file.commit();
}

void build_profile(const RunCapture& capture, const RunInfo& info, const std::string& path) {
  Symbolizer symbolizer(ModuleMap::parse(capture.process_maps));
  build_profile(capture, info, path, symbolizer);
}

void write_placeholder_profile(const std::string& path, const RunInfo& info,
                               const std::string& source, uint32_t granularity,
                               const std::string& incomplete_reason) {
  ProfileFile file(path);
  file.write([&](const sqlite::Database& db) {
    MetaEntries meta = run_meta(info, source, granularity, false, incomplete_reason);
    meta.emplace_back("max_threads", "0");
    meta.emplace_back("dropped_events", "0");
    meta.emplace_back("dropped_sync_events", "0");
    meta.emplace_back("unlogged_mutex_events", "0");
    write_meta(db, meta);
  });
  file.commit();
}

void mark_incomplete(const std::string& path, const std::string& reason) {
  Profile::open(path);  // refuses what is not a profile this weft can read
  try {
    sqlite::Database db(path, SQLITE_OPEN_READWRITE);
    write_meta(db, {{"complete", "0"}, {"incomplete_reason", reason}});
  } catch (const sqlite::Error& error) {
    throw ProfileError("cannot write profile " + path + ": " + error.what());
  }
}

}  // namespace weft
