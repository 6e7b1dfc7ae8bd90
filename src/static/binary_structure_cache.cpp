// The binary-structure cache's file (binary_structure_cache.h): JSON in,
// JSON out, no LLVM, so that its reader is fuzzed on its own
// (fuzz/fuzz_binary_structure_cache.cpp).
#include "static/binary_structure_cache.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace weft {
namespace {

// Bump when the analysis or the file layout changes: older files are ignored.
// 2: clang's `.omp_outlined._debug__` copies count as the outlined body's own lines.
constexpr int kCacheFormatVersion = 2;

using nlohmann::json;

void merge_range(std::vector<std::pair<uint64_t, uint64_t>>& ranges, uint64_t lo, uint64_t hi) {
  if (!ranges.empty() && ranges.back().second == lo) {
    ranges.back().second = hi;
  } else {
    ranges.emplace_back(lo, hi);
  }
}

}  // namespace

void complete_function(FunctionStructure& function) {
  for (BasicBlock& block : function.blocks) block.predecessors.clear();
  for (uint32_t b = 0; b < function.blocks.size(); ++b) {
    for (uint32_t next : function.blocks[b].successors) {
      function.blocks[next].predecessors.push_back(b);
    }
  }
  for (uint32_t i = 0; i < function.loops.size(); ++i) {
    Loop& loop = function.loops[i];
    loop.index = i;
    loop.ranges.clear();
    for (uint32_t b : loop.blocks) {
      merge_range(loop.ranges, function.blocks[b].start, function.blocks[b].end);
    }
  }
}

namespace {

json to_json(const FunctionStructure& function) {
  json blocks = json::array();
  for (const BasicBlock& block : function.blocks) {
    blocks.push_back(json::array({block.start, block.end, block.instructions, block.successors,
                                  block.ends_in_indirect_jump, block.last_instruction}));
  }
  json loops = json::array();
  for (const Loop& loop : function.loops) {
    loops.push_back({{"parent", loop.parent},
                     {"depth", loop.depth},
                     {"header", loop.header},
                     {"blocks", loop.blocks},
                     {"file", loop.file},
                     {"first_line", loop.first_line},
                     {"last_line", loop.last_line},
                     {"header_line", loop.header_line}});
  }
  return {{"name", function.name},
          {"linkage_name", function.linkage_name},
          {"start", function.start},
          {"end", function.end},
          {"instructions", function.instructions},
          {"blocks", std::move(blocks)},
          {"loops", std::move(loops)}};
}

// Throws (nlohmann's exceptions or std::runtime_error) on anything malformed.
FunctionStructure from_json(const json& value) {
  auto require = [](bool ok) {
    if (!ok) throw std::runtime_error("inconsistent cached function");
  };
  FunctionStructure function;
  function.name = value.at("name").get<std::string>();
  function.linkage_name = value.at("linkage_name").get<std::string>();
  function.start = value.at("start").get<uint64_t>();
  function.end = value.at("end").get<uint64_t>();
  function.instructions = value.at("instructions").get<uint32_t>();
  for (const json& item : value.at("blocks")) {
    require(item.is_array() && item.size() == 6);
    BasicBlock block;
    block.start = item.at(0).get<uint64_t>();
    block.end = item.at(1).get<uint64_t>();
    block.instructions = item.at(2).get<uint32_t>();
    block.successors = item.at(3).get<std::vector<uint32_t>>();
    block.ends_in_indirect_jump = item.at(4).get<bool>();
    block.last_instruction = item.at(5).get<uint64_t>();
    require(block.start < block.end && block.start <= block.last_instruction &&
            block.last_instruction < block.end &&
            (function.blocks.empty() || function.blocks.back().end <= block.start));
    function.blocks.push_back(std::move(block));
  }
  const size_t block_count = function.blocks.size();
  for (const BasicBlock& block : function.blocks) {
    for (uint32_t next : block.successors) require(next < block_count);
  }
  for (const json& item : value.at("loops")) {
    Loop loop;
    loop.parent = item.at("parent").get<int32_t>();
    loop.depth = item.at("depth").get<uint32_t>();
    loop.header = item.at("header").get<uint64_t>();
    loop.blocks = item.at("blocks").get<std::vector<uint32_t>>();
    loop.file = item.at("file").get<std::string>();
    loop.first_line = item.at("first_line").get<uint32_t>();
    loop.last_line = item.at("last_line").get<uint32_t>();
    loop.header_line = item.at("header_line").get<uint32_t>();
    require(loop.parent >= -1 && loop.parent < static_cast<int32_t>(function.loops.size()));
    require(!loop.blocks.empty() && std::is_sorted(loop.blocks.begin(), loop.blocks.end()));
    bool header_found = false;
    for (uint32_t b : loop.blocks) {
      require(b < block_count);
      header_found = header_found || function.blocks[b].start == loop.header;
    }
    require(header_found);
    function.loops.push_back(std::move(loop));
  }
  complete_function(function);
  return function;
}

// The functions of a cache file, empty when it is absent, corrupt, of another
// version or of another build id.
std::map<uint64_t, FunctionStructure> read_cache_file(const std::string& path,
                                                      const std::string& build_id) {
  std::map<uint64_t, FunctionStructure> functions;
  std::ifstream in(path, std::ios::binary);
  if (!in) return functions;
  try {
    json document = json::parse(in);
    if (document.at("format").get<int>() != kCacheFormatVersion ||
        document.at("build_id").get<std::string>() != build_id) {
      return functions;
    }
    for (const json& item : document.at("functions")) {
      FunctionStructure function = from_json(item);
      uint64_t start = function.start;
      functions.emplace(start, std::move(function));
    }
  } catch (const std::exception&) {
    functions.clear();  // corrupt: ignored, rewritten by the next save
  }
  return functions;
}

}  // namespace

std::map<uint64_t, FunctionStructure> read_binary_structure_cache(const std::string& path,
                                                                  const std::string& build_id) {
  return read_cache_file(path, build_id);
}

std::string binary_structure_cache_text(const std::string& build_id,
                                        const std::map<uint64_t, FunctionStructure>& functions,
                                        const std::string& path) {
  json listed = json::array();
  for (auto& [start, function] : read_cache_file(path, build_id)) {
    if (!functions.count(start)) listed.push_back(to_json(function));
  }
  for (const auto& [start, function] : functions) listed.push_back(to_json(function));
  json document = {
      {"format", kCacheFormatVersion}, {"build_id", build_id}, {"functions", std::move(listed)}};
  return document.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace weft
