#include "profile/run_regions.h"

#include <algorithm>
#include <cstdio>

#include "profile/region_naming.h"

namespace weft {
namespace {

// "0x1a2b": loops and sections without source lines are named after an address.
std::string hex_address(uint64_t value) {
  char buffer[24];
  std::snprintf(buffer, sizeof buffer, "0x%llx", static_cast<unsigned long long>(value));
  return buffer;
}

}  // namespace

void RegionDraft::add_line(uint32_t line) {
  if (line == 0) return;
  first_line = first_line == 0 ? line : std::min(first_line, line);
  last_line = std::max(last_line, line);
}

std::string RegionBuilder::add(const CodeLocation& location) {
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
    uint32_t line = location.function_decl_line != 0 ? location.function_decl_line : outermost.line;
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

std::string RegionBuilder::add_loop(const std::string& function_region,
                                    const FunctionStructure& function, const Loop& loop) {
  const auto key = std::make_pair(function_region, loop.header);
  if (auto it = loop_names_.find(key); it != loop_names_.end()) return it->second;
  std::string name = function_region + ":loop@";
  if (!loop.file.empty() && loop.first_line != 0)
    name += std::string(path_basename(loop.file)) + ":" + std::to_string(loop.first_line);
  else
    name += hex_address(loop.header);
  // Loops starting on one line (`for (..) for (..)`, a helper's loop inlined
  // at its call, whose lines are the call's) are numbered by their place in
  // the function, outer before inner, then by address: the outer keeps the
  // name, whichever loop's accesses the recording names first (that order
  // swapped the names between two recordings of one binary).
  const std::string base = name;
  uint32_t rank = 0;
  if (!loop.file.empty() && loop.first_line != 0)
    for (const Loop& other : function.loops)
      if (other.first_line == loop.first_line && other.file == loop.file &&
          (other.depth < loop.depth || (other.depth == loop.depth && other.header < loop.header)))
        ++rank;
  if (rank != 0) name = base + "#" + std::to_string(rank + 1);
  // The same name from another physical function of the region (a clone).
  for (uint32_t n = rank + 2; drafts_.contains(name); ++n) name = base + "#" + std::to_string(n);
  loop_names_[key] = name;
  RegionDraft& draft = drafts_[name];
  draft.kind = kRegionLoop;
  draft.file = loop.file;
  draft.first_line = loop.first_line;
  draft.last_line = loop.last_line;
  draft.function_region = function_region;
  draft.parent_name = loop.parent >= 0 ? add_loop(function_region, function,
                                                  function.loops[static_cast<size_t>(loop.parent)])
                                       : function_region;
  return name;
}

std::string RegionBuilder::add_section(const std::string& name, const std::string& file,
                                       uint32_t line) {
  RegionDraft& draft = drafts_[name];
  draft.kind = kRegionSection;
  draft.function = name;
  draft.file = file;
  draft.first_line = draft.last_line = line;
  return name;
}

void RegionBuilder::suggest_parent_function(const std::string& region,
                                            const std::string& function) {
  auto it = drafts_.find(region);
  if (it != drafts_.end() && it->second.kind == kRegionOmpParallel && it->second.function.empty()) {
    it->second.function = function;
  }
}

void RegionBuilder::finish() {
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

RunRegions::RunRegions(const RunCapture& capture, const std::set<uint64_t>& pcs,
                       const std::set<std::pair<uint32_t, uint64_t>>& sections,
                       Symbolizer& symbolizer, BinaryStructureCache& structures) {
  name_code(capture, pcs, symbolizer, structures);
  for (const SyncRecord& event : capture.sync)
    if (event.kind == SyncKind::ThreadJoin && event.arg0 >= 0 && event.pc != 0)
      join_site_of_[static_cast<uint32_t>(event.arg0)] = event.pc;
  for (const auto& [thread, site] : sections) name_section(thread, site, symbolizer);
  builder_.finish();
  for (const auto& [pc, name] : region_of_pc_) id_of_pc_[pc] = builder_.id_of(name);
}

void RunRegions::name_code(const RunCapture& capture, const std::set<uint64_t>& pcs,
                           Symbolizer& symbolizer, BinaryStructureCache& structures) {
  for (uint64_t pc : pcs) {
    // Innermost loop containing the pc, else its function.
    const CodeLocation& location = symbolizer.symbolize(pc);
    std::string region = builder_.add(location);
    if (location.known() && !location.module.empty()) {
      if (const FunctionStructure* f =
              structures.function_at(location.module, location.module_offset)) {
        if (const Loop* loop = f->innermost_loop(location.module_offset))
          region = builder_.add_loop(region, *f, *loop);
      }
    }
    region_of_pc_[pc] = std::move(region);
  }
  for (const SyncRecord& event : capture.sync) {
    if (event.kind != SyncKind::OmpParallelBegin || event.object == 0 || event.pc == 0) continue;
    const CodeLocation& call_site = symbolizer.symbolize(event.pc);
    if (call_site.known()) {
      builder_.suggest_parent_function(region_of_pc_[event.object], call_site.function);
    }
  }
}

// Sections: (owner thread, closing site) -> region name.
void RunRegions::name_section(uint32_t thread, uint64_t site, Symbolizer& symbolizer) {
  auto [it, fresh] = section_name_.try_emplace({thread, site});
  if (!fresh) return;
  if (site == kThreadExitSectionSite) {
    auto join = join_site_of_.find(thread);
    if (join == join_site_of_.end()) {
      it->second =
          builder_.add_section(thread == 0 ? "section@program-exit" : "section@thread-exit", "", 0);
      return;
    }
    site = join->second;
  }
  if (site == kUnknownSectionSite) {
    it->second = builder_.add_section("section@unknown", "", 0);
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
    it->second = builder_.add_section(
        "section@" + std::string(path_basename(frame->file)) + ":" + std::to_string(frame->line),
        frame->file, frame->line);
  } else {
    // No line: the function and the site's offset in its module, which,
    // unlike the runtime address, are the same in every run of the binary.
    std::string name = "section@" + at.function;
    if (!at.module.empty())
      name +=
          " (" + std::string(path_basename(at.module)) + "+" + hex_address(at.module_offset) + ")";
    it->second = builder_.add_section(name, "", 0);
  }
}

}  // namespace weft
