#include "cli/record_command.h"

#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <stdexcept>

#include "common/byte_size.h"
#include "common/executable_search.h"
#include "profile/profile_writer.h"
#include "sources/compile/raw_capture_format.h"
#include "sources/valgrind/valgrind_backend.h"
#include "topology/topology.h"

extern char** environ;

namespace weft {

namespace {

const char* const kKnownAnalyses[] = {kAnalysisCommunication, kAnalysisCrd, kAnalysisImbalance,
                                      kAnalysisFalseSharing, kAnalysisTraces};

bool analysis_selected(const RecordOptions& o, const char* name) {
  return o.analyses.empty() ||
         std::find(o.analyses.begin(), o.analyses.end(), name) != o.analyses.end();
}

// --cache's SIZE (parse_byte_size: 32K, 8M, 8MiB) or WAYS (a plain number).
uint64_t cache_number(const std::string& text, bool size) {
  const bool plain = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
  const std::optional<uint64_t> value = size || plain ? parse_byte_size(text) : std::nullopt;
  if (!value)
    throw std::runtime_error(fmt::format("--cache: '{}' is not a {}", text,
                                         size ? "size (e.g. 32K, 8M)" : "number of ways"));
  return *value;
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t end; (end = text.find(sep, start)) != std::string::npos; start = end + 1)
    parts.push_back(text.substr(start, end - start));
  parts.push_back(text.substr(start));
  return parts;
}

// The simulated caches: --cache when given, else this machine's L1, L2 and
// last level from hwloc; a level hwloc does not report (or reports without
// associativity) gets a common default (32K:8, 256K:8, 8M:16).
CacheGeometry cache_geometry(const std::string& option) {
  CacheGeometry g;
  if (!option.empty()) {
    const std::vector<std::string> levels = split(option, ',');
    if (levels.size() != 3)
      throw std::runtime_error(fmt::format(
          "--cache '{}': expected three levels L1SIZE:WAYS,L2SIZE:WAYS,LLCSIZE:WAYS", option));
    for (size_t i = 0; i < 3; ++i) {
      const std::vector<std::string> size_ways = split(levels[i], ':');
      if (size_ways.size() != 2)
        throw std::runtime_error(fmt::format("--cache: '{}' is not SIZE:WAYS", levels[i]));
      g.levels[i].size_bytes = cache_number(size_ways[0], true);
      g.levels[i].ways = static_cast<uint32_t>(cache_number(size_ways[1], false));
      if (g.levels[i].ways == 0 || g.levels[i].size_bytes < g.line_bytes * g.levels[i].ways)
        throw std::runtime_error(
            fmt::format("--cache: level '{}' holds less than one set of lines", levels[i]));
    }
    return g;
  }
  try {
    const Topology& topology = Topology::this_machine();
    const CacheLevel found[3] = {topology.cache(1), topology.cache(2), topology.last_level_cache()};
    if (found[0].line_bytes != 0 && (found[0].line_bytes & (found[0].line_bytes - 1)) == 0)
      g.line_bytes = found[0].line_bytes;
    for (int i = 0; i < 3; ++i)
      if (found[i].size_bytes != 0 && found[i].associativity != 0 &&
          (i < 2 || found[i].depth > 2)) {
        g.levels[i].size_bytes = found[i].size_bytes;
        g.levels[i].ways = found[i].associativity;
      }
  } catch (const std::exception&) {
    // no topology: the defaults
  }
  return g;
}

std::array<double, 3> miss_penalties(const std::string& option) {
  if (auto penalties = parse_miss_penalties(option)) return *penalties;
  throw std::runtime_error(fmt::format(
      "--miss-penalties '{}': expected three non-negative cycle counts P1,P2,P3", option));
}

pid_t g_child = 0;

void forward_to_child(int sig) {
  if (g_child > 0) kill(g_child, sig);
}

// The program as execvp would find it, or an error naming it.
std::string resolve_program(const std::string& name) {
  std::string found = find_executable(name);
  if (!found.empty()) return found;
  throw std::runtime_error(fmt::format("cannot run '{}': no such executable file", name));
}

std::string signal_name(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? fmt::format("SIG{}", abbrev) : fmt::format("signal {}", sig);
}

std::string this_hostname() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

std::string topology_summary() {
  try {
    return Topology::this_machine().summary();
  } catch (const std::exception& e) {
    return std::string("unknown (") + e.what() + ")";
  }
}

void validate(const RecordOptions& o) {
  if (o.command.empty())
    throw std::runtime_error("no program given (usage: weft record [options] -- PROGRAM ARGS)");
  if (o.backend != "compile" && o.backend != "valgrind")
    throw std::runtime_error(
        fmt::format("unknown backend '{}' (expected compile or valgrind)", o.backend));
  if (o.granularity < 1 || o.granularity > 4096 || (o.granularity & (o.granularity - 1)))
    throw std::runtime_error(
        fmt::format("--granularity {} is not a power of two between 1 and 4096", o.granularity));
  if (o.max_threads < 1 || o.max_threads > 65534)
    throw std::runtime_error(fmt::format("--max-threads {} is outside 1..65534", o.max_threads));
  for (const std::string& a : o.analyses) {
    bool known = false;
    for (const char* k : kKnownAnalyses) known = known || a == k;
    if (!known)
      throw std::runtime_error(
          fmt::format("unknown analysis '{}' (available: comm, crd, imbalance, falseshare, "
                      "traces)",
                      a));
  }
  if (o.line_size < 8 || o.line_size > 4096 || (o.line_size & (o.line_size - 1)))
    throw std::runtime_error(
        fmt::format("--line-size {} is not a power of two between 8 and 4096", o.line_size));
  if (!parse_byte_size(o.trace_budget) || *parse_byte_size(o.trace_budget) < 4096)
    throw std::runtime_error(
        fmt::format("--trace-budget '{}' is not a size of at least 4K", o.trace_budget));
}

// Runs a program built with weft's compiler wrappers: its runtime reads
// these variables and writes the raw capture itself.
int run_with_runtime(const RecordOptions& options, const CacheGeometry& cache,
                     const std::string& program, const std::string& capture_path,
                     const std::function<void(pid_t)>& started) {
  const pid_t child = fork();
  if (child < 0) throw std::runtime_error("cannot start the program: fork failed");
  if (child == 0) {
    setenv("WEFT_CAPTURE", capture_path.c_str(), 1);
    setenv("WEFT_GRANULARITY", std::to_string(options.granularity).c_str(), 1);
    setenv("WEFT_MAX_THREADS", std::to_string(options.max_threads).c_str(), 1);
    setenv("WEFT_CRD_MAX_GRANULES", std::to_string(options.crd_max_granules).c_str(), 1);
    setenv("WEFT_CACHE_LEVELS", format_cache_levels(cache).c_str(), 1);
    setenv("WEFT_LINE_SIZE", std::to_string(options.line_size).c_str(), 1);
    setenv("WEFT_TRACE_BYTES_PER_THREAD",
           std::to_string(*parse_byte_size(options.trace_budget)).c_str(), 1);
    if (options.analyses.empty()) {
      unsetenv("WEFT_ANALYSES");
    } else {
      std::string list;
      for (const std::string& a : options.analyses) list += (list.empty() ? "" : ",") + a;
      setenv("WEFT_ANALYSES", list.c_str(), 1);
    }
    std::vector<char*> argv;
    for (const std::string& a : options.command) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(program.c_str(), argv.data());
    fmt::print(stderr, "weft: cannot run '{}': {}\n", program, strerror(errno));
    _exit(127);
  }
  started(child);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

}  // namespace

int run_record(const RecordOptions& options) {
  validate(options);
  const CacheGeometry cache = cache_geometry(options.cache);
  const std::array<double, 3> penalties = miss_penalties(options.miss_penalties);
  const std::string program = resolve_program(options.command.front());
  ValgrindSetup valgrind;
  if (options.backend == "valgrind") valgrind = check_valgrind_backend(program);
  const std::string output = std::filesystem::absolute(options.output).string();
  const std::string capture_path = fmt::format("{}.capture-{}", output, getpid());

  RunInfo info;
  info.miss_penalties = penalties;
  info.command = options.command.front();
  info.args.assign(options.command.begin() + 1, options.command.end());
  info.cwd = std::filesystem::current_path().string();
  info.start_time = std::chrono::system_clock::now();
  info.hostname = this_hostname();
  info.topology = topology_summary();
  try {
    info.llc_bytes = Topology::this_machine().last_level_cache().size_bytes;
  } catch (const std::exception&) {
    info.llc_bytes = 0;  // the views then need --cache-size
  }

  // A profile exists from the start: if weft itself is killed, the file
  // still says what was being recorded.
  write_placeholder_profile(output, info, options.backend, options.granularity,
                            "recording in progress");

  std::filesystem::remove(capture_path);
  // Ctrl-C reaches the program through the terminal's process group; a
  // SIGTERM or SIGHUP sent to weft alone is passed on. Either way weft stays
  // alive to write the profile.
  auto forward_signals = [](pid_t child) {
    g_child = child;
    struct sigaction forward {};
    forward.sa_handler = forward_to_child;
    sigemptyset(&forward.sa_mask);
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGTERM, &forward, nullptr);
    sigaction(SIGHUP, &forward, nullptr);
    sigaction(SIGINT, &ignore, nullptr);
    sigaction(SIGQUIT, &ignore, nullptr);
  };
  const auto started = std::chrono::steady_clock::now();
  int status = 0;
  if (options.backend == "valgrind") {
    CaptureConfig config;
    config.granularity = options.granularity;
    config.max_threads = options.max_threads;
    config.crd = analysis_selected(options, kAnalysisCrd);
    config.imbalance = analysis_selected(options, kAnalysisImbalance);
    config.false_sharing = analysis_selected(options, kAnalysisFalseSharing);
    config.line_size = options.line_size;
    config.traces = analysis_selected(options, kAnalysisTraces);
    config.trace_bytes_per_thread = *parse_byte_size(options.trace_budget);
    config.cache = cache;
    config.crd_max_granules = options.crd_max_granules;
    status = record_under_valgrind(valgrind, options.command, program, config, capture_path,
                                   forward_signals);
  } else {
    status = run_with_runtime(options, cache, program, capture_path, forward_signals);
  }
  info.duration_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  int exit_code = 0;
  if (WIFEXITED(status)) {
    info.exit_status = WEXITSTATUS(status);
    exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    info.exit_signal = signal_name(WTERMSIG(status));
    exit_code = 128 + WTERMSIG(status);
  }

