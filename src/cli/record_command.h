// `weft record`: runs a program under an event source and writes its profile.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace weft {

struct RecordOptions {
  std::string output = "weft.db";
  std::string backend = "compile";
  unsigned granularity = 64;
  unsigned max_threads = 1024;
  std::vector<std::string> analyses;  // empty: every analysis
  // The analyses' settings given on the command line, by meta key
  // (common/analyses.h); sizes already in bytes. Absent: the default.
  std::map<std::string, std::string> settings;
  std::vector<std::string> command;      // program and its arguments
  bool exact = false;                    // --exact: the settings' exact values (no sampling)
  std::optional<uint64_t> problem_size;  // --problem-size, kept in the profile's meta
  bool quiet = false;                    // --quiet: no progress line on the terminal
};

// Exit codes of `weft record` that are not the program's (docs/commands.md,
// "Exit status"), as env(1) and timeout(1) have them: weft failed (bad
// options, nothing recorded, the profile not written), the program was not
// found or could not be started.
inline constexpr int kRecordFailed = 125;
inline constexpr int kProgramNotFound = 127;

// Returns the program's own exit status (or 128 + signal), whether the
// profile is complete or flagged incomplete. Throws std::runtime_error when
// weft itself fails (exit kRecordFailed), CommandFailure with another code.
int run_record(const RecordOptions& options);

}  // namespace weft
