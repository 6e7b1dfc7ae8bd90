// weft's command line: one subcommand per view, plus `record` and `topo`.
// Every failure ends in one line on stderr and a non-zero exit.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "cli/record_command.h"
#include "common/analyses.h"
#include "profile/profile.h"
#include "topology/topology.h"
#include "views/comm_view.h"
#include "views/crd_view.h"
#include "views/diff_view.h"
#include "views/falseshare_view.h"
#include "views/imbalance_view.h"
#include "views/report_view.h"
#include "views/trace_view.h"

namespace {

// "comm, crd, imbalance, falseshare, traces"
std::string analysis_names() {
  std::string names;
  for (const weft::AnalysisDescriptor& d : weft::kAnalyses)
    names += (names.empty() ? "" : ", ") + std::string(d.name);
  return names;
}

void print(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (!text.empty() && text.back() != '\n') std::fputc('\n', stdout);
}

// The cache options of the locality views (crd, diff, report).
struct CacheArguments {
  std::string cache_size;
  std::string topology;
  CLI::Option* cache_size_option = nullptr;
  CLI::Option* topology_option = nullptr;

  void add_to(CLI::App* command) {
    cache_size_option = command->add_option(
        "--cache-size", cache_size, "cache size for the CRD cutoffs, in bytes (or 512K, 32M, 1G)");
    topology_option = command->add_option(
        "--topology", topology, "hwloc XML file whose last-level cache sets the CRD cutoffs");
  }
  // Given options only, even empty ones (which the view then refuses).
  weft::CacheOptions options() const {
    weft::CacheOptions cache;
    if (cache_size_option->count() > 0) cache.cache_size = cache_size;
    if (topology_option->count() > 0) cache.topology = topology;
    return cache;
  }
};

// Table output carries its own warning; CSV and JSON stay parseable, so the
// warning goes to stderr.
void warn_if_incomplete(const weft::Profile& profile, const std::string& format) {
  if (format == "table" || profile.complete()) return;
  fmt::print(stderr, "weft: warning: {} is an INCOMPLETE profile ({})\n", profile.path(),
             profile.meta_value("incomplete_reason"));
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
                  "comma-separated analyses (default: all; available: " +
                      std::string(analysis_names()) + ")")
      ->delimiter(',');
  // Each analysis' settings, as common/analyses.h declares them.
  std::map<std::string, std::string> setting_text;
  std::vector<std::pair<std::string, CLI::Option*>> setting_options;
  for (const weft::AnalysisDescriptor& d : weft::kAnalyses)
    for (const weft::AnalysisSetting& setting : d.settings) {
      const std::string key(setting.key);
      CLI::Option* option = rec->add_option(std::string(setting.option), setting_text[key],
                                            std::string(setting.help));
      if (!setting.default_value.empty()) option->default_str(std::string(setting.default_value));
      if (setting.type == weft::SettingType::ByteSize) option->transform(CLI::AsSizeValue(false));
      setting_options.emplace_back(key, option);
    }
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

