// One subcommand of `weft`: it declares its options on the CLI11 app and runs
// once they are parsed. Every failure ends in one line on stderr and a
// non-zero exit (main.cpp); a command throws std::exception with that line.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace weft {

class Command {
 public:
  virtual ~Command() = default;
  // Adds the subcommand and its options to `app`; returns the subcommand.
  virtual CLI::App* add_to(CLI::App& app) = 0;
  // Runs after parsing; returns the process exit code.
  virtual int run() = 0;
  // The exit code of a failure of this command (bad options, or weft's own
  // failure): 1 for the views; `weft record` keeps the program's codes free
  // (docs/commands.md, "Exit status").
  virtual int failure_code() const { return 1; }
};

// A failure with an exit code of its own (a program `weft record` could not
// start: 126 or 127, as a shell says).
struct CommandFailure : std::runtime_error {
  CommandFailure(const std::string& what, int code) : std::runtime_error(what), code(code) {}
  int code;
};

// `weft record`; `program_arguments` receives what followed `--` on the
// command line, which weft never reads as options.
std::unique_ptr<Command> make_record_command(std::vector<std::string>& program_arguments);
// `weft place`: the mapping of a profile's threads onto a machine, printed
// or applied to `program_arguments` (the program it launches pinned).
std::unique_ptr<Command> make_place_command(std::vector<std::string>& program_arguments);
// `weft loops`: the static performance of a binary's loops.
std::unique_ptr<Command> make_loops_command();
// `weft calibrate`: the machine's bandwidths and latencies, for `loops`.
std::unique_ptr<Command> make_calibrate_command();
// `weft predict`: reuse patterns of a larger run from two training profiles.
std::unique_ptr<Command> make_predict_command();
// The view subcommands (report, comm, crd, diff, imbalance, falseshare,
// trace) and `topo`.
std::vector<std::unique_ptr<Command>> make_view_commands();

// A size in bytes as users write it: digits, then an optional unit that
// CLI11's AsSizeValue knows (K = 1024: 64K, 64KiB, 32M, 1G). The digits are
// checked first, since AsSizeValue alone takes "M" as 1M and wraps "-5" and
// numbers past 64 bits around.
CLI::Validator size_in_bytes();
inline CLI::Option* as_size(CLI::Option* option) { return option->transform(size_in_bytes()); }
// The same check and conversion on one value; nullopt when it is not a size.
std::optional<uint64_t> parse_size(std::string text);

// A whole number as users write it: decimal digits only (no sign, no
// exponent, no 0x; leading zeros are decimal, not octal), from `min` to
// `max`. CLI11 alone wraps "-1" around for 64-bit options, reads "010" as 8
// and prints DBL_MAX in its range errors. Give it with ->transform() (not
// ->check(), which drops the leading zeros it takes off).
CLI::Validator whole_number(uint64_t min, uint64_t max = UINT64_MAX);
// A decimal number (digits with at most one '.'; no sign, exponent, nan or
// inf) from `min` to `max`.
CLI::Validator decimal_number(double min, double max);

// An option whose words map onto an enum (CLI11 checks and converts them);
// its default is the word of `value`'s initial value.
template <class Enum>
CLI::Option* add_choice(CLI::App* app, const std::string& name, Enum& value,
                        const std::vector<std::pair<std::string, Enum>>& words,
                        const std::string& help) {
  std::map<std::string, Enum> choices(words.begin(), words.end());
  std::string initial, listed;
  for (const auto& [word, v] : words) {
    if (v == value && initial.empty()) initial = word;
    listed += (listed.empty() ? "" : "|") + word;
  }
  CLI::CheckedTransformer to_enum(choices);
  to_enum.description("");
  return app->add_option(name, value, help)
      ->transform(to_enum)
      ->type_name(listed)
      ->default_str(initial);
}

}  // namespace weft
