#include "sources/compile/runtime.h"

#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <new>

#include "analyzers/state/page_memory.h"
#include "sources/compile/keeper.h"

// The thread's context, read by the hooks of every instrumented module.
__thread weft::ThreadContext* weft_thread_context WEFT_INITIAL_EXEC = nullptr;
__thread weft::CommunicationAnalyzer::ThreadState* weft_comm_only_state WEFT_INITIAL_EXEC = nullptr;

namespace weft::rt {

Runtime* g_runtime = nullptr;
bool g_recording = false;
CommunicationAnalyzer* g_communication = nullptr;
CaptureAnalyzers g_analyzers;
CaptureSession* g_session = nullptr;

namespace {

pthread_key_t g_thread_exit_key;

// Address space of the analyzers' shared arena: pages cost memory only when
// touched; beyond it, reservations fall back to private memory.
constexpr size_t kArenaBytes = size_t{8} << 40;

// --- small helpers that avoid libc allocation ------------------------------

uint64_t parse_u64(const char* s, uint64_t fallback) {
  if (!s || !*s) return fallback;
  uint64_t v = 0;
  for (; *s; ++s) {
    if (*s < '0' || *s > '9') return fallback;
    v = v * 10 + static_cast<uint64_t>(*s - '0');
  }
  return v;
}

}  // namespace
void write_stderr(const char* a, const char* b) {
  (void)!write(2, a, strlen(a));
  (void)!write(2, b, strlen(b));
  (void)!write(2, "\n", 1);
}
namespace {

// --- instrumented modules ---------------------------------------------------

struct CodeRange {
  uint64_t lo, hi;
};
constexpr int kMaxModules = 64;
CodeRange g_instrumented[kMaxModules];
std::atomic<int> g_instrumented_count{0};
bool* g_module_flags[kMaxModules];  // each module's hooks' recording flag
std::atomic<int> g_module_flag_count{0};

struct FindRange {
  uint64_t address;
  CodeRange range;
  bool found;
};

int find_module_range(dl_phdr_info* info, size_t, void* data) {
  auto* f = static_cast<FindRange*>(data);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
    const uint64_t lo = info->dlpi_addr + ph.p_vaddr;
    const uint64_t hi = lo + ph.p_memsz;
    if (f->address >= lo && f->address < hi) {
      f->range = {lo, hi};
      f->found = true;
      return 1;
    }
  }
  return 0;
}

// --- signals ----------------------------------------------------------------

constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS};
constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

void on_signal(int sig) {
  char reason[96];
  const bool fatal = sig != SIGINT && sig != SIGTERM && sig != SIGHUP && sig != SIGQUIT;
  const char* name = sigabbrev_np(sig);
  strcpy(reason, fatal ? "the program crashed with SIG" : "the program was stopped by SIG");
  strncat(reason, name ? name : "?", 16);
  save_capture(false, reason);
  // Another thread may be writing the capture (exit racing with a signal):
  // let it finish before the default action ends the process.
  if (Runtime* rt = g_runtime)
    for (int i = 0; i < 200000 && !rt->finished.load(); ++i) usleep(50);
  signal(sig, SIG_DFL);
  raise(sig);
}

void install_signal_handlers() {
  static char altstack[1 << 16];
  stack_t ss{};
  ss.ss_sp = altstack;
  ss.ss_size = sizeof altstack;
  sigaltstack(&ss, nullptr);
  auto install = [](int sig) {
    struct sigaction old {};
    sigaction(sig, nullptr, &old);
    if (old.sa_handler != SIG_DFL) return;  // the program's own choice wins
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_ONSTACK;
    // While the capture is written, further stop signals wait.
    sigemptyset(&sa.sa_mask);
    for (int s : kStopSignals) sigaddset(&sa.sa_mask, s);
    sigaction(sig, &sa, nullptr);
  };
  for (int s : kFatalSignals) install(s);
  for (int s : kStopSignals) install(s);
}

void at_exit() { save_capture(true, ""); }

