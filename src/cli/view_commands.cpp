// The subcommands that read profiles. Each one is a small struct: its
// options, and how it asks findings and renders them; opening the
// profiles, warning about incomplete ones and printing are shared
// (show()), so every view behaves the same.
#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <stdexcept>

#include "cli/command.h"
#include "cli/progress.h"
#include "findings/profile_facts.h"
#include "profile/profile.h"
#include "topology/machine_caches.h"
#include "topology/topology.h"
#include "views/comm_view.h"
#include "views/crd_view.h"
#include "views/diff_view.h"
#include "views/falseshare_view.h"
#include "views/html_report_view.h"
#include "views/imbalance_view.h"
#include "views/perfetto_view.h"
#include "views/report_view.h"
#include "views/trace_view.h"

namespace weft {
namespace {

void print(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (!text.empty() && text.back() != '\n') std::fputc('\n', stdout);
}

// The sampling notes a view's table carries (findings/profile_facts.h):
// the CRD's sample, the sample of section instances, or both.
enum SamplingNotes : unsigned { kCrdNote = 1u << 0, kInstanceNote = 1u << 1 };

// Opens each profile, computes and renders, warns about every incomplete
// profile, prints. Tables carry the warning and the sampling notes in their
// text; CSV and JSON must stay parseable, so for them these go to stderr:
// the notes the view's table would show (`notes`).
int show(const std::vector<std::string>& paths, OutputFormat format, unsigned notes,
         const std::function<std::string(const std::vector<Profile>&)>& find_and_render) {
  std::vector<Profile> profiles;
  for (const std::string& path : paths) profiles.push_back(Profile::open(path));
  const std::string text = find_and_render(profiles);
  if (format != OutputFormat::Table)
    for (const Profile& profile : profiles) {
      if (!profile.complete())
        fmt::print(stderr, "weft: warning: {} is an INCOMPLETE profile ({})\n", profile.path(),
                   profile.meta_value("incomplete_reason"));
      const ProfileFacts facts = profile_facts(profile);
      for (const std::string& note :
           {notes & kCrdNote ? crd_sampling_note(facts) : std::string(),
            notes & kInstanceNote ? instance_sampling_note(facts) : std::string()})
        if (!note.empty()) fmt::print(stderr, "weft: note: {}: {}\n", profile.path(), note);
    }
  print(text);
  return 0;
}

// Writes `text` to `path` (through a temporary file beside it, renamed:
// a failed write leaves the previous file as it was).
void write_file(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot write " + path);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.close();
    if (!out) throw std::runtime_error("cannot write " + path);
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) {
    std::filesystem::remove(temporary, error);
    throw std::runtime_error("cannot write " + path);
  }
}

// Opens one profile, warns when it is incomplete (stderr), and writes what
// `make` renders from it to `out`; prints the path written.
int write_from_profile(const std::string& path, const std::string& out,
                       const std::function<std::string(const Profile&)>& make) {
  const Profile profile = Profile::open(path);
  const std::string text = make(profile);
  if (!profile.complete())
    fmt::print(stderr, "weft: warning: {} is an INCOMPLETE profile ({})\n", profile.path(),
               profile.meta_value("incomplete_reason"));
  write_file(out, text);
  fmt::print("wrote {} ({} bytes)\n", out, text.size());
  return 0;
}

using Formats = std::vector<std::pair<std::string, OutputFormat>>;
const Formats kTableJson = {{"table", OutputFormat::Table}, {"json", OutputFormat::Json}};
const Formats kTableCsvJson = {
    {"table", OutputFormat::Table}, {"csv", OutputFormat::Csv}, {"json", OutputFormat::Json}};

CLI::App* add_view(CLI::App& app, const std::string& name, const std::string& help,
                   std::string& profile, OutputFormat& format, const Formats& formats) {
  CLI::App* view = app.add_subcommand(name, help);
  view->add_option("profile", profile, "profile file")->required();
  add_choice(view, "--format", format, formats, "output format");
  return view;
}

// --quiet of the views that show progress on a terminal (cli/progress.h).
void add_quiet(CLI::App* command, bool& quiet) {
  command->add_flag("-q,--quiet", quiet, "no progress line (it is shown only on a terminal)");
}

// A name given on the command line, or none (an empty one is refused by
// the findings, not taken as none).
std::optional<std::string> given(const CLI::Option* option, const std::string& value) {
  return option->count() > 0 ? std::optional<std::string>(value) : std::nullopt;
}

// The cache options of the locality views (crd, diff, report).
struct CacheArguments {
  uint64_t cache_size = 0;
  std::string topology;
  CLI::Option* cache_size_option = nullptr;
  CLI::Option* topology_option = nullptr;

