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

// The directory weft uses as VALGRIND_LIB: $WEFT_VALGRIND_LIB, else
// lib/valgrind beside weft's bin/. Throws if the tool is not there.
std::string valgrind_tool_directory();

// Throws a one-line cause when valgrind is missing or `program` is a binary
// the backend cannot profile (not x86-64, static without symbols).
void check_valgrind_backend(const std::string& program);

struct ValgrindRun {
  int wait_status = 0;      // of the valgrind process, as from waitpid
  bool tool_ended = false;  // the tool's END record arrived
  uint64_t access_records = 0;
};

// Runs `command` (argv[0] resolved to `program`) under the tool, analyzes its
// events as they arrive, then writes the raw capture to `capture_path`
// (flagged incomplete when the tool did not end normally). `started` gets
// the child's pid, for signal forwarding.
ValgrindRun record_under_valgrind(const std::vector<std::string>& command,
                                  const std::string& program, const CaptureConfig& config,
                                  const std::string& capture_path,
                                  const std::function<void(pid_t)>& started);

}  // namespace weft
