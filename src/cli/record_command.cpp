#include "cli/record_command.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "cli/command.h"
#include "cli/progress.h"
#include "common/analyses.h"
#include "common/child_process.h"
#include "common/executable_search.h"
#include "findings/profile_facts.h"
#include "profile/profile.h"
#include "profile/profile_writer.h"
#include "sources/capture/raw_capture.h"
#include "sources/valgrind/valgrind_backend.h"
#include "topology/machine_caches.h"
#include "topology/topology.h"

extern char** environ;

namespace weft {

namespace {

// --cache's SIZE or WAYS (a plain number).
uint64_t cache_number(const std::string& text, bool size) {
  const bool plain = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
  const std::optional<uint64_t> value = size || plain ? parse_size(text) : std::nullopt;
  if (!value)
    throw std::runtime_error(fmt::format("--cache: '{}' is not a {}", text,
                                         size ? "size (e.g. 32K, 8M)" : "number of ways"));
  return *value;
}

// This machine's caches as weft models them, chosen once per run from
// sysfs, hwloc and CPUID (docs/metrics.md, "The recorded cache").
const MachineCaches& machine_caches() {
  static const MachineCaches caches = this_machine_caches();
  return caches;
}

// The simulated caches: --cache when given, else this machine's credible
// L1, L2 and last level (machine_caches).
CacheGeometry cache_geometry(const std::string& option) {
  CacheGeometry g;
  if (!option.empty()) {
    std::vector<std::string> levels = CLI::detail::split(option, ',');
    if (levels.size() != 3)
      throw std::runtime_error(fmt::format(
          "--cache '{}': expected three levels L1SIZE:WAYS,L2SIZE:WAYS,LLCSIZE:WAYS", option));
    for (size_t i = 0; i < 3; ++i) {
      const std::vector<std::string> size_ways = CLI::detail::split(levels[i], ':');
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
  const MachineCaches& m = machine_caches();
  if (const unsigned line = m.l1.cache.line_bytes; line >= 16 && (line & (line - 1)) == 0)
    g.line_bytes = line;
  const ChosenCache* levels[3] = {&m.l1, &m.l2, &m.last_level};
  for (int i = 0; i < 3; ++i) {
    g.levels[i].size_bytes = levels[i]->cache.size_bytes;
    g.levels[i].ways = levels[i]->cache.ways;
  }
  return g;
}

pid_t g_child = 0;

void forward_to_child(int sig) {
  if (g_child > 0) kill(g_child, sig);
}

// SIGINT and SIGQUIT from the terminal (Ctrl-C, Ctrl-\) reach the program
// through its process group already; sent by a process to weft (kill), they
// are passed on like SIGTERM.
void forward_when_sent(int sig, siginfo_t* info, void*) {
  if (info && info->si_code != SI_KERNEL) forward_to_child(sig);
}

// The program as execvp would find it, or an error naming it.
std::string resolve_program(const std::string& name) {
  std::string found = find_executable(name);
  if (!found.empty()) return found;
  throw CommandFailure(fmt::format("cannot run '{}': no such executable file", name),
                       kProgramNotFound);
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

// The analyses' names, all of them or those `weft record` leaves out
// without --analyses (AnalysisDescriptor::in_default).
std::string analysis_names(bool only_left_out = false) {
  std::string names;
  for (const AnalysisDescriptor& d : kAnalyses)
    if (!only_left_out || !d.in_default) names += (names.empty() ? "" : ", ") + std::string(d.name);
  return names;
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
}

// The analyses that run (with what they need) and every setting of theirs in
// the runtime's form, each checked once here for both sources.
struct AnalysisPlan {
  AnalysisSet analyses;
  std::map<std::string, std::string> values;  // by setting key
};

// Each --analyses value is a comma-separated list; none given: the default
// set (every analysis but pages).
AnalysisSet selected_analyses(const std::vector<std::string>& lists) {
  if (lists.empty()) return AnalysisSet::defaults();
  AnalysisSet set;
  for (const std::string& list : lists) {
    AnalysisSet listed;
    std::string_view unknown;
    // An empty list or item ("", "comm,,crd") is refused like an unknown name.
    if (!AnalysisSet::parse(list, listed, &unknown))
      throw std::runtime_error(
          unknown.empty()
              ? fmt::format("--analyses '{}' has an empty item (available: {})", list,
                            analysis_names())
              : fmt::format("unknown analysis '{}' (available: {})", unknown, analysis_names()));
    listed.for_each([&](const AnalysisDescriptor& d) { set.add(d.id); });
  }
  return set.with_requirements();
}

// `text` as the setting's runtime form, or a one-line error naming the option.
std::string setting_value(const AnalysisSetting& setting, const std::string& text) {
  if (setting.key == "cache_levels") return format_cache_levels(cache_geometry(text));
  if (setting.key == "miss_penalties") {
    const std::optional<std::array<double, 3>> p = parse_miss_penalties(text);
    if (!p)
      throw std::runtime_error(fmt::format(
          "{} '{}': expected three non-negative cycle counts P1,P2,P3", setting.option, text));
    return fmt::format("{},{},{}", (*p)[0], (*p)[1], (*p)[2]);
  }
  uint64_t number = 0;
  if (setting.type == SettingType::ByteSize)  // a default with a unit ("64M")
    if (const std::optional<uint64_t> bytes = parse_size(text)) {
      const std::string digits = std::to_string(*bytes);
      if (parse_setting_number(setting, digits, number)) return digits;
    }
  if (parse_setting_number(setting, text, number)) return text;
  switch (setting.type) {
    case SettingType::PowerOfTwo:
      throw std::runtime_error(fmt::format("{} {} is not a power of two between {} and {}",
                                           setting.option, text, setting.min, setting.max));
    case SettingType::ByteSize:
      throw std::runtime_error(fmt::format("{} '{}' is not a size of at least {} bytes",
                                           setting.option, text, setting.min));
    default:
      throw std::runtime_error(fmt::format("{} '{}' is not a whole number between {} and {}",
                                           setting.option, text, setting.min, setting.max));
  }
}

AnalysisPlan plan_analyses(const RecordOptions& o) {
  // A setting given for an analysis that does not run is checked too.
  for (const auto& [key, text] : o.settings)
    if (const AnalysisSetting* setting = find_setting(key)) setting_value(*setting, text);
  AnalysisPlan plan;
  plan.analyses = selected_analyses(o.analyses);
  // --exact sets what trades exactness for cost; a contrary value given too
  // is refused rather than one of the two silently winning.
  if (o.exact)
    for (const AnalysisDescriptor& d : kAnalyses)
      for (const AnalysisSetting& setting : d.settings) {
        auto given = o.settings.find(std::string(setting.key));
        if (!setting.exact_value.empty() && given != o.settings.end() &&
            setting_value(setting, given->second) !=
                setting_value(setting, std::string(setting.exact_value)))
          throw std::runtime_error(fmt::format("--exact contradicts {} {} (exact: {})",
                                               setting.option, given->second, setting.exact_value));
      }
  plan.analyses.for_each([&](const AnalysisDescriptor& d) {
    for (const AnalysisSetting& setting : d.settings) {
      auto given = o.settings.find(std::string(setting.key));
      const std::string_view fallback =
          o.exact && !setting.exact_value.empty() ? setting.exact_value : setting.default_value;
      const std::string text = given != o.settings.end() ? given->second : std::string(fallback);
      plan.values[std::string(setting.key)] = setting_value(setting, text);
    }
  });
  return plan;
}

std::string analysis_list(AnalysisSet analyses) {
  char list[256];
  analyses.format(list, sizeof list);
  return list;
}

// The runtime holds a lock on the capture while the program or its keeper
// (sources/compile/keeper.h), which writes the capture when the program
// could not, may still write it; the keeper ends once it has. Bounded: a
// keeper gives up after 120 s.
void wait_for_capture(const std::string& capture_path) {
  const int fd = open(capture_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    for (int i = 0; i < 15000 && flock(fd, LOCK_EX | LOCK_NB) != 0; ++i) usleep(10000);
    close(fd);
  }
  while (waitpid(-1, nullptr, WNOHANG) > 0) {  // the keeper, when it is weft's child
  }
}

// Runs a program built with weft's compiler wrappers: its runtime reads
// these variables and writes the raw capture itself.
int run_with_runtime(const RecordOptions& options, const AnalysisPlan& plan,
                     const std::string& program, const std::string& capture_path,
                     const std::function<void(pid_t)>& started) {
  const pid_t parent = getpid();
  const pid_t child = fork();
  if (child < 0) throw std::runtime_error("cannot start the program: fork failed");
  if (child == 0) {
    die_with_parent(parent);
    // The bytes of the variables set here ("NAME=value" and its NUL): the
    // program's stack begins below its environment's strings.
    size_t added = 0;
    const auto put = [&](const std::string& name, const std::string& value) {
      setenv(name.c_str(), value.c_str(), 1);
      added += name.size() + value.size() + 2;
    };
    put("WEFT_CAPTURE", capture_path);
    put("WEFT_GRANULARITY", std::to_string(options.granularity));
    put("WEFT_MAX_THREADS", std::to_string(options.max_threads));
    // Unset means the default set.
    if (plan.analyses == AnalysisSet::defaults())
      unsetenv("WEFT_ANALYSES");
    else
      put("WEFT_ANALYSES", analysis_list(plan.analyses));
    plan.analyses.for_each([&](const AnalysisDescriptor& d) {
      for (const AnalysisSetting& setting : d.settings)
        if (!setting.env.empty())
          put(std::string(setting.env), plan.values.at(std::string(setting.key)));
    });
    // The settings' values differ in length from one recording to another
    // (a --cache list, --crd-max-granules), and so would where the
    // program's stack data falls in cache lines (a struct on main's stack
    // across a line or not: docs/commands.md, "The program's environment").
    // Padded to a multiple of kLayoutAlignment bytes (a page: a multiple of
    // 64 left the block one line longer or shorter from one value to the
    // next), the same analyses put the stack at the same offset in a page,
    // so in a line.
    constexpr size_t kLayoutAlignment = 4096;
    constexpr std::string_view kPad = "WEFT_LAYOUT_PAD";
    const size_t pad_fixed = kPad.size() + 2;
    put(std::string(kPad),
        std::string((kLayoutAlignment - (added + pad_fixed) % kLayoutAlignment) % kLayoutAlignment,
                    '_'));
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
  wait_for_capture(capture_path);
  return status;
}

// The Valgrind backend's session is configured in this process, through the
// same setting parser the runtime applies to its environment.
CaptureConfig capture_config(const RecordOptions& options, const AnalysisPlan& plan) {
  CaptureConfig config;
  config.granularity = options.granularity;
  config.max_threads = options.max_threads;
  config.analyses = plan.analyses;
  // Where sampled section instances begin, as the runtime reads it (a knob
  // for tests; docs/metrics.md).
  if (const char* after = std::getenv(SampledSegments::kAfterBlocksVariable); after && *after)
    config.sampling_after_blocks = std::strtoull(after, nullptr, 10);
  for (const auto& [key, value] : plan.values)
    if (!config.apply_setting(key, value.c_str()))
      throw std::runtime_error(fmt::format("setting {} = '{}' is not valid", key, value));
  return config;
}

// Ctrl-C reaches the program through the terminal's process group; a
// SIGTERM or SIGHUP sent to weft alone is passed on. Either way weft stays
// alive to write the profile.
void forward_signals(pid_t child) {
  g_child = child;
  struct sigaction forward {};
  forward.sa_handler = forward_to_child;
  sigemptyset(&forward.sa_mask);
  sigaction(SIGTERM, &forward, nullptr);
  sigaction(SIGHUP, &forward, nullptr);
  struct sigaction forward_when {};
  forward_when.sa_sigaction = forward_when_sent;
  forward_when.sa_flags = SA_SIGINFO;
  sigemptyset(&forward_when.sa_mask);
  sigaction(SIGINT, &forward_when, nullptr);
  sigaction(SIGQUIT, &forward_when, nullptr);
}

RunInfo run_info(const RecordOptions& options, const AnalysisPlan& plan) {
  RunInfo info;
  if (auto it = plan.values.find("miss_penalties"); it != plan.values.end())
    info.miss_penalties = *parse_miss_penalties(it->second);
  info.command = options.command.front();
  info.args.assign(options.command.begin() + 1, options.command.end());
  info.cwd = std::filesystem::current_path().string();
  info.start_time = std::chrono::system_clock::now();
  info.hostname = this_hostname();
  info.problem_size = options.problem_size;
  info.topology = topology_summary();
  // The CRD cutoffs' cache is the simulator's last level: --cache's when
  // given, else the machine's credible one.
  if (auto given = options.settings.find("cache_levels"); given != options.settings.end()) {
    info.llc_bytes = cache_geometry(given->second).levels[2].size_bytes;
    info.llc_source = "--cache";
  } else {
    info.llc_bytes = machine_caches().last_level.cache.size_bytes;
    info.llc_source = cache_info_source_name(machine_caches().last_level.source);
    info.llc_note = machine_caches().last_level.note;
  }
  return info;
}

// The program's exit code for weft (its status, or 128 + signal), with the
// facts stored in `info`.
int exit_code_of(int status, RunInfo& info) {
  if (WIFEXITED(status)) {
    info.exit_status = WEXITSTATUS(status);
    return WEXITSTATUS(status);
  }
  if (WIFSIGNALED(status)) {
    info.exit_signal = signal_name(WTERMSIG(status));
    return 128 + WTERMSIG(status);
  }
  return 0;
}

// No capture at all: why, in the placeholder profile and as the error.
[[noreturn]] void fail_without_capture(const RecordOptions& options, const RunInfo& info,
                                       int exit_code, const std::string& output,
                                       bool runtime_loaded) {
  std::string reason;
  int code = kRecordFailed;
  if (exit_code == kProgramNotFound && !runtime_loaded) {
    reason = "the program could not be started";
    code = kProgramNotFound;
  } else if (runtime_loaded || info.exit_signal) {
    reason = info.exit_signal
                 ? fmt::format("the program was killed by {} before weft could save its data",
                               *info.exit_signal)
                 : "the program ended before weft could save its data";
    code = exit_code;
  } else {
    reason =
        "the program did not load weft's runtime: build it with weft-cc, weft-c++ or "
        "weft-fortran";
  }
  write_placeholder_profile(output, info, options.backend, options.granularity, reason);
  throw CommandFailure(fmt::format("{}; profile {} is flagged incomplete", reason, output), code);
}

// Captures of earlier runs onto the same profile whose `weft record` was
// killed (OUTPUT.capture-PID, PID no longer running): removed, with a
// warning, so they neither pile up nor get mistaken for this run's.
void remove_stale_captures(const std::string& output) {
  const std::filesystem::path path(output);
  const std::string prefix = path.filename().string() + ".capture-";
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(
           path.parent_path().empty() ? "." : path.parent_path(), error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string digits = name.substr(prefix.size());
    int pid = 0;
    const auto [end, parsed] = std::from_chars(digits.data(), digits.data() + digits.size(), pid);
    if (parsed != std::errc() || end != digits.data() + digits.size() || pid <= 0) continue;
    if (kill(pid, 0) == 0 || errno != ESRCH) continue;  // that recording is still running
    std::filesystem::remove(entry.path(), error);
    fmt::print(stderr, "weft: removed {}, left by a weft record that was killed\n",
               entry.path().string());
  }
}

// The capture as the profile should describe it: under Valgrind the tool
// ends normally even when the program dies of a signal (Valgrind reports it
// as its own exit), so the signal decides; settings only weft record knew
// are added.
RunCapture read_capture(const RecordOptions& options, const AnalysisPlan& plan,
                        const std::string& capture_path, int status, const RunInfo& info) {
  RunCapture capture = read_raw_capture(capture_path);
  capture.source = options.backend;
  plan.analyses.for_each([&](const AnalysisDescriptor& d) {
    for (const AnalysisSetting& setting : d.settings)
      if (setting.env.empty())
        capture.analysis_values[std::string(setting.key)] =
            plan.values.at(std::string(setting.key));
  });
  // The keeper's capture (sources/compile/keeper.h) does not know the
  // signal: the reason is made here, as for a capture the signal did not
  // mark.
  if (info.exit_signal && (capture.complete || capture.incomplete_reason == kKeeperReason)) {
    const int sig = WTERMSIG(status);
    const bool stopped = sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT;
    capture.complete = false;
    capture.incomplete_reason = fmt::format("the program {} {}",
                                            sig == SIGKILL ? "was killed by"
                                            : stopped      ? "was stopped by"
                                                           : "crashed with",
                                            *info.exit_signal);
  }
  if (!capture.complete && capture.incomplete_reason.empty())
    capture.incomplete_reason = "the program did not end normally";
  return capture;
}

// Events an analysis could not account (its per-thread tables or logs out
// of memory, a thread beyond the limits, a signal handler interrupting an
// update): which analysis, how many, and where the profile says so. And
// synchronization events a thread's full log could not keep: the segments
// they would have ended run on, so their sections are missing.
void warn_about_losses(const RunCapture& capture) {
  if (capture.dropped_sync_events != 0)
    fmt::print(stderr,
               "weft: warning: {} synchronization events were not logged (a thread's log was "
               "full); the sections they would have closed are missing from the profile (meta "
               "dropped_sync_events; docs/profile-format.md)\n",
               capture.dropped_sync_events);
  std::string by_analysis;
  capture.analyses.for_each([&](const AnalysisDescriptor& d) {
    const uint64_t n = capture.analysis_number("dropped." + std::string(d.name), 0);
    if (n != 0) by_analysis += fmt::format("{}{} {}", by_analysis.empty() ? "" : ", ", d.name, n);
  });
  if (capture.dropped_events == 0 && by_analysis.empty()) return;
  fmt::print(stderr,
             "weft: warning: {} events were not analyzed ({}); their counts are missing from "
             "the profile (meta dropped_events, dropped.<analysis>; docs/profile-format.md)\n",
             capture.dropped_events, by_analysis.empty() ? "no analysis named" : by_analysis);
}

// docs/metrics.md, "Parallel section": a run of several threads in which
// weft found no section but the create→join spans most likely synchronizes
// by hand. Names the busiest lock and condition-variable sites and how to
// mark a barrier.
void warn_without_sections(const RunCapture& capture, const std::string& profile_path) {
  // The profile's rule (meta barrier_instances), which the views use too.
  std::optional<Profile> profile;
  try {
    profile.emplace(Profile::open(profile_path));
  } catch (const std::exception&) {
    return;
  }
  if (!profile_facts(*profile).no_barrier_recognised()) return;
  std::map<std::pair<uint64_t, SyncKind>, uint64_t> sites;
  for (const SyncRecord& r : capture.sync)
    if (r.pc != 0 && (r.kind == SyncKind::MutexLock || r.kind == SyncKind::CondWaitEnter ||
                      r.kind == SyncKind::CondSignal || r.kind == SyncKind::CondBroadcast))
      ++sites[{r.pc, r.kind}];
  std::vector<std::pair<uint64_t, std::pair<uint64_t, SyncKind>>> ranked;
  for (const auto& [site, count] : sites) ranked.emplace_back(count, site);
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  // Threads that never lock or wait (a pointer chase, a parallel search)
  // have nothing to mark: a warning there asked for a barrier the program
  // does not have.
  if (ranked.empty()) {
    fmt::print(stderr,
               "weft: note: the {} threads synchronize only where they are created and joined "
               "(no lock, condition variable or barrier): each thread's work is one section; a "
               "spin barrier weft did not recognise can be marked with <weft/sections.h> "
               "(docs/metrics.md, \"Parallel section\")\n",
               capture.threads.size());
    return;
  }
  fmt::print(stderr,
             "weft: warning: {} threads but no parallel section other than thread create/join "
             "was found (no barrier weft recognises)\n",
             capture.threads.size());
  if (!ranked.empty()) {
    fmt::print(stderr,
               "weft: the most frequent synchronization sites (in each thread's first 4,096 lock "
               "and condition-variable events):\n");
    for (size_t i = 0; i < ranked.size() && i < 5; ++i) {
      const auto& [count, site] = ranked[i];
      std::string where = fmt::format("{:#x}", site.first);
      if (auto position = profile->source_position(site.first); position && !position->file.empty())
        where = fmt::format("{}:{} ({})", std::filesystem::path(position->file).filename().string(),
                            position->line, position->function);
      fmt::print(stderr, "weft:   {} x {} at {}\n", count, sync_kind_name(site.second), where);
    }
  }
  fmt::print(stderr,
             "weft: a hand-written barrier can be marked with <weft/sections.h>: "
             "WEFT_SECTION_END(&b) before it and WEFT_SECTION_BEGIN(&b) after it "
             "(or use pthread_barrier_wait); see docs/metrics.md, \"Parallel section\"\n");
}

}  // namespace

int run_record(const RecordOptions& options) {
  validate(options);
  const AnalysisPlan plan = plan_analyses(options);
  const std::string program = resolve_program(options.command.front());
  ValgrindSetup valgrind;
  if (options.backend == "valgrind") valgrind = check_valgrind_backend(program);
  // Checked before the program runs: -o names a regular file (or a link to
  // one, written through), never a device, FIFO or directory. Nothing is
  // written there until the end, so a run that fails leaves what was there.
  const std::string output =
      profile_output_target(std::filesystem::absolute(options.output).string());
  const std::string capture_path = fmt::format("{}.capture-{}", output, getpid());

  RunInfo info = run_info(options, plan);
  remove_stale_captures(output);
  std::filesystem::remove(capture_path);

  const auto started = std::chrono::steady_clock::now();
  const int status =
      options.backend == "valgrind"
          ? record_under_valgrind(valgrind, options.command, program, capture_config(options, plan),
                                  capture_path, forward_signals)
          : run_with_runtime(options, plan, program, capture_path, forward_signals);
  info.duration_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const int exit_code = exit_code_of(status, info);
  // The runtime claims the capture file at start-up; empty, nothing was
  // written into it.
  std::error_code no_file;
  const bool runtime_loaded = std::filesystem::exists(capture_path);
  if (!runtime_loaded || std::filesystem::file_size(capture_path, no_file) == 0) {
    std::filesystem::remove(capture_path, no_file);
    fail_without_capture(options, info, exit_code, output, runtime_loaded);
  }

  Progress progress(options.quiet);
  progress.stage("reading the capture");
  const RunCapture capture = read_capture(options, plan, capture_path, status, info);
  build_profile(capture, info, output, [&](std::string_view stage) { progress.stage(stage); });
  progress.clear();
  std::filesystem::remove(capture_path);

  const std::string ending = info.exit_signal ? fmt::format("killed by {}", *info.exit_signal)
                                              : fmt::format("exit status {}", exit_code);
  if (!capture.complete) {
    fmt::print(stderr, "weft: {} ({}); profile {} is flagged incomplete, data so far kept\n",
               capture.incomplete_reason, ending, output);
    return exit_code;
  }
  fmt::print(stderr, "weft: recorded {} thread{} ({}), profile written to {}\n",
             capture.threads.size(), capture.threads.size() == 1 ? "" : "s", ending, output);
  warn_about_losses(capture);
  warn_without_sections(capture, output);
  // After the outcome, with the other warnings: a failed run's one-line
  // error stays one line (the profile keeps the note either way).
  if (info.llc_source != "--cache")
    for (const std::string& warning : machine_caches().warnings)
      fmt::print(stderr, "weft: warning: {}\n", warning);
  return exit_code;
}

namespace {

struct RecordCommand : Command {
  explicit RecordCommand(std::vector<std::string>& program_arguments)
      : program_arguments(program_arguments) {}

  CLI::App* add_to(CLI::App& app) override {
    CLI::App* c = app.add_subcommand("record", "run a program and write its profile");
    c->add_option("-o,--output", options.output, "profile file")->capture_default_str();
    c->add_option("--backend", options.backend, "event source: compile or valgrind")
        ->capture_default_str();
    c->add_option("--granularity", options.granularity, "bytes per granule (power of two, 1..4096)")
        ->transform(whole_number(1, 4096))
        ->capture_default_str();
    c->add_option("--max-threads", options.max_threads, "threads analyzed at most")
        ->transform(whole_number(1, 65534))
        ->capture_default_str();
    // Not split by CLI11, which drops empty items: "comm,,crd" is refused by
    // the parser the runtime uses too (AnalysisSet::parse).
    c->add_option("--analyses", options.analyses,
                  "comma-separated analyses (default: all but " + analysis_names(true) +
                      "; available: " + analysis_names() + ")");
    // Each analysis' settings, as common/analyses.h declares them.
    for (const AnalysisDescriptor& d : kAnalyses)
      for (const AnalysisSetting& setting : d.settings) {
        const std::string key(setting.key);
        CLI::Option* option = c->add_option(std::string(setting.option), setting_text[key],
                                            std::string(setting.help));
        if (!setting.default_value.empty()) option->default_str(std::string(setting.default_value));
        if (setting.type == SettingType::ByteSize) as_size(option);
        setting_options.emplace_back(key, option);
      }
    c->add_flag("--exact", options.exact,
                "measure every event: no sampling in any analysis (slower; the settings "
                "marked --exact take their exact value)");
    c->add_option("--problem-size", options.problem_size,
                  "the program's problem size, kept in the profile for weft predict (a whole "
                  "number: what the program's size argument means is the user's)")
        ->transform(whole_number(1, UINT64_MAX - 1));
    c->add_flag("-q,--quiet", options.quiet,
                "no progress line while the profile is built (it is shown only on a terminal)");
    c->add_option("command", options.command, "PROGRAM ARGS (after --)");
    return c;
  }

  int failure_code() const override { return kRecordFailed; }

  int run() override {
    for (const auto& [key, option] : setting_options)
      if (option->count() > 0) options.settings[key] = setting_text[key];
    options.command.insert(options.command.end(), program_arguments.begin(),
                           program_arguments.end());
    return run_record(options);
  }

  RecordOptions options;
  std::vector<std::string>& program_arguments;
  std::map<std::string, std::string> setting_text;
  std::vector<std::pair<std::string, CLI::Option*>> setting_options;
};

}  // namespace

std::unique_ptr<Command> make_record_command(std::vector<std::string>& program_arguments) {
  return std::make_unique<RecordCommand>(program_arguments);
}

}  // namespace weft