void in_forked_child() {
  // Only the process started by `weft record` is profiled: a forked child
  // must neither count its accesses nor overwrite the parent's capture. Its
  // arena becomes private first: what it changes stays its own.
  Runtime* rt = g_runtime;
  if (!rt) return;
  // Its hooks return at once.
  g_recording = false;
  for (int i = 0; i < g_module_flag_count.load(); ++i) *g_module_flags[i] = false;
  if (g_page_arena) g_page_arena->make_private();
  leave_keeper(*rt);
  close(rt->capture_fd);  // and its lock: weft record waits for no child
  rt->saved.store(true);
  rt->finished.store(true);
  rt->session->stop_counting(false);
}

// A key destructor notices a thread's end even through pthread_exit.
void on_thread_exit(void* p) {
  Runtime* rt = g_runtime;
  if (rt && p) rt->session->finish_thread(*static_cast<ThreadContext*>(p), now_ns());
}

}  // namespace

uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

ThreadContext* start_thread(uint32_t tid, int32_t parent, uint64_t start_routine) {
  Runtime* rt = g_runtime;
  if (!rt) return nullptr;
  ThreadContext* c = rt->session->start_thread(tid, parent, start_routine,
                                               static_cast<int32_t>(syscall(SYS_gettid)), now_ns());
  if (!c) return nullptr;
  weft_thread_context = c;
  if (rt->saved.load()) c->comm.store(nullptr);
  if (rt->session->communication_only())
    weft_comm_only_state = c->comm.load();
  else
    c->communication_alone_path = &weft_comm_only_state;  // CaptureSession::choose_access_path
  pthread_setspecific(g_thread_exit_key, c);
  return c;
}

ThreadContext* attach_unknown_thread() {
  Runtime* rt = g_runtime;
  if (!rt || rt->saved.load(std::memory_order_relaxed)) return nullptr;
  return start_thread(rt->session->reserve_thread_id(), -1, 0);
}

void register_instrumented_module(const void* address_inside, bool* recording) {
  *recording = g_recording;
  const int flags = g_module_flag_count.load();
  if (std::find(g_module_flags, g_module_flags + flags, recording) == g_module_flags + flags &&
      flags < kMaxModules) {
    g_module_flags[flags] = recording;
    g_module_flag_count.store(flags + 1);
  }
  FindRange f{reinterpret_cast<uint64_t>(address_inside), {0, 0}, false};
  dl_iterate_phdr(find_module_range, &f);
  if (!f.found) return;
  const int n = g_instrumented_count.load();
  for (int i = 0; i < n; ++i)
    if (g_instrumented[i].lo == f.range.lo) return;
  if (n >= kMaxModules) return;
  g_instrumented[n] = f.range;
  g_instrumented_count.store(n + 1);
  if (Runtime* rt = g_runtime) copy_process_maps(*rt);
}

bool is_instrumented_pc(uint64_t pc) {
  const int n = g_instrumented_count.load(std::memory_order_relaxed);
  for (int i = 0; i < n; ++i)
    if (pc >= g_instrumented[i].lo && pc < g_instrumented[i].hi) return true;
  return false;
}

bool in_recorded_process() {
  Runtime* rt = g_runtime;
  return rt && static_cast<int>(getpid()) == rt->pid;
}

void write_capture(Runtime& rt, bool complete, const char* reason, const char* maps,
                   size_t maps_size) {
  // The file claimed at start-up, rewritten from its first byte (a write the
  // program began before it died is replaced whole).
  if (ftruncate(rt.capture_fd, 0) != 0 || lseek(rt.capture_fd, 0, SEEK_SET) != 0) {
    write_stderr("weft: cannot write the capture to ", rt.output_path);
  } else {
    rt.session->write(rt.capture_fd, complete, reason, maps, maps_size);
    fsync(rt.capture_fd);
  }
  rt.finished.store(true);
}

void save_capture(bool complete, const char* reason) {
  Runtime* rt = g_runtime;
  if (!rt || !in_recorded_process() || rt->saved.exchange(true)) return;
  rt->session->stop_counting(true);
  write_capture(*rt, complete, reason, nullptr, 0);
}

