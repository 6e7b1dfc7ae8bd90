#include "sources/compile/runtime.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <new>

#include "analyzers/state/page_memory.h"
#include "sources/compile/raw_capture_format.h"

namespace weft::rt {

Runtime* g_runtime = nullptr;
CommunicationAnalyzer* g_communication = nullptr;
__thread ThreadContext* t_context WEFT_INITIAL_EXEC = nullptr;

namespace {

pthread_key_t g_thread_exit_key;

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

// True when the comma-separated `list` holds `item`.
bool has_item(const char* list, const char* item) {
  const size_t n = strlen(item);
  for (const char* p = list; *p;) {
    const char* end = strchr(p, ',');
    const size_t len = end ? static_cast<size_t>(end - p) : strlen(p);
    if (len == n && strncmp(p, item, n) == 0) return true;
    if (!end) break;
    p = end + 1;
  }
  return false;
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

// --- the capture writer -----------------------------------------------------

class RawWriter {
 public:
  explicit RawWriter(int fd) : fd_(fd) {}
  ~RawWriter() { flush(); }
  void bytes(const void* p, size_t n) {
    const char* c = static_cast<const char*>(p);
    while (n > 0) {
      const size_t room = sizeof buffer_ - used_;
      const size_t k = n < room ? n : room;
      memcpy(buffer_ + used_, c, k);
      used_ += k;
      c += k;
      n -= k;
      if (used_ == sizeof buffer_) flush();
    }
  }
  void section(RawSection tag, uint32_t record_size, uint64_t count) {
    const uint32_t t = static_cast<uint32_t>(tag);
    bytes(&t, 4);
    bytes(&record_size, 4);
    bytes(&count, 8);
  }
  void flush() {
    size_t off = 0;
    while (off < used_) {
      const ssize_t w = write(fd_, buffer_ + off, used_ - off);
      if (w <= 0) break;
      off += static_cast<size_t>(w);
    }
    used_ = 0;
  }

 private:
  int fd_;
  size_t used_ = 0;
  char buffer_[1 << 16];
};

RawWriter* g_writer_storage = nullptr;
alignas(RawWriter) char g_writer_memory[sizeof(RawWriter)];

void write_process_maps(RawWriter& out) {
  // Two passes: the section header needs the length first.
  char chunk[4096];
  uint64_t total = 0;
  int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    ssize_t n;
    while ((n = read(fd, chunk, sizeof chunk)) > 0) total += static_cast<uint64_t>(n);
    close(fd);
  }
  out.section(RawSection::ProcessMaps, 1, total);
  fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  uint64_t written = 0;
  if (fd >= 0) {
    ssize_t n;
    while (written < total && (n = read(fd, chunk, sizeof chunk)) > 0) {
      const uint64_t k =
          written + static_cast<uint64_t>(n) > total ? total - written : static_cast<uint64_t>(n);
      out.bytes(chunk, k);
      written += k;
    }
    close(fd);
  }
  while (written < total) {  // the maps shrank between passes: pad with newlines
    out.bytes("\n", 1);
    ++written;
  }
}

// Writes one section of records produced by `produce(emit)`, which is run
// twice (count, then write): no allocation, so it works in a signal handler.
// If the second pass yields a different number (an update raced with the
// save), the section is padded or cut to the announced count.
template <class Record, class Produce>
void write_records(RawWriter& out, RawSection tag, Produce produce) {
  uint64_t count = 0;
  produce([&](const Record&) { ++count; });
  out.section(tag, sizeof(Record), count);
  uint64_t written = 0;
  produce([&](const Record& r) {
    if (written++ < count) out.bytes(&r, sizeof r);
  });
  for (; written < count; ++written) {
    const Record empty{};
    out.bytes(&empty, sizeof empty);
  }
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

// Detaches every thread from the analyzer: the hooks return at once after.
void stop_counting(Runtime* rt) {
  for (uint32_t i = 0; i < rt->max_threads; ++i)
    if (ThreadContext* c = rt->contexts[i].load()) c->comm.store(nullptr);
}

void in_forked_child() {
  // Only the process started by `weft record` is profiled: a forked child
  // must neither count its accesses nor overwrite the parent's capture.
  Runtime* rt = g_runtime;
  if (!rt) return;
  rt->saved.store(true);
  rt->finished.store(true);
  stop_counting(rt);
}

void on_thread_exit(void*) { finish_thread(); }

ThreadContext* make_context(uint32_t tid) {
  Runtime* rt = g_runtime;
  void* mem = reserve_zeroed(sizeof(ThreadContext));
  if (!mem) return nullptr;
  auto* c = new (mem) ThreadContext;
  c->tid = tid;
  c->sync.records =
      static_cast<SyncRecord*>(reserve_zeroed(SyncLog::kCapacity * sizeof(SyncRecord)));
  if (tid < rt->max_threads) {
    c->comm.store(rt->communication->attach(tid));
    c->record = &rt->threads[tid];
    rt->contexts[tid].store(c);
  }
  return c;
}

}  // namespace

uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

uint32_t reserve_thread_id() { return g_runtime->next_tid.fetch_add(1); }

ThreadContext* start_thread(uint32_t tid, int32_t parent, uint64_t start_routine) {
  Runtime* rt = g_runtime;
  if (!rt) return nullptr;
  ThreadContext* c = make_context(tid);
  if (!c) return nullptr;
  if (c->record) {
    c->record->id = tid;
    c->record->os_tid = static_cast<int32_t>(syscall(SYS_gettid));
    c->record->parent = parent;
    c->record->start_routine = start_routine;
    c->record->start_ns = now_ns();
  }
  t_context = c;
  if (rt->saved.load()) c->comm.store(nullptr);
  // A key destructor notices the thread's end even through pthread_exit.
  pthread_setspecific(g_thread_exit_key, c);
  record_sync(SyncKind::ThreadStart, 0, 0, parent);
  return c;
}

void finish_thread() {
  ThreadContext* c = t_context;
  if (!c) return;
  record_sync(SyncKind::ThreadExit, 0, 0);
  if (c->record) c->record->end_ns = now_ns();
}

ThreadContext* attach_unknown_thread() {
  Runtime* rt = g_runtime;
  if (!rt || rt->saved.load(std::memory_order_relaxed)) return nullptr;
  return start_thread(reserve_thread_id(), -1, 0);
}

namespace {

// The synchronization points that end a thread's parallel section
// (DESIGN.md, "Parallel section"), and the site that identifies it.
void close_section_at(ThreadContext* c, SyncKind kind, uint64_t pc) {
  switch (kind) {
    case SyncKind::BarrierEnter:
    case SyncKind::OmpBarrierEnter:
    case SyncKind::OmpImplicitBarrier:
    case SyncKind::ThreadCreate:
    case SyncKind::ThreadJoin:
    case SyncKind::OmpParallelBegin:
    case SyncKind::ThreadExit:
      break;
    default:
      return;
  }
  CommunicationAnalyzer::ThreadState* state = c->comm.load(std::memory_order_relaxed);
  if (!state) return;
  uint64_t site = pc != 0 ? pc : kUnknownSectionSite;
  if (kind == SyncKind::ThreadExit) site = SectionAttribution::kThreadExitSite;
  g_communication->close_section(*state, site);
}

}  // namespace

void record_sync(SyncKind kind, uint64_t pc, uint64_t object, int64_t arg0, int64_t arg1) {
  ThreadContext* c = current_thread();
  if (!c || !c->sync.records) return;
  SyncLog& log = c->sync;
  if (log.size >= SyncLog::kCapacity) {
    ++log.dropped;
    return;
  }
  SyncRecord& r = log.records[log.size];
  r.thread = c->tid;
  r.kind = kind;
  r.time_ns = now_ns();
  r.pc = pc;
  r.object = object;
  r.arg0 = arg0;
  r.arg1 = arg1;
  std::atomic_signal_fence(std::memory_order_release);
  ++log.size;
  close_section_at(c, kind, pc);
}

void register_instrumented_module(const void* address_inside) {
  FindRange f{reinterpret_cast<uint64_t>(address_inside), {0, 0}, false};
  dl_iterate_phdr(find_module_range, &f);
  if (!f.found) return;
  const int n = g_instrumented_count.load();
  for (int i = 0; i < n; ++i)
    if (g_instrumented[i].lo == f.range.lo) return;
  if (n >= kMaxModules) return;
  g_instrumented[n] = f.range;
  g_instrumented_count.store(n + 1);
}

bool is_instrumented_pc(uint64_t pc) {
  const int n = g_instrumented_count.load(std::memory_order_relaxed);
  for (int i = 0; i < n; ++i)
    if (pc >= g_instrumented[i].lo && pc < g_instrumented[i].hi) return true;
  return false;
}

void save_capture(bool complete, const char* reason) {
  Runtime* rt = g_runtime;
  if (!rt || rt->saved.exchange(true)) return;

  // Stop every thread's counting, then let updates in flight finish.
  stop_counting(rt);
  for (int spin = 0; spin < 1000 && rt->communication->any_thread_busy(); ++spin) usleep(50);

  // Sections still open end with the program (or with their thread, which
  // the profile resolves to its join when there was one).
  for (uint32_t i = 0; i < rt->max_threads; ++i)
    if (rt->contexts[i].load())
      if (CommunicationAnalyzer::ThreadState* state = rt->communication->attach(i))
        rt->communication->close_section(*state, SectionAttribution::kThreadExitSite);

  const int fd = open(rt->output_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    write_stderr("weft: cannot write the capture to ", rt->output_path);
    rt->finished.store(true);
    return;
  }
  g_writer_storage = new (g_writer_memory) RawWriter(fd);
  RawWriter& out = *g_writer_storage;
  out.bytes(kRawCaptureMagic, sizeof kRawCaptureMagic);

  const uint32_t thread_count = rt->next_tid.load();
  const uint32_t recorded = thread_count < rt->max_threads ? thread_count : rt->max_threads;
  char overflow_reason[160];
  if (thread_count > rt->max_threads) {
    strcpy(overflow_reason,
           "the program created more threads than --max-threads allows; "
           "threads beyond the limit were not analyzed");
    reason = overflow_reason;
    complete = false;
  }

  RawMeta meta;
  meta.complete = complete ? 1 : 0;
  meta.granularity = rt->communication->config().granularity;
  meta.max_threads = rt->max_threads;
  meta.thread_count = thread_count;
  meta.dropped_events = rt->communication->dropped() +
                        (rt->distances ? rt->distances->dropped() : 0) + rt->sections->dropped();
  if (rt->distances) {
    meta.analyses |= kRawAnalysisCrd;
    meta.crd_max_granules = rt->distances->config().max_granules_per_pair;
    meta.crd_capped_pairs = rt->distances->capped_pairs();
  }
  for (uint32_t i = 0; i < recorded; ++i)
    if (ThreadContext* c = rt->contexts[i].load()) meta.dropped_sync_events += c->sync.dropped;
  out.section(RawSection::Meta, sizeof meta, 1);
  out.bytes(&meta, sizeof meta);
  out.section(RawSection::Reason, 1, strlen(reason));
  out.bytes(reason, strlen(reason));

  // Threads, in id order; a thread still running has end_ns = 0.
  uint64_t live = 0;
  for (uint32_t i = 0; i < recorded; ++i)
    if (rt->contexts[i].load()) ++live;
  out.section(RawSection::Threads, sizeof(ThreadRecord), live);
  for (uint32_t i = 0; i < recorded; ++i)
    if (rt->contexts[i].load()) out.bytes(&rt->threads[i], sizeof(ThreadRecord));

  write_records<PcCommunication>(out, RawSection::Communication,
                                 [&](auto&& emit) { rt->communication->for_each_count(emit); });
  if (rt->distances) {
    write_records<PcDistanceCount>(out, RawSection::Distances, [&](auto&& emit) {
      rt->distances->for_each_distance([&](const CommunicationReuseDistance::Record& r) {
        emit(PcDistanceCount{r.pc, r.reader, r.writer, r.distance, r.count});
      });
    });
  }
  write_records<PcCommunication>(out, RawSection::SectionCommunication, [&](auto&& emit) {
    rt->sections->for_each_count([&](uint32_t tid, const PcPeerCounts& c) {
      emit(PcCommunication{c.pc(), tid, c.peer(), c.comm, c.reuse, c.inval});
    });
  });
  write_records<PcDistanceCount>(out, RawSection::SectionDistances, [&](auto&& emit) {
    rt->sections->for_each_distance([&](uint32_t tid, const DistanceCount& d) {
      emit(PcDistanceCount{d.key.pc_writer >> 16, tid,
                           static_cast<uint32_t>(d.key.pc_writer & 0xffff), d.key.distance,
                           d.count});
    });
  });
  if (rt->footprint) {
    // One walk of the shadow; write_records reads the totals twice.
    PagedHashTable<SharingFootprint::Totals> totals;
    rt->footprint->collect(totals);
    write_records<PcFootprint>(out, RawSection::Footprints, [&](auto&& emit) {
      totals.for_each([&](const SharingFootprint::Totals& t) {
        const SharingFootprint::Record r = t.record();
        emit(PcFootprint{r.pc, r.thread, 0, r.private_granules, r.shared_granules});
      });
    });
  }

  uint64_t sync_total = 0;
  for (uint32_t i = 0; i < recorded; ++i)
    if (ThreadContext* c = rt->contexts[i].load()) sync_total += c->sync.size;
  out.section(RawSection::Sync, sizeof(SyncRecord), sync_total);
  uint64_t sync_written = 0;
  for (uint32_t i = 0; i < recorded; ++i)
    if (ThreadContext* c = rt->contexts[i].load())
      for (uint64_t k = 0; k < c->sync.size && sync_written < sync_total; ++k, ++sync_written)
        out.bytes(&c->sync.records[k], sizeof(SyncRecord));

  write_process_maps(out);
  out.section(RawSection::End, 0, 0);
  out.flush();
  close(fd);
  rt->finished.store(true);
}

void initialize() {
  static std::atomic<bool> done{false};
  if (done.exchange(true)) return;
  const char* output = getenv("WEFT_CAPTURE");
  if (!output || !*output) return;  // dormant: not under `weft record`

  CommunicationConfig config;
  config.granularity = static_cast<unsigned>(parse_u64(getenv("WEFT_GRANULARITY"), 64));
  config.max_threads = static_cast<unsigned>(parse_u64(getenv("WEFT_MAX_THREADS"), 1024));
  config.count_invalidations = true;
  if (config.granularity == 0 || config.granularity > 4096 ||
      (config.granularity & (config.granularity - 1)) != 0 || config.max_threads == 0 ||
      config.max_threads > CommunicationAnalyzer::kMaxThreadsLimit) {
    write_stderr("weft: invalid WEFT_GRANULARITY or WEFT_MAX_THREADS; runtime stays dormant");
    return;
  }

  void* mem = reserve_zeroed(sizeof(Runtime));
  auto* rt = new (mem) Runtime;
  strncpy(rt->output_path, output, sizeof rt->output_path - 1);
  rt->max_threads = config.max_threads;
  rt->communication =
      new (reserve_zeroed(sizeof(CommunicationAnalyzer))) CommunicationAnalyzer(config);
  // WEFT_ANALYSES: comma-separated, unset = all. The crd analysis consumes
  // the communication analyzer's events, so comm always runs.
  rt->sections =
      new (reserve_zeroed(sizeof(SectionAttribution))) SectionAttribution(config.max_threads);
  const char* analyses = getenv("WEFT_ANALYSES");
  if (!analyses || has_item(analyses, "crd")) {
    CrdConfig crd;
    crd.max_threads = config.max_threads;
    crd.max_granules_per_pair =
        parse_u64(getenv("WEFT_CRD_MAX_GRANULES"), crd.max_granules_per_pair);
    rt->distances =
        new (reserve_zeroed(sizeof(CommunicationReuseDistance))) CommunicationReuseDistance(crd);
    rt->footprint = new (reserve_zeroed(sizeof(SharingFootprint)))
        SharingFootprint(static_cast<unsigned>(__builtin_ctz(config.granularity)));
  }
  rt->communication->connect(rt->distances, rt->footprint, rt->sections);
  rt->threads =
      static_cast<ThreadRecord*>(reserve_zeroed(config.max_threads * sizeof(ThreadRecord)));
  rt->contexts = static_cast<std::atomic<ThreadContext*>*>(
      reserve_zeroed(config.max_threads * sizeof(std::atomic<ThreadContext*>)));
  pthread_key_create(&g_thread_exit_key, on_thread_exit);
  g_communication = rt->communication;
  g_runtime = rt;

  if (!t_context) start_thread(reserve_thread_id(), -1, 0);  // the main thread: id 0
  install_signal_handlers();
  pthread_atfork(nullptr, nullptr, in_forked_child);
  atexit(at_exit);
}

// Runs before the program's own constructors (the runtime is a dependency).
__attribute__((constructor(101))) void initialize_at_load() { initialize(); }

}  // namespace weft::rt

namespace weft::rt {

void* next_symbol(const char* name) {
  void* f = dlsym(RTLD_NEXT, name);
  if (!f) {
    write_stderr("weft: cannot find the real ", name);
    abort();
  }
  return f;
}

}  // namespace weft::rt
