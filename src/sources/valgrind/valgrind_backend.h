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