void initialize() {
  static std::atomic<bool> done{false};
  if (done.exchange(true)) return;
  // Whichever way it returns, the interposers know from now on whether
  // this process records (interpose_host.h).
  struct PublishState {
    ~PublishState() { interpose::g_host_state.store(g_runtime ? 1 : 0); }
  } publish_state;
  const char* output = getenv("WEFT_CAPTURE");
  if (!output || !*output) return;  // dormant: not under `weft record`

  CaptureConfig config;
  config.granularity = static_cast<unsigned>(parse_u64(getenv("WEFT_GRANULARITY"), 64));
  config.max_threads = static_cast<unsigned>(parse_u64(getenv("WEFT_MAX_THREADS"), 1024));
  // Where sampled section instances begin (docs/metrics.md): a knob for tests.
  config.sampling_after_blocks = parse_u64(getenv(SampledSegments::kAfterBlocksVariable),
                                           SampledSegments::kDefaultAfterBlocks);
  if (config.granularity == 0 || config.granularity > 4096 ||
      (config.granularity & (config.granularity - 1)) != 0 || config.max_threads == 0 ||
      config.max_threads > CommunicationAnalyzer::kMaxThreadsLimit) {
    write_stderr("weft: invalid WEFT_GRANULARITY or WEFT_MAX_THREADS; runtime stays dormant");
    return;
  }
  // WEFT_ANALYSES: comma-separated names (common/analyses.h), unset = the
  // default set (AnalysisSet::defaults);
  // communication always runs. Each analysis' settings come from its
  // variables, unset = the analyzer's default.
  if (const char* analyses = getenv("WEFT_ANALYSES");
      analyses && !AnalysisSet::parse(analyses, config.analyses)) {
    write_stderr("weft: invalid WEFT_ANALYSES; runtime stays dormant");
    return;
  }
  bool settings_valid = true;
  config.analyses.with_requirements().for_each([&](const AnalysisDescriptor& d) {
    for (const AnalysisSetting& setting : d.settings) {
      if (setting.env.empty()) continue;
      const char* value = getenv(setting.env.data());
      if (value && *value && !config.apply_setting(setting.key, value)) {
        write_stderr("weft: invalid ", setting.env.data());
        settings_valid = false;
      }
    }
  });
  if (!settings_valid) {
    write_stderr("weft: runtime stays dormant");
    return;
  }

  // The first image of the run claims the capture: a program that a
  // recorded one starts (fork and exec, or exec itself) finds it taken and
  // stays dormant, so it cannot overwrite the recorded program's data.
  const int capture_fd = open(output, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (capture_fd < 0) {
    if (errno != EEXIST) write_stderr("weft: cannot create the capture ", output);
    return;
  }
  // Held while the program or its keeper may write (keeper.h).
  flock(capture_fd, LOCK_EX);
  g_page_arena = PageArena::create(kArenaBytes);
  CaptureSession* session = CaptureSession::create(config);
  void* mem = session ? reserve_zeroed(sizeof(Runtime)) : nullptr;
  if (!mem) {
    write_stderr("weft: cannot reserve the analyzers' memory; runtime stays dormant");
    close(capture_fd);
    return;
  }
  auto* rt = new (mem) Runtime;
  rt->session = session;
  rt->pid = static_cast<int>(getpid());
  rt->capture_fd = capture_fd;
  strncpy(rt->output_path, output, sizeof rt->output_path - 1);
  if (g_page_arena) {
    rt->maps.text = static_cast<char*>(reserve_zeroed(ProcessMapsCopy::kCapacity));
    copy_process_maps(*rt);
    // Without the arena the keeper would see nothing the program counts.
    if (!start_keeper(*rt))
      write_stderr("weft: no keeper process: a killed program loses its data");
  }
  pthread_key_create(&g_thread_exit_key, on_thread_exit);
  g_communication = &session->communication();
  g_analyzers = session->analyzers();
  session->set_clock(now_ns);
  g_session = session;
  g_runtime = rt;
  g_recording = true;

  if (!weft_thread_context) attach_unknown_thread();  // the main thread: id 0
  install_signal_handlers();
  pthread_atfork(nullptr, nullptr, in_forked_child);
  atexit(at_exit);
  at_quick_exit(at_exit);
}

// Runs before the program's own constructors (the runtime is a dependency).
__attribute__((constructor(101))) void initialize_at_load() { initialize(); }

}  // namespace weft::rt