  if (!std::filesystem::exists(capture_path)) {
    std::string reason;
    if (info.exit_signal)
      reason = fmt::format("the program was killed by {} before weft could save its data",
                           *info.exit_signal);
    else if (exit_code == 127)
      reason = "the program could not be started";
    else
      reason =
          "the program did not load weft's runtime: build it with weft-cc, weft-c++ or "
          "weft-fortran";
    write_placeholder_profile(output, info, options.backend, options.granularity, reason);
    throw std::runtime_error(fmt::format("{}; profile {} is flagged incomplete", reason, output));
  }

  RunCapture capture = read_raw_capture(capture_path);
  capture.source = options.backend;
  // Under Valgrind the tool ends normally even when the program dies of a
  // signal (Valgrind reports it as its own exit): the signal decides.
  if (capture.complete && info.exit_signal) {
    const int sig = WTERMSIG(status);
    const bool stopped = sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT;
    capture.complete = false;
    capture.incomplete_reason = fmt::format(
        "the program {} {}", stopped ? "was stopped by" : "crashed with", *info.exit_signal);
  }
  if (!capture.complete && capture.incomplete_reason.empty())
    capture.incomplete_reason = "the program did not end normally";
  build_profile(capture, info, output);
  std::filesystem::remove(capture_path);

  const std::string ending = info.exit_signal ? fmt::format("killed by {}", *info.exit_signal)
                                              : fmt::format("exit status {}", exit_code);
  if (!capture.complete) {
    fmt::print(stderr, "weft: {} ({}); profile {} is flagged incomplete, data so far kept\n",
               capture.incomplete_reason, ending, output);
    return exit_code != 0 ? exit_code : 1;
  }
  fmt::print(stderr, "weft: recorded {} thread{} ({}), profile written to {}\n",
             capture.threads.size(), capture.threads.size() == 1 ? "" : "s", ending, output);
  return exit_code;
}

}  // namespace weft