  void add_to(CLI::App* command) {
    cache_size_option = as_size(command->add_option(
        "--cache-size", cache_size, "cache size for the CRD cutoffs, in bytes (or 512K, 32M, 1G)"));
    topology_option = command->add_option(
        "--topology", topology, "hwloc XML file whose last-level cache sets the CRD cutoffs");
  }
  CacheOptions options() const {
    CacheOptions cache;
    if (cache_size_option->count() > 0) cache.cache_size = cache_size;
    cache.topology = given(topology_option, topology);
    return cache;
  }
};

struct CommCommand : Command {
  std::string profile, region;
  CommOptions options;
  OutputFormat format = OutputFormat::Table;
  CLI::Option* region_option = nullptr;

  CLI::App* add_to(CLI::App& app) override {
    CLI::App* c = add_view(app, "comm", "communication matrices of a region or the program",
                           profile, format, kTableCsvJson);
    region_option = c->add_option("--region", region, "region name, or a function with its loops");
    add_choice(c, "--kind", options.kind,
               {{"raw", CommKind::Raw},
                {"rar", CommKind::Rar},
                {"inval", CommKind::Inval},
                {"crr", CommKind::Crr}},
               "matrix: raw, rar, inval or crr");
    return c;
  }
  int run() override {
    options.region = given(region_option, region);
    return show({profile}, format, kCrdNote, [&](const std::vector<Profile>& p) {
      return render_comm(find_comm(p[0], options), format);
    });
  }
};

struct ReportCommand : Command {
  std::string profile, html, synthetic;
  bool quiet = false;
  ReportOptions options;
  CacheArguments cache;
  OutputFormat format = OutputFormat::Table;
  CLI::Option* format_option = nullptr;

  CLI::App* add_to(CLI::App& app) override {
    CLI::App* c = add_view(app, "report", "summary of a profile with ranked findings", profile,
                           format, kTableJson);
    c->add_option("--top", options.top, "regions, pairs and suggestions' regions listed")
        ->transform(whole_number(1))
        ->capture_default_str();
    c->add_option("--cpu", options.cpu,
                  "CPU model of the hot loops' static analysis (an LLVM 19 -mcpu name; default: "
                  "this machine's)");
    c->add_option("--binary", options.binary,
                  "a build of the profiled program without weft-cc, for the hot loops' static "
                  "analysis");
    c->add_option("--calibration", options.calibration,
                  "the calibration of the hot loops' L2/RAM estimates (a file of weft calibrate; "
                  "default: this machine's)");
    cache.add_to(c);
    c->add_option("--html", html,
                  "write the report as one self-contained HTML page to this file instead");
    c->add_option("--synthetic", synthetic,
                  "with --html: an hwloc synthetic machine for the placement payoff (--topology "
                  "XML serves too)");
    format_option = c->get_option("--format");
    add_quiet(c, quiet);
    return c;
  }
  int run() override {
    options.cache = cache.options();
    Progress progress(quiet);
    if (html.empty()) {
      if (!synthetic.empty()) throw std::runtime_error("--synthetic goes with --html");
      return show({profile}, format, kCrdNote | kInstanceNote, [&](const std::vector<Profile>& p) {
        progress.stage("finding");
        const ReportFindings findings = find_report(p[0], options);
        progress.clear();
        return render_report(findings, format);
      });
    }
    if (format_option->count() > 0)
      throw std::runtime_error("--html and --format exclude each other");
    if (!synthetic.empty() && cache.topology_option->count() > 0)
      throw std::runtime_error("--topology and --synthetic exclude each other");
    return write_from_profile(profile, html, [&](const Profile& p) {
      progress.stage("finding");
      HtmlReportFindings findings = find_html_report(p, options);
      if (!synthetic.empty() || cache.topology_option->count() > 0) {
        const Topology topology = !synthetic.empty() ? Topology::synthetic(synthetic)
                                                     : Topology::from_xml(cache.topology);
        findings.placement = find_placement(p, PlacementOptions{}, topology.pu_distances(),
                                            topology.summary(), LevelDistances{}, false);
      }
      progress.stage("rendering");
      std::string page = render_html_report(findings);
      progress.clear();
      return page;
    });
  }
};

struct CrdCommand : Command {
  std::string profile, region;
  CrdOptions options;
  CacheArguments cache;
  OutputFormat format = OutputFormat::Table;
  CLI::Option* region_option = nullptr;

  CLI::App* add_to(CLI::App& app) override {
    CLI::App* c = add_view(app, "crd", "communication reuse distance histograms per region",
                           profile, format, kTableCsvJson);
    region_option = c->add_option(
        "--region", region, "region name, or a function with its loops (pooled first, then each)");
    cache.add_to(c);
    return c;
  }
  int run() override {
    options.region = given(region_option, region);
    options.cache = cache.options();
    return show({profile}, format, kCrdNote, [&](const std::vector<Profile>& p) {
      return render_crd(find_crd(p[0], options), format);
    });
  }
};

struct DiffCommand : Command {
  std::string a, b;
  DiffOptions options;
  CacheArguments cache;
  OutputFormat format = OutputFormat::Table;

