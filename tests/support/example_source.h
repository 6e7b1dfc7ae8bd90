// The examples mark the lines tests look for with comments such as
// `weft:top-cause`: this finds the line of a marker in an example's source.
// Also the builds of every example that end-to-end tests run, and the
// gtest-safe name of a case.
#pragma once

#include <cctype>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <string>
#include <vector>

namespace weft_test {

// 1-based line of the first occurrence of `marker` in `file`, -1 if none.
inline int marker_line(const std::filesystem::path& file, const std::string& marker) {
  std::ifstream in(file);
  std::string text;
  for (int line = 1; std::getline(in, text); ++line)
    if (text.find(marker) != std::string::npos) return line;
  return -1;
}

// One build of an example (examples/CMakeLists.txt) and the source that
// records it.
struct ExampleBuild {
  std::string build;    // gcc.O2, plain.clang.O2, ...
  std::string backend;  // compile or valgrind
};

// gtest prints a build by its name and source.
inline void PrintTo(const ExampleBuild& b, std::ostream* os) {
  *os << b.build << " (" << b.backend << ")";
}

// weft's wrappers with gcc and clang at -O1 and -O2 under the compile-time
// source, and the plain gcc -O1 and clang -O2 builds under the binary source.
inline std::vector<ExampleBuild> example_builds() {
  std::vector<ExampleBuild> builds;
  for (const char* b : {"gcc.O1", "gcc.O2", "clang.O1", "clang.O2"})
    builds.push_back({b, "compile"});
  for (const char* b : {"plain.gcc.O1", "plain.clang.O2"}) builds.push_back({b, "valgrind"});
  return builds;
}

// `text` with every character gtest does not allow in a test name as '_'.
inline std::string test_name(std::string text) {
  for (char& ch : text)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return text;
}

}  // namespace weft_test
