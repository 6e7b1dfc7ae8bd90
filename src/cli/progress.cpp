#include "cli/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

namespace weft {

Progress::Progress(bool quiet)
    : shown_(!quiet && ::isatty(STDERR_FILENO) == 1), started_(std::chrono::steady_clock::now()) {}

Progress::~Progress() { clear(); }

void Progress::stage(std::string_view text) {
  if (!shown_) return;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  // Carriage return, erase the line, the stage; no line break.
  fmt::print(stderr, "\r\033[Kweft: {}... {:.1f} s", text, seconds);
  std::fflush(stderr);
  dirty_ = true;
}

void Progress::clear() {
  if (!dirty_) return;
  fmt::print(stderr, "\r\033[K");
  std::fflush(stderr);
  dirty_ = false;
}

}  // namespace weft
