// The binary-structure cache (src/static/binary_structure.h): the JSON file
// under $WEFT_CACHE_DIR/binary-structure/BUILD_ID.json that keeps each
// binary's functions, blocks and loops between runs. The input is the
// file; what the reader accepts is then queried as the profile builder
// queries it (innermost loop and block of addresses).
#include <cstddef>
#include <cstdint>

#include "fuzz_support.h"
#include "static/binary_structure.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static weft_fuzz::ScratchFile file("structure.json");
  const std::string& path = file.write(data, size);
  weft_fuzz::expect_bounded([&] {
    for (const auto& [start, function] : weft::read_binary_structure_cache(path, "fuzz")) {
      for (const weft::BasicBlock& block : function.blocks) {
        function.innermost_loop(block.start);
        function.block_at(block.last_instruction);
      }
      function.innermost_loop(function.start);
    }
  });
  return 0;
}
