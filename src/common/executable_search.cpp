#include "common/executable_search.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

namespace weft {

bool is_runnable_file(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

std::string find_executable(const std::string& name) {
  if (name.find('/') != std::string::npos) return is_runnable_file(name) ? name : std::string();
  const char* path = std::getenv("PATH");
  if (!path) return {};
  const std::string dirs = path;
  size_t start = 0;
  while (start <= dirs.size()) {
    const size_t end = dirs.find(':', start);
    const std::string dir = dirs.substr(start, end == std::string::npos ? end : end - start);
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (is_runnable_file(candidate)) return candidate;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return {};
}

}  // namespace weft