  CLI::App* add_to(CLI::App& app) override {
    CLI::App* c =
        app.add_subcommand("diff", "region-by-region change of communication locality (A -> B)");
    c->add_option("A", a, "first profile (e.g. the smaller input)")->required();
    c->add_option("B", b, "second profile")->required();
    add_choice(c, "--format", format, kTableJson, "output format");
    cache.add_to(c);
    return c;
  }
  int run() override {
    options.cache = cache.options();
    return show({a, b}, format, kCrdNote, [&](const std::vector<Profile>& p) {
      return render_diff(find_diff(p[0], p[1], options), format);
    });
  }
};

struct ImbalanceCommand : Command {
  std::string profile, section;
  bool quiet = false;
  ImbalanceOptions options;
  ImbalanceRenderOptions rendering;
  CLI::Option* section_option = nullptr;

  CLI::App* add_to(CLI::App& app) override {
    CLI::App* c =
        add_view(app, "imbalance",
                 "load imbalance per parallel section and its ranked causes at source lines",
                 profile, rendering.format, kTableJson);
    section_option = c->add_option("--section", section,
                                   "one section: its name or the FILE:LINE of its closing barrier");
    add_choice(c, "--time", options.measure,
               {{"cycles", BusyMeasure::ModeledCycles},
                {"instructions", BusyMeasure::Instructions},
                {"wall", BusyMeasure::Wall}},
               "busy time explained: cycles (modeled), instructions or wall");
    c->add_option("--threshold", options.cluster_threshold,
                  "correlation at which event clustering stops merging")
        ->check(decimal_number(0.0, 1.0))
        ->capture_default_str();
    c->add_option("--top", rendering.top, "causes listed per section")
        ->transform(whole_number(1))
        ->capture_default_str();
    add_quiet(c, quiet);
    return c;
  }
  int run() override {
    options.section = given(section_option, section);
    Progress progress(quiet);
    return show({profile}, rendering.format, kInstanceNote, [&](const std::vector<Profile>& p) {
      progress.stage("diagnosing the sections");
      const ImbalanceFindings findings = find_imbalance(p[0], options);
      progress.clear();
      return render_imbalance(findings, rendering);
    });
  }
};

struct FalseShareCommand : Command {
  std::string profile;
  FalseSharingOptions options;
  FalseShareRenderOptions rendering;

  CLI::App* add_to(CLI::App& app) override {
    CLI::App* c = add_view(app, "falseshare",
                           "data threads share at a cost (false sharing, unsynchronised writes) by "
                           "object and source line, with offsets, sites and a fix",
                           profile, rendering.format, kTableJson);
    c->add_option("--top", rendering.top, "items listed")
        ->transform(whole_number(1))
        ->capture_default_str();
    c->add_option("--min-events", options.min_events,
                  "false-sharing items with fewer transfers are only counted")
        ->transform(whole_number(0))
        ->capture_default_str();
    return c;
  }
  int run() override {
    return show({profile}, rendering.format, kInstanceNote, [&](const std::vector<Profile>& p) {
      return render_false_sharing(find_false_sharing(p[0], options), rendering);
    });
  }
};

// "401a2f" or "0x401a2f"; a one-line error otherwise.
uint64_t hex_address(const std::string& text) {
  const std::string_view digits =
      text.starts_with("0x") || text.starts_with("0X") ? std::string_view(text).substr(2) : text;
  uint64_t pc = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), pc, 16);
  if (error != std::errc() || end != digits.data() + digits.size() || pc == 0)
    throw std::runtime_error("--pc '" + text + "' is not a hex address");
  return pc;
}

struct TraceCommand : Command {
  std::string profile, pc, line;
  int64_t thread = -1;
  TraceRenderOptions rendering;
  OutputFormat format = OutputFormat::Table;

