// What findings say about a code location: the text of its source line
// (read once per file, for the findings' `code` field) and its short
// "file.c:88 function" form.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "profile/profile.h"

namespace weft {

// Source lines by file, read once per file; "" when the file or the line is
// not readable (only regular files of at most 64 MiB are read). Leading
// blanks are dropped.
class SourceLines {
 public:
  std::string line(const std::string& file, uint32_t number);

 private:
  std::map<std::string, std::vector<std::string>> files_;
};

// "file.c:88 function", or "function 0x…" without a source line.
std::string code_location(const SourcePosition& position, uint64_t pc);

}  // namespace weft
