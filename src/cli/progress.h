// Progress on long work (`weft record`'s post-processing, the long views):
// one line on stderr, rewritten at each stage and erased at the end, shown
// only when stderr is a terminal and --quiet was not given; otherwise
// nothing is written (logs and pipes stay clean).
#pragma once

#include <chrono>
#include <string>
#include <string_view>

namespace weft {

class Progress {
 public:
  explicit Progress(bool quiet);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // "weft: symbolizing and attributing regions... 1.2 s"
  void stage(std::string_view text);
  // Erases the line (before anything else is printed to stderr).
  void clear();
  bool shown() const { return shown_; }

 private:
  bool shown_ = false;
  bool dirty_ = false;
  std::chrono::steady_clock::time_point started_;
};

}  // namespace weft