  CLI::App* add_to(CLI::App& app) override {
    CLI::App* c = app.add_subcommand(
        "trace", "compressed memory traces (nested loops) per thread and instruction");
    c->add_option("profile", profile, "profile file")->required();
    c->add_option("--thread", thread, "one thread's traces")->transform(whole_number(0, INT64_MAX));
    c->add_option("--pc", pc, "one instruction (hex address)");
    c->add_option("--line", line, "the instructions of FILE:LINE");
    add_choice(c, "--format", format, {{"text", OutputFormat::Table}, {"json", OutputFormat::Json}},
               "output format");
    c->add_option("--max-lines", rendering.max_lines, "lines of loop form per trace (text)")
        ->transform(whole_number(1))
        ->capture_default_str();
    return c;
  }
  int run() override {
    TraceOptions options;
    if (thread >= 0) options.thread = static_cast<uint32_t>(thread);
    if (!pc.empty()) options.pc = hex_address(pc);
    if (!line.empty()) options.line = line;
    rendering.json = format == OutputFormat::Json;
    return show({profile}, format, kInstanceNote, [&](const std::vector<Profile>& p) {
      return render_traces(find_traces(p[0], options), rendering);
    });
  }
};

struct ExportCommand : Command {
  std::string profile, perfetto;
  bool quiet = false;

  CLI::App* add_to(CLI::App& app) override {
    CLI::App* c = app.add_subcommand(
        "export", "the run's per-thread timeline for other tools (Perfetto, chrome://tracing)");
    c->add_option("profile", profile, "profile file")->required();
    c->add_option("--perfetto", perfetto, "write Chrome trace-event JSON to this file")->required();
    add_quiet(c, quiet);
    return c;
  }
  int run() override {
    Progress progress(quiet);
    return write_from_profile(profile, perfetto, [&](const Profile& p) {
      progress.stage("reading the timeline");
      const TimelineFindings timeline = find_timeline(p);
      progress.stage("rendering");
      std::string json = render_perfetto(timeline);
      progress.clear();
      return json;
    });
  }
};

// What `weft place` measures placements with: how many PU pairs share
// each level, and the matrix of levels on small machines.
std::string pu_distance_text(const PuDistances& m) {
  std::array<size_t, kSharedLevels> pairs{};
  for (size_t i = 0; i < m.size(); ++i)
    for (size_t j = i + 1; j < m.size(); ++j) ++pairs[static_cast<size_t>(m.level(i, j))];
  std::vector<std::string> counts;
  for (size_t l = 1; l < kSharedLevels; ++l)
    if (pairs[l] > 0)
      counts.push_back(fmt::format("{} {} (distance {:g})", pairs[l],
                                   shared_level_name(static_cast<SharedLevel>(l)),
                                   LevelDistances{}.of[l]));
  std::string text =
      "PU pairs by the deepest level they share (weft place): " +
      (counts.empty() ? std::string("none") : fmt::format("{}", fmt::join(counts, ", ")));
  if (m.size() > 1 && m.size() <= 16) {
    text += "\nlevel shared, PU by PU (OS indices):\n     ";
    for (unsigned os : m.os_index) text += fmt::format(" {:>7}", os);
    for (size_t i = 0; i < m.size(); ++i) {
      text += fmt::format("\n  {:>3}", m.os_index[i]);
      for (size_t j = 0; j < m.size(); ++j)
        text += fmt::format(" {:>7}", i == j ? "-" : shared_level_name(m.level(i, j)));
    }
  }
  return text;
}

struct TopoCommand : Command {
  std::string xml, synthetic;

  CLI::App* add_to(CLI::App& app) override {
    CLI::App* c = app.add_subcommand("topo", "the machine's topology as weft sees it");
    c->add_option("--topology", xml, "an hwloc XML file instead of this machine");
    c->add_option("--synthetic", synthetic, "an hwloc synthetic description");
    return c;
  }
  int run() override {
    const Topology t = !xml.empty()         ? Topology::from_xml(xml)
                       : !synthetic.empty() ? Topology::synthetic(synthetic)
                                            : Topology::this_machine();
    print(t.summary());
    // What `weft record` would model (docs/metrics.md, "The recorded cache").
    const MachineCaches caches =
        !xml.empty() || !synthetic.empty()
            ? choose_caches({}, caches_from_topology(t), {}, std::max(1u, t.cores()))
            : this_machine_caches();
    print("caches weft models: " + caches.summary());
    for (const std::string& warning : caches.warnings) print("  " + warning);
    print(pu_distance_text(t.pu_distances()));
    return 0;
  }
};

}  // namespace

std::vector<std::unique_ptr<Command>> make_view_commands() {
  std::vector<std::unique_ptr<Command>> commands;
  commands.push_back(std::make_unique<CommCommand>());
  commands.push_back(std::make_unique<ReportCommand>());
  commands.push_back(std::make_unique<CrdCommand>());
  commands.push_back(std::make_unique<DiffCommand>());
  commands.push_back(std::make_unique<ImbalanceCommand>());
  commands.push_back(std::make_unique<FalseShareCommand>());
  commands.push_back(std::make_unique<TraceCommand>());
  commands.push_back(std::make_unique<TopoCommand>());
  commands.push_back(std::make_unique<ExportCommand>());
  return commands;
}

}  // namespace weft
