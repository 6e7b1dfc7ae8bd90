// The file of the binary-structure cache (BinaryStructure's, one per GNU
// build id): the functions' blocks and loops as JSON. Internal to
// src/static, apart from read_binary_structure_cache (binary_structure.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "static/binary_structure.h"

namespace weft {

// Derived fields of a function read or analyzed: predecessors, loop
// indices and ranges.
void complete_function(FunctionStructure& function);

// The cache file's text: the functions of the file at `path` that
// `functions` does not hold (another process may have added them), then
// `functions`.
std::string binary_structure_cache_text(const std::string& build_id,
                                        const std::map<uint64_t, FunctionStructure>& functions,
                                        const std::string& path);

}  // namespace weft
