// `weft place`: maps a profile's threads onto a machine (findings), prints
// the mappings (views) or launches the program with each thread pinned as
// it is created, through the preload library of src/placement/launcher.
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/command.h"
#include "common/executable_search.h"
#include "findings/placement_findings.h"
#include "profile/profile.h"
#include "topology/topology.h"
#include "views/place_view.h"

namespace weft {
namespace {

namespace fs = std::filesystem;

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(fmt::format("cannot read the distance matrix '{}'", path));
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// libweft-place.so beside the weft build's (or installation's) lib/, or
// $WEFT_PLACE_LIB.
std::string launcher_library() {
  std::string path;
  if (const char* env = getenv("WEFT_PLACE_LIB"); env && *env) {
    path = env;
  } else {
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    path = (exe.parent_path() / ".." / "lib" / "libweft-place.so").lexically_normal().string();
  }
  if (access(path.c_str(), R_OK) != 0)
    throw std::runtime_error(fmt::format(
        "weft's launcher library is missing: {} (build weft, or set WEFT_PLACE_LIB)", path));
  return path;
}

struct PlaceCommand : Command {
  explicit PlaceCommand(std::vector<std::string>& program) : program(program) {}

  std::vector<std::string>& program;
  std::string profile, xml, synthetic, region, level_distances, distance_matrix;
  std::string algorithm = "hierarchical";
  bool with_rar = false, print_only = false, explain = false;
  OutputFormat format = OutputFormat::Table;
  CLI::Option* region_option = nullptr;

  CLI::App* add_to(CLI::App& app) override {
    CLI::App* c = app.add_subcommand(
        "place", "map a profile's threads onto the machine; print it, or run the program pinned");
    c->add_option("--profile", profile, "profile file")->required();
    c->add_option("--topology", xml, "an hwloc XML file instead of this machine");
    c->add_option("--synthetic", synthetic, "an hwloc synthetic description instead");
    c->add_option("--algorithm", algorithm, "greedy, hierarchical (default), packed or scatter")
        ->check(CLI::IsMember({"greedy", "hierarchical", "packed", "scatter"}));
    region_option = c->add_option("--region", region, "a region's communication instead");
    c->add_flag("--rar", with_rar, "map raw + rar (default: raw)");
    c->add_option("--level-distances", level_distances,
                  "distances by shared level, e.g. core=1,l2=2,l3=4,numa=8,package=16,machine=32");
    c->add_option("--distance-matrix", distance_matrix,
                  "CSV file: one row of distances per PU, in OS-index order");
    c->add_flag("--print", print_only, "print the mappings instead of running a program");
    c->add_flag("--explain", explain,
                "before running the program, print the mappings, their costs and the data "
                "placement (the --print table) on stderr");
    add_choice(
        c, "--format", format,
        {{"table", OutputFormat::Table}, {"csv", OutputFormat::Csv}, {"json", OutputFormat::Json}},
        "output format of --print");
    return c;
  }

  int run() override {
    if (!xml.empty() && !synthetic.empty())
      throw std::runtime_error("--topology and --synthetic exclude each other");
    if (!print_only && program.empty())
      throw std::runtime_error("nothing to run: give `-- PROGRAM ARGS`, or --print");
    if (print_only && !program.empty())
      throw std::runtime_error("--print runs nothing: drop `-- PROGRAM ARGS` or --print");
    const Topology topology = !xml.empty()         ? Topology::from_xml(xml)
                              : !synthetic.empty() ? Topology::synthetic(synthetic)
                                                   : Topology::this_machine();
    LevelDistances weights;
    if (!level_distances.empty()) weights = parse_level_distances(level_distances);
    PuDistances machine = topology.pu_distances(weights);
    if (!distance_matrix.empty()) set_distance_matrix(machine, read_text(distance_matrix));
    PlacementOptions options;
    if (region_option->count() > 0) options.region = region;
    options.with_rar = with_rar;
    options.algorithm = *parse_mapping_algorithm(algorithm);
    const Profile opened = Profile::open(profile);
    const PlacementFindings findings = find_placement(opened, options, machine, topology.summary(),
                                                      weights, !distance_matrix.empty());
    if (!opened.complete())
      fmt::print(stderr, "weft: warning: {} is an INCOMPLETE profile ({})\n", opened.path(),
                 opened.meta_value("incomplete_reason"));
    if (print_only) {
      const std::string text = render_placement(findings, format);
      std::fwrite(text.data(), 1, text.size(), stdout);
      return 0;
    }
    if (explain) {  // stderr: the program's own output stays on stdout
      const std::string text = render_placement(findings, OutputFormat::Table);
      std::fwrite(text.data(), 1, text.size(), stderr);
    }
    return launch(findings, opened);
  }

  // Replaces weft by the program, each thread pinned at creation.
  int launch(const PlacementFindings& findings, const Profile& opened) {
    const std::string library = launcher_library();
    const std::string cpus = placement_cpu_list(findings);
    const char* preload = getenv("LD_PRELOAD");
    const std::string preloads =
        preload && *preload ? library + ":" + std::string(preload) : library;
    setenv("LD_PRELOAD", preloads.c_str(), 1);
    setenv("WEFT_PLACE_CPUS", cpus.c_str(), 1);
    // The start routines the profiled threads had, for the shim's check
    // that this run creates the same threads in the same order.
    const std::string routines = fmt::format(
        "{}", fmt::join(planned_start_routines(opened, find_executable(program[0])), ";"));
    setenv("WEFT_PLACE_ROUTINES", routines.c_str(), 1);
    // The OpenMP runtimes would bind their threads again: libgomp by these
    // variables, libomp by default, through a system call no preload sees,
    // unless its affinity is disabled (src/placement/launcher/README.md).
    for (const char* name : {"OMP_PROC_BIND", "OMP_PLACES", "GOMP_CPU_AFFINITY"}) unsetenv(name);
    setenv("KMP_AFFINITY", "disabled", 1);
    fmt::print(stderr, "weft place: {} mapping, threads in creation order on CPUs {}\n",
               mapping_algorithm_name(findings.chosen), cpus);
    std::fflush(stderr);
    std::vector<char*> argv;
    for (std::string& a : program) argv.push_back(a.data());
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    const int error = errno;
    throw CommandFailure(fmt::format("cannot run '{}': {}", program[0], std::strerror(error)),
                         error == ENOENT ? 127 : 126);
  }
};

}  // namespace

std::unique_ptr<Command> make_place_command(std::vector<std::string>& program_arguments) {
  return std::make_unique<PlaceCommand>(program_arguments);
}

}  // namespace weft
