// `weft loops BINARY`: the static performance of a binary's innermost loops
// (findings/loop_findings.h), rendered by views/loops_view.h. Needs no
// profile and no run: the binary is read as it is.
#include <fmt/format.h>

#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/command.h"
#include "findings/loop_findings.h"
#include "views/loops_view.h"

namespace weft {
namespace {

struct LoopsCommand : Command {
  std::string binary, function, line, cpu, calibration, profile;
  std::vector<std::string> trip_counts;
  OutputFormat format = OutputFormat::Table;

  CLI::App* add_to(CLI::App& app) override {
    CLI::App* c = app.add_subcommand(
        "loops", "static performance of a binary's innermost loops (LLVM MCA, MAQAO's model)");
    c->add_option("binary", binary, "an executable or shared library")->required();
    c->add_option("--function", function, "only this function's loops");
    c->add_option("--line", line, "only the source loops that span FILE:LINE");
    c->add_option("--cpu", cpu,
                  "the CPU model, any name the linked LLVM (19) knows (default: this machine's)");
    c->add_option("--calibration", calibration,
                  "the calibration JSON of the L2/RAM estimates (default: this machine's, from "
                  "`weft calibrate`)");
    c->add_option("--trip-count", trip_counts,
                  "N or HEADER=N (repeatable): iterations per entry of every loop, or of the "
                  "loop with that header address (from a run); a nested loop's entries are "
                  "simulated overlapping inside its enclosing loop");
    c->add_option("--profile", profile,
                  "a weft profile of a run of this binary (or of another build of the program) "
                  "recorded with memory traces: its strides and footprints replace the "
                  "addressing's in the L2/RAM estimates");
    add_choice(c, "--format", format,
               {{"table", OutputFormat::Table}, {"json", OutputFormat::Json}}, "output format");
    return c;
  }

  // "N" (every loop) or "HEADER=N" (HEADER decimal or 0x hexadecimal), N
  // from 1 to 2^24.
  static void parse_trip_count(const std::string& text, LoopQuery& query) {
    const auto bad = [&]() {
      return std::runtime_error(
          fmt::format("--trip-count wants N or HEADER=N (N from 1 to 16777216), not '{}'", text));
    };
    auto number = [&](const std::string& digits, int base) {
      const std::string allowed = base == 16 ? "0123456789abcdefABCDEF" : "0123456789";
      if (digits.empty() || digits.size() > 16 ||
          digits.find_first_not_of(allowed) != std::string::npos)
        throw bad();
      return std::stoull(digits, nullptr, base);
    };
    const size_t equals = text.find('=');
    const std::string count_text = equals == std::string::npos ? text : text.substr(equals + 1);
    const uint64_t count = number(count_text, 10);
    if (count < 1 || count > (uint64_t{1} << 24)) throw bad();
    if (equals == std::string::npos) {
      query.trip_count = static_cast<uint32_t>(count);
      return;
    }
    const std::string header = text.substr(0, equals);
    const bool hex =
        header.size() > 2 && header[0] == '0' && (header[1] == 'x' || header[1] == 'X');
    query.trip_counts[number(hex ? header.substr(2) : header, hex ? 16 : 10)] =
        static_cast<uint32_t>(count);
  }

  int run() override {
    LoopQuery query;
    query.binary = binary;
    query.function = function;
    query.cpu = cpu;
    query.calibration_file = calibration;
    query.profile = profile;
    for (const std::string& text : trip_counts) parse_trip_count(text, query);
    if (!line.empty()) {
      const size_t colon = line.rfind(':');
      const std::string number = colon == std::string::npos ? "" : line.substr(colon + 1);
      if (colon == 0 || number.empty() || number.size() > 9 ||
          number.find_first_not_of("0123456789") != std::string::npos || std::stoul(number) == 0)
        throw std::runtime_error(fmt::format("--line wants FILE:LINE, not '{}'", line));
      query.line_file = line.substr(0, colon);
      query.line = static_cast<uint32_t>(std::stoul(number));
    }
    const std::string text = render_loops(find_loops(query), format);
    std::fwrite(text.data(), 1, text.size(), stdout);
    return 0;
  }
};

}  // namespace

std::unique_ptr<Command> make_loops_command() { return std::make_unique<LoopsCommand>(); }

}  // namespace weft
