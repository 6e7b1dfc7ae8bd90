// `weft loops BINARY`: the static performance of a binary's innermost loops
// (findings/loop_findings.h), rendered by views/loops_view.h. Needs no
// profile and no run: the binary is read as it is.
#include <fmt/format.h>

#include <cstdio>

#include "cli/command.h"
#include "findings/loop_findings.h"
#include "views/loops_view.h"

namespace weft {
namespace {

struct LoopsCommand : Command {
  std::string binary, function, line, cpu, calibration;
  uint32_t trip_count = 0;
  OutputFormat format = OutputFormat::Table;

  CLI::App* add_to(CLI::App& app) override {
    CLI::App* c = app.add_subcommand(
        "loops", "static performance of a binary's innermost loops (LLVM MCA, MAQAO's model)");
    c->add_option("binary", binary, "an executable or shared library")->required();
    c->add_option("--function", function, "only this function's loops");
    c->add_option("--line", line, "only the source loops that span FILE:LINE");
    c->add_option("--cpu", cpu, "the CPU model, any name LLVM 14 knows (default: this machine's)");
    c->add_option("--calibration", calibration,
                  "the calibration JSON of the L2/RAM estimates (default: this machine's, from "
                  "`weft calibrate`)");
    c->add_option("--trip-count", trip_count,
                  "iterations per entry of the loops (from a run): a nested loop's entries are "
                  "simulated overlapping inside its enclosing loop")
        ->check(CLI::Range(1u, 1u << 24));
    add_choice(c, "--format", format,
               {{"table", OutputFormat::Table}, {"json", OutputFormat::Json}}, "output format");
    return c;
  }

  int run() override {
    LoopQuery query;
    query.binary = binary;
    query.function = function;
    query.cpu = cpu;
    query.calibration_file = calibration;
    query.trip_count = trip_count;
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
