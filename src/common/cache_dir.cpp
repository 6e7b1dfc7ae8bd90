#include "common/cache_dir.h"

#include <cstdlib>

namespace weft {
namespace {

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

}  // namespace

std::string weft_cache_dir() {
  std::string dir = environment("WEFT_CACHE_DIR");
  if (!dir.empty()) return dir;
  dir = environment("XDG_CACHE_HOME");
  if (!dir.empty()) return dir + "/weft";
  dir = environment("HOME");
  if (!dir.empty()) return dir + "/.cache/weft";
  return "";
}

}  // namespace weft
