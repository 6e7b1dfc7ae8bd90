// The examples mark the lines tests look for with comments such as
// `weft:top-cause`: this finds the line of a marker in an example's source.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

namespace weft_test {

// 1-based line of the first occurrence of `marker` in `file`, -1 if none.
inline int marker_line(const std::filesystem::path& file, const std::string& marker) {
  std::ifstream in(file);
  std::string text;
  for (int line = 1; std::getline(in, text); ++line)
    if (text.find(marker) != std::string::npos) return line;
  return -1;
}

}  // namespace weft_test
