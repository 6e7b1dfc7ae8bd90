// `weft record --backend valgrind`: runs an unmodified program under weft's
// Valgrind tool and feeds the tool's events (event ring) to a CaptureSession
// in this process, which writes the same raw capture as the compile-time
// runtime. Everything after that (profile, views) is shared.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "sources/capture/capture_session.h"

namespace weft {

// Valgrind's own messages on their way to weft's stderr. Drops the noise
// Valgrind 3.19 prints for DWARF 5 forms it does not know (clang); when
// Valgrind fails (a panic, "the 'impossible' happened", or a failed
// assertion), keeps the cause in one line for `weft record` to report and
// drops the rest (its advice to rerun valgrind, and thousands of lines of
// host and thread stack traces).
class ValgrindLogFilter {
 public:
  // Whether `line` (with its newline) goes to stderr.
  bool pass(const std::string& line);
  // Valgrind's failure in one line; empty when it did not fail.
  const std::string& failure() const { return failure_; }
  // The signal of Valgrind's "Process terminating with default action of
  // signal N": the program's own ending; 0 when it printed none.
  int terminating_signal() const { return terminating_signal_; }
  // Valgrind ended the program with that signal but could not re-raise it
  // on itself (its "signal was supposed to be fatal" panic, a race in
  // Valgrind when threads are exiting): the program died of the signal,
  // Valgrind's failure is only in reporting it.
  bool failed_to_reraise() const;

 private:
  std::string failure_;
  int terminating_signal_ = 0;
  bool failed_ = false;
  bool cause_next_ = false;  // the cause of "the 'impossible' happened" is the next line
  bool skip_blank_ = false;
};

// Valgrind's --max-threads for weft's --max-threads `max_threads`: room
// for that many live threads and kExtraThreadSlots more, which run
// unanalyzed (docs/commands.md, weft record).
constexpr unsigned kExtraThreadSlots = 1024;
inline unsigned valgrind_thread_slots(unsigned max_threads) {
  return max_threads + kExtraThreadSlots + 1;  // Valgrind never uses slot 0
}

// What running the backend needs, found once by check_valgrind_backend.
struct ValgrindSetup {
  std::string valgrind;        // the valgrind launcher, from PATH
  std::string tool_directory;  // VALGRIND_LIB: $WEFT_VALGRIND_LIB, else lib/valgrind beside bin/
};

// Throws a one-line cause when valgrind is missing, weft's tool is not
// built, or `program` is a binary the backend cannot profile (not x86-64,
// static without symbols).
ValgrindSetup check_valgrind_backend(const std::string& program);

// Runs `command` (argv[0] resolved to `program`) under the tool, analyzes its
// events as they arrive, then writes the raw capture to `capture_path`
// (flagged incomplete when the tool did not end normally). `started` gets
// the child's pid, for signal forwarding. Returns the wait status of the
// valgrind process.
int record_under_valgrind(const ValgrindSetup& setup, const std::vector<std::string>& command,
                          const std::string& program, const CaptureConfig& config,
                          const std::string& capture_path,
                          const std::function<void(pid_t)>& started);

}  // namespace weft
