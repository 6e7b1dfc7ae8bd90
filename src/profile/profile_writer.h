// Writing profiles: a RunCapture becomes one SQLite file, with every pc
// symbolized and attributed to a region. See docs/profile-format.md.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/run_capture.h"
#include "profile/profile.h"
#include "static/symbolizer.h"

namespace weft {

// Facts about the run that the capture itself does not hold; the launcher
// (weft record) knows them.
struct RunInfo {
  std::string command;
  std::vector<std::string> args;  // without the command
  std::string cwd;
  std::chrono::system_clock::time_point start_time{};
  double duration_s = 0;
  std::optional<int> exit_status;          // when the program exited normally
  std::optional<std::string> exit_signal;  // "SIGSEGV" when a signal killed it
  std::string topology;                    // one-line summary
  uint64_t llc_bytes = 0;  // last-level cache of the recording machine, 0 if unknown
  // Where llc_bytes came from ("--cache", "sysfs", "hwloc", "cpuid",
  // "default") and why the machine's own description was passed over.
  std::string llc_source;
  std::string llc_note;
  // Cycles charged per simulated L1, L2 and LLC miss in the modeled busy
  // time of the imbalance analysis (`weft record --miss-penalties`).
  std::array<double, 3> miss_penalties = kDefaultMissPenalties;
  std::string hostname;
  // The program's problem size as the user gave it (`weft record
  // --problem-size`), for `weft predict`; absent: not given.
  std::optional<uint64_t> problem_size;
  std::string weft_version;  // empty: this build's version
};

// The file a profile written to `path` lands in: `path` itself, or, when
// `path` is a symbolic link, the file it leads to (links are followed, the
// link stays). It must be a regular file or not exist yet, in an existing
// directory: a device, a FIFO, a socket, a directory or a link loop is
// refused with a one-line ProfileError, before anything is written.
std::string profile_output_target(const std::string& path);

// Writes the profile at `path` (replacing the regular file there, or the
// one a symbolic link leads to: profile_output_target) in one transaction,
// through a temporary file in the target's directory renamed into place at
// the end, so a reader never sees half a profile and a failure leaves the
// previous file as it was. Throws ProfileError when the file cannot be
// written.
// `progress`, when given, is told each stage as it begins ("preparing
// crd", "symbolizing and attributing regions", "writing tables").
using BuildProgress = std::function<void(std::string_view stage)>;
void build_profile(const RunCapture& capture, const RunInfo& info, const std::string& path,
                   Symbolizer& symbolizer, const BuildProgress& progress = {});

// The same, symbolizing against capture.process_maps.
void build_profile(const RunCapture& capture, const RunInfo& info, const std::string& path,
                   const BuildProgress& progress = {});

// A profile holding only meta (complete = 0, the reason given), for a program
// that died before the runtime could save anything. Views still open it.
void write_placeholder_profile(const std::string& path, const RunInfo& info,
                               const std::string& source, uint32_t granularity,
                               const std::string& incomplete_reason);

// Marks an existing profile incomplete (complete = 0, incomplete_reason).
// Throws ProfileError when `path` is not a weft profile.
void mark_incomplete(const std::string& path, const std::string& reason);

// "2024-05-01T12:34:56Z"
std::string format_utc_iso8601(std::chrono::system_clock::time_point time);

}  // namespace weft
