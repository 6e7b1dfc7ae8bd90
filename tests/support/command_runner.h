// Running a shell command from an end-to-end test and capturing its exit
// code, stdout and stderr (through files in the test's own directory).
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace weft_test {

struct CommandResult {
  int code = -1;  // exit status, or 128 + signal
  std::string out;
  std::string err;
};

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs `command` with /bin/sh; its output goes through files in `dir`.
inline CommandResult run_command(const std::string& command, const std::filesystem::path& dir) {
  const std::filesystem::path out = dir / "stdout", err = dir / "stderr";
  const int status = std::system((command + " >" + out.string() + " 2>" + err.string()).c_str());
  CommandResult r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

}  // namespace weft_test
