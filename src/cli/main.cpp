// weft's command line: one subcommand per view, plus `record` and `topo`.
// Every failure ends in one line on stderr and a non-zero exit.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <optional>

#include "cli/record_command.h"
#include "profile/profile.h"
#include "topology/topology.h"
#include "views/comm_view.h"
#include "views/report_view.h"

namespace {

void print(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (!text.empty() && text.back() != '\n') std::fputc('\n', stdout);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"weft: why threads are slow together"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(WEFT_VERSION));

  weft::RecordOptions record;
  auto* rec = app.add_subcommand("record", "run a program and write its profile");
  rec->add_option("-o,--output", record.output, "profile file")->capture_default_str();
  rec->add_option("--backend", record.backend, "event source: compile or valgrind")
      ->capture_default_str();
  rec->add_option("--granularity", record.granularity, "bytes per granule (power of two, 1..4096)")
      ->capture_default_str();
  rec->add_option("--max-threads", record.max_threads, "threads analyzed at most")
      ->capture_default_str();
  rec->add_option("--analyses", record.analyses,
                  "comma-separated analyses (default: all; available: comm)")
      ->delimiter(',');
  rec->add_option("command", record.command, "PROGRAM ARGS (after --)")->required();

  std::string profile_path;
  std::string region, kind = "raw", format = "table";
  auto* comm_cmd = app.add_subcommand("comm", "communication matrices of a region or the program");
  comm_cmd->add_option("profile", profile_path, "profile file")->required();
  comm_cmd->add_option("--region", region, "region name, or a function with its loops");
  comm_cmd->add_option("--kind", kind, "raw, rar, inval or crr")
      ->check(CLI::IsMember({"raw", "rar", "inval", "crr"}))
      ->capture_default_str();
  comm_cmd->add_option("--format", format, "table, csv or json")
      ->check(CLI::IsMember({"table", "csv", "json"}))
      ->capture_default_str();

  auto* report_cmd = app.add_subcommand("report", "summary of a profile with ranked findings");
  report_cmd->add_option("profile", profile_path, "profile file")->required();
  report_cmd->add_option("--format", format, "table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();

  std::string xml, synthetic;
  auto* topo_cmd = app.add_subcommand("topo", "the machine's topology as weft sees it");
  topo_cmd->add_option("--topology", xml, "an hwloc XML file instead of this machine");
  topo_cmd->add_option("--synthetic", synthetic, "an hwloc synthetic description");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  try {
    if (*rec) return weft::run_record(record);
    if (*comm_cmd) {
      weft::CommOptions comm;
      if (!region.empty()) comm.region = region;
      comm.kind = *weft::parse_comm_kind(kind);
      comm.format = *weft::parse_output_format(format);
      print(weft::render_comm(weft::Profile::open(profile_path), comm));
      return 0;
    }
    if (*report_cmd) {
      weft::ReportOptions report;
      report.format = *weft::parse_output_format(format);
      print(weft::render_report(weft::Profile::open(profile_path), report));
      return 0;
    }
    if (*topo_cmd) {
      const weft::Topology t = !xml.empty()         ? weft::Topology::from_xml(xml)
                               : !synthetic.empty() ? weft::Topology::synthetic(synthetic)
                                                    : weft::Topology::this_machine();
      print(t.summary());
      return 0;
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "weft: {}\n", e.what());
    return 1;
  }
  return 0;
}