  size_t top = 10;
  CacheArguments report_cache;
  auto* report_cmd = app.add_subcommand("report", "summary of a profile with ranked findings");
  report_cmd->add_option("profile", profile_path, "profile file")->required();
  report_cmd->add_option("--format", format, "table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  report_cmd->add_option("--top", top, "regions, pairs and suggestions' regions listed")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  report_cache.add_to(report_cmd);

  CacheArguments crd_cache;
  auto* crd_cmd = app.add_subcommand("crd", "communication reuse distance histograms per region");
  crd_cmd->add_option("profile", profile_path, "profile file")->required();
  crd_cmd->add_option("--region", region,
                      "region name, or a function with its loops (pooled first, then each)");
  crd_cmd->add_option("--format", format, "table, csv or json")
      ->check(CLI::IsMember({"table", "csv", "json"}))
      ->capture_default_str();
  crd_cache.add_to(crd_cmd);

  std::string profile_b_path;
  CacheArguments diff_cache;
  auto* diff_cmd =
      app.add_subcommand("diff", "region-by-region change of communication locality (A -> B)");
  diff_cmd->add_option("A", profile_path, "first profile (e.g. the smaller input)")->required();
  diff_cmd->add_option("B", profile_b_path, "second profile")->required();
  diff_cmd->add_option("--format", format, "table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  diff_cache.add_to(diff_cmd);

  std::string section, measure = "cycles";
  double cluster_threshold = 0.9;
  auto* imbalance_cmd = app.add_subcommand(
      "imbalance", "load imbalance per parallel section and its ranked causes at source lines");
  imbalance_cmd->add_option("profile", profile_path, "profile file")->required();
  imbalance_cmd->add_option("--section", section,
                            "one section: its name or the FILE:LINE of its closing barrier");
  imbalance_cmd->add_option("--format", format, "table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  imbalance_cmd
      ->add_option("--time", measure,
                   "busy time explained: cycles (modeled), "
                   "instructions or wall")
      ->check(CLI::IsMember({"cycles", "instructions", "wall"}))
      ->capture_default_str();
  imbalance_cmd
      ->add_option("--threshold", cluster_threshold,
                   "correlation at which event clustering stops merging")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  imbalance_cmd->add_option("--top", top, "causes listed per section")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();

  size_t falseshare_top = 20;
  auto* falseshare_cmd = app.add_subcommand(
      "falseshare", "cache lines threads share falsely, with their data, offsets, sites and a fix");
  falseshare_cmd->add_option("profile", profile_path, "profile file")->required();
  falseshare_cmd->add_option("--format", format, "table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  falseshare_cmd->add_option("--top", falseshare_top, "lines listed")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();

  std::string trace_pc, trace_line, trace_format = "text";
  int64_t trace_thread = -1;
  size_t trace_max_lines = 40;
  auto* trace_cmd = app.add_subcommand(
      "trace", "compressed memory traces (nested loops) per thread and instruction");
  trace_cmd->add_option("profile", profile_path, "profile file")->required();
  trace_cmd->add_option("--thread", trace_thread, "one thread's traces")
      ->check(CLI::NonNegativeNumber);
  trace_cmd->add_option("--pc", trace_pc, "one instruction (hex address)");
  trace_cmd->add_option("--line", trace_line, "the instructions of FILE:LINE");
  trace_cmd->add_option("--format", trace_format, "text or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  trace_cmd->add_option("--max-lines", trace_max_lines, "lines of loop form per trace (text)")
      ->check(CLI::PositiveNumber)
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
    if (*rec) {
      for (const auto& [key, option] : setting_options)
        if (option->count() > 0) record.settings[key] = setting_text[key];
      return weft::run_record(record);
    }
    if (*comm_cmd) {
      weft::CommOptions comm;
      if (!region.empty()) comm.region = region;
      comm.kind = *weft::parse_comm_kind(kind);
      print(weft::render_comm(weft::find_comm(weft::Profile::open(profile_path), comm),
                              *weft::parse_output_format(format)));
      return 0;
    }
    if (*report_cmd) {
      weft::ReportOptions report;
      report.top = top;
      report.cache = report_cache.options();
      print(weft::render_report(weft::find_report(weft::Profile::open(profile_path), report),
                                *weft::parse_output_format(format)));
      return 0;
    }
    if (*crd_cmd) {
      weft::CrdOptions crd;
      if (!region.empty()) crd.region = region;
      crd.cache = crd_cache.options();
      const weft::Profile profile = weft::Profile::open(profile_path);
      std::string text =
          weft::render_crd(weft::find_crd(profile, crd), *weft::parse_output_format(format));
      warn_if_incomplete(profile, format);
      print(text);
      return 0;
    }
    if (*diff_cmd) {
      weft::DiffOptions diff;
      diff.cache = diff_cache.options();
      const weft::Profile a = weft::Profile::open(profile_path);
      const weft::Profile b = weft::Profile::open(profile_b_path);
      std::string text =
          weft::render_diff(weft::find_diff(a, b, diff), *weft::parse_output_format(format));
      warn_if_incomplete(a, format);
      warn_if_incomplete(b, format);
      print(text);
      return 0;
    }
    if (*imbalance_cmd) {
      weft::ImbalanceOptions imbalance;
      if (!section.empty()) imbalance.section = section;
      imbalance.measure = *weft::parse_busy_measure(measure);
      imbalance.cluster_threshold = cluster_threshold;
      const weft::ImbalanceRenderOptions rendering{*weft::parse_output_format(format), top};
      const weft::Profile profile = weft::Profile::open(profile_path);
      std::string text =
          weft::render_imbalance(weft::find_imbalance(profile, imbalance), rendering);
      warn_if_incomplete(profile, format);
      print(text);
      return 0;
    }
    if (*falseshare_cmd) {
      weft::FalseShareRenderOptions falseshare;
      falseshare.format = *weft::parse_output_format(format);
      falseshare.top = falseshare_top;
      const weft::Profile profile = weft::Profile::open(profile_path);
      std::string text = weft::render_false_sharing(weft::find_false_sharing(profile), falseshare);
      warn_if_incomplete(profile, format);
      print(text);
      return 0;
    }
    if (*trace_cmd) {
      weft::TraceOptions trace;
      if (trace_thread >= 0) trace.thread = static_cast<uint32_t>(trace_thread);
      if (!trace_pc.empty()) {
        size_t used = 0;
        uint64_t pc = 0;
        try {
          pc = std::stoull(trace_pc, &used, 16);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used != trace_pc.size() || pc == 0)
          throw std::runtime_error("--pc '" + trace_pc + "' is not a hex address");
        trace.pc = pc;
      }
      if (!trace_line.empty()) trace.line = trace_line;
      const weft::TraceRenderOptions rendering{trace_format == "json", trace_max_lines};
      const weft::Profile profile = weft::Profile::open(profile_path);
      std::string text = weft::render_traces(weft::find_traces(profile, trace), rendering);
      warn_if_incomplete(profile, rendering.json ? "json" : "table");
      print(text);
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
