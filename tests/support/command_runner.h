// Running a shell command from an end-to-end test and capturing its exit
// code, stdout and stderr (through files in the test's own directory).
#pragma once

#include <stdlib.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace weft_test {

// A fixed cache for `weft record` of the examples (the imbalance model's
// levels; its last level is the CRD cutoffs' cache), whatever the machine
// running the tests has: an 8 MiB LLC gives a min cutoff of 65536 lines.
inline const std::string kExampleCache = "--cache 32K:8,256K:8,8M:16";

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

// A fresh directory under the system's temporary directory, removed with
// everything in it when the test ends.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& prefix = "weft-test") {
    std::string pattern = (std::filesystem::temp_directory_path() / (prefix + ".XXXXXX")).string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

}  // namespace weft_test
