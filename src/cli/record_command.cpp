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

#include "common/executable_search.h"
#include "profile/profile_writer.h"
#include "sources/compile/raw_capture_format.h"
#include "sources/valgrind/valgrind_backend.h"
#include "topology/topology.h"

extern char** environ;

namespace weft {

namespace {

const char* const kKnownAnalyses[] = {"comm", "crd"};

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
      throw std::runtime_error(fmt::format("unknown analysis '{}' (available: comm, crd)", a));
  }
}

// Runs a program built with weft's compiler wrappers: its runtime reads
// these variables and writes the raw capture itself.
int run_with_runtime(const RecordOptions& options, const std::string& program,
                     const std::string& capture_path, const std::function<void(pid_t)>& started) {
  const pid_t child = fork();
  if (child < 0) throw std::runtime_error("cannot start the program: fork failed");
  if (child == 0) {
    setenv("WEFT_CAPTURE", capture_path.c_str(), 1);
    setenv("WEFT_GRANULARITY", std::to_string(options.granularity).c_str(), 1);
    setenv("WEFT_MAX_THREADS", std::to_string(options.max_threads).c_str(), 1);
    setenv("WEFT_CRD_MAX_GRANULES", std::to_string(options.crd_max_granules).c_str(), 1);
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
  const std::string program = resolve_program(options.command.front());
  ValgrindSetup valgrind;
  if (options.backend == "valgrind") valgrind = check_valgrind_backend(program);
  const std::string output = std::filesystem::absolute(options.output).string();
  const std::string capture_path = fmt::format("{}.capture-{}", output, getpid());

  RunInfo info;
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
    config.crd = options.analyses.empty() ||
                 std::find(options.analyses.begin(), options.analyses.end(), "crd") !=
                     options.analyses.end();
    config.crd_max_granules = options.crd_max_granules;
    status = record_under_valgrind(valgrind, options.command, program, config, capture_path,
                                   forward_signals);
  } else {
    status = run_with_runtime(options, program, capture_path, forward_signals);
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
