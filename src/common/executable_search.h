// Finding programs the way execvp does, for `weft record` (the program to
// run) and the Valgrind backend (valgrind itself).
#pragma once

#include <string>

namespace weft {

// True when `path` is a regular file this process may execute.
bool is_runnable_file(const std::string& path);

// `name` itself if it contains a '/', else the first runnable PATH entry
// holding it (an empty entry means the current directory); empty if none.
std::string find_executable(const std::string& name);

}  // namespace weft
