#include "findings/loop_findings.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <tuple>

#include "findings/finding_error.h"
#include "static/binary_structure.h"

namespace weft {
namespace {

// FILE names the loop's file: the same path, or its last components.
bool file_matches(const std::string& loop_file, const std::string& wanted) {
  if (loop_file == wanted) return true;
  return loop_file.size() > wanted.size() &&
         loop_file.compare(loop_file.size() - wanted.size(), wanted.size(), wanted) == 0 &&
         loop_file[loop_file.size() - wanted.size() - 1] == '/';
}

bool is_elf(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  return in.gcount() == 4 && magic[0] == 0x7f && magic[1] == 'E' && magic[2] == 'L' &&
         magic[3] == 'F';
}

}  // namespace

std::vector<SourceLoop> group_by_source_loop(std::vector<LoopPerformance> loops) {
  std::sort(loops.begin(), loops.end(), [](const LoopPerformance& a, const LoopPerformance& b) {
    return std::tie(a.function_start, a.file, a.first_line, a.header) <
           std::tie(b.function_start, b.file, b.first_line, b.header);
  });
  std::vector<SourceLoop> groups;
  for (LoopPerformance& loop : loops) {
    SourceLoop* last = groups.empty() ? nullptr : &groups.back();
    // Sorted by first line, a loop joins the previous group when its range
    // starts inside the group's range (ranges overlap).
    const bool joins = last != nullptr && !loop.file.empty() && loop.first_line != 0 &&
                       last->versions.front().function_start == loop.function_start &&
                       last->file == loop.file && loop.first_line <= last->last_line;
    if (!joins) {
      groups.push_back({loop.function, loop.file, loop.first_line, loop.last_line, {}});
      last = &groups.back();
    }
    last->last_line = std::max(last->last_line, loop.last_line);
    last->versions.push_back(std::move(loop));
  }
  for (SourceLoop& group : groups)
    std::sort(
        group.versions.begin(), group.versions.end(),
        [](const LoopPerformance& a, const LoopPerformance& b) { return a.header < b.header; });
  return groups;
}

LoopFindings find_loops(const LoopQuery& query) {
  std::error_code ec;
  if (!std::filesystem::exists(query.binary, ec))
    throw FindingError("cannot open '" + query.binary + "': no such file");
  if (!std::filesystem::is_regular_file(query.binary, ec))
    throw FindingError("'" + query.binary + "' is not a regular file");
  if (!is_elf(query.binary)) throw FindingError("'" + query.binary + "' is not an ELF file");
  std::unique_ptr<BinaryStructure> structure = BinaryStructure::open(query.binary);
  if (!structure) throw FindingError("'" + query.binary + "' is not a readable x86-64 ELF file");
  const std::vector<uint64_t> starts = structure->function_starts();
  if (starts.empty())
    throw FindingError("'" + query.binary +
                       "' has no function symbols (stripped?): weft loops needs its symbol table");

  std::vector<const FunctionStructure*> functions;
  if (!query.function.empty()) {
    functions = structure->functions_named(query.function);
    if (functions.empty())
      throw FindingError("no function named '" + query.function + "' in '" + query.binary + "'");
  } else {
    for (uint64_t start : starts)
      if (const FunctionStructure* function = structure->function_at(start))
        if (function->start == start) functions.push_back(function);
  }

  LoopFindings findings;
  findings.binary = query.binary;
  try {
    LoopPerformanceAnalyzer analyzer(query.binary, query.cpu);
    findings.cpu = analyzer.cpu();
    std::vector<LoopPerformance> loops;
    for (const FunctionStructure* function : functions) {
      ++findings.functions_analyzed;
      for (LoopPerformance& loop : analyzer.analyze(*function)) loops.push_back(std::move(loop));
    }
    findings.source_loops = group_by_source_loop(std::move(loops));
  } catch (const LoopPerformanceError& error) {
    throw FindingError(error.what());
  }
  structure->save_cache();

  if (query.line != 0) {
    std::erase_if(findings.source_loops, [&](const SourceLoop& loop) {
      return !file_matches(loop.file, query.line_file) || query.line < loop.first_line ||
             query.line > loop.last_line;
    });
    if (findings.source_loops.empty())
      throw FindingError("no innermost loop spans " + query.line_file + ":" +
                         std::to_string(query.line) + " in '" + query.binary + "'");
  }
  return findings;
}

}  // namespace weft
