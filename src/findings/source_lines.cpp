#include "findings/source_lines.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <fstream>

#include "profile/region_naming.h"

namespace weft {
namespace {

constexpr off_t kMaxSourceBytes = off_t{64} << 20;

}  // namespace

std::string SourceLines::line(const std::string& file, uint32_t number) {
  auto [it, fresh] = files_.try_emplace(file);
  // A profile names its source files; only a regular file of a source's
  // size is read (a device such as /dev/zero, or a FIFO, would never end).
  struct stat status {};
  if (fresh && ::stat(file.c_str(), &status) == 0 && S_ISREG(status.st_mode) &&
      status.st_size <= kMaxSourceBytes) {
    std::ifstream in(file);
    for (std::string text; std::getline(in, text);) it->second.push_back(text);
  }
  if (number == 0 || number > it->second.size()) return "";
  std::string text = it->second[number - 1];
  const size_t first = text.find_first_not_of(" \t");
  return first == std::string::npos ? "" : text.substr(first);
}

std::string code_location(const SourcePosition& position, uint64_t pc) {
  if (position.file.empty()) return fmt::format("{} 0x{:x}", position.function, pc);
  return fmt::format("{}:{} {}", path_basename(position.file), position.line, position.function);
}

}  // namespace weft
