// `weft calibrate [--force]`: the machine's bandwidths and latencies per
// memory level, measured once by weft's micro-benchmarks and kept in weft's
// cache directory for `weft loops`' L2 and RAM estimates
// (calibration/machine_calibration.h, views/calibration_view.h).
#include <cstdio>

#include "calibration/machine_calibration.h"
#include "cli/command.h"
#include "views/calibration_view.h"

namespace weft {
namespace {

struct CalibrateCommand : Command {
  bool force = false;
  OutputFormat format = OutputFormat::Table;

  CLI::App* add_to(CLI::App& app) override {
    CLI::App* c = app.add_subcommand(
        "calibrate", "the machine's bandwidths and latencies per memory level, for `loops`");
    c->add_flag("--force", force, "measure again even when a calibration of this machine is kept");
    add_choice(c, "--format", format,
               {{"table", OutputFormat::Table}, {"json", OutputFormat::Json}}, "output format");
    return c;
  }

  int run() override {
    CalibrationResult result;
    try {
      result = calibrate_this_machine(force);
    } catch (const CalibrationError& error) {
      throw std::runtime_error(error.what());
    }
    const std::string text = render_calibration(result, format);
    std::fwrite(text.data(), 1, text.size(), stdout);
    return 0;
  }
};

}  // namespace

std::unique_ptr<Command> make_calibrate_command() { return std::make_unique<CalibrateCommand>(); }

}  // namespace weft
