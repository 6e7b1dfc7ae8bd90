// weft's command line: `record`, one subcommand per view, and `topo`
// (record_command.cpp, view_commands.cpp). Every failure ends in one line on
// stderr and exit status 1; `record` otherwise returns the program's own
// status (docs/commands.md).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "cli/command.h"

namespace {

// The command line up to the first `--` after `record` or `place`, for
// CLI11; what follows it belongs to the program, whatever it looks like.
std::vector<std::string> weft_arguments(int argc, char** argv,
                                        std::vector<std::string>& program_arguments) {
  std::vector<std::string> args(argv + 1, argv + argc);
  auto subcommand = std::find_if(args.begin(), args.end(),
                                 [](const std::string& a) { return !a.starts_with("-"); });
  if (subcommand == args.end() || (*subcommand != "record" && *subcommand != "place")) return args;
  auto record = subcommand;
  auto separator = std::find(record, args.end(), "--");
  if (separator == args.end()) return args;
  program_arguments.assign(separator + 1, args.end());
  args.erase(separator, args.end());
  return args;
}

// CLI11's message on one line.
std::string one_line(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"weft: why threads are slow together"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(WEFT_VERSION));

  std::vector<std::string> program_arguments;
  std::vector<std::unique_ptr<weft::Command>> commands;
  commands.push_back(weft::make_record_command(program_arguments));
  commands.push_back(weft::make_place_command(program_arguments));
  commands.push_back(weft::make_loops_command());
  commands.push_back(weft::make_calibrate_command());
  commands.push_back(weft::make_predict_command());
  for (auto& view : weft::make_view_commands()) commands.push_back(std::move(view));
  std::vector<CLI::App*> subcommands;
  for (auto& command : commands) subcommands.push_back(command->add_to(app));

  std::vector<std::string> args = weft_arguments(argc, argv, program_arguments);
  std::reverse(args.begin(), args.end());  // CLI11 takes them last first
  try {
    app.parse(args);
  } catch (const CLI::Success& e) {  // --help, --version
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "weft: {}\n", one_line(e.what()));
    for (size_t i = 0; i < commands.size(); ++i)
      if (subcommands[i]->parsed()) return commands[i]->failure_code();
    return 1;
  }

  for (size_t i = 0; i < commands.size(); ++i) {
    if (!subcommands[i]->parsed()) continue;
    try {
      return commands[i]->run();
    } catch (const weft::CommandFailure& e) {
      fmt::print(stderr, "weft: {}\n", one_line(e.what()));
      return e.code;
    } catch (const std::exception& e) {
      fmt::print(stderr, "weft: {}\n", one_line(e.what()));
      return commands[i]->failure_code();
    }
  }
  return 1;
}
