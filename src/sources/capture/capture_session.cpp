#include "sources/capture/capture_session.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <new>

#include "analyzers/state/page_memory.h"
#include "sources/capture/analysis_capture.h"
#include "sources/capture/raw_capture_writer.h"

namespace weft {

namespace {

void write_own_process_maps(RawWriter& out) {
  // Two passes: the section header needs the length first.
  write_text_section(out, static_cast<uint32_t>(RawSection::ProcessMaps), [](auto&& write) {
    char chunk[4096];
    const int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    ssize_t n;
    while ((n = read(fd, chunk, sizeof chunk)) > 0) write(chunk, static_cast<size_t>(n));
    close(fd);
  });
}

constexpr const AnalysisCapture* kAnalysisCaptures[] = {
#define WEFT_ANALYSIS_CAPTURE_ENTRY(Id, symbol) &symbol##_capture,
    WEFT_ANALYSIS_LIST(WEFT_ANALYSIS_CAPTURE_ENTRY)
#undef WEFT_ANALYSIS_CAPTURE_ENTRY
};

const AnalysisCapture& capture_of(AnalysisId id) {
  return *kAnalysisCaptures[static_cast<size_t>(id)];
}

}  // namespace

bool CaptureConfig::apply_setting(std::string_view key, const char* value) {
  const AnalysisDescriptor* owner = setting_owner(key);
  if (!owner || !value) return false;
  const AnalysisSetting& setting = *find_setting(key);
  uint64_t number = 0;
  if (setting.type != SettingType::Text && !parse_setting_number(setting, value, number))
    return false;
  const AnalysisCapture& capture = capture_of(owner->id);
  return capture.configure && capture.configure(*this, setting, value, number);
}

CaptureSession* CaptureSession::create(const CaptureConfig& config) {
  void* mem = reserve_zeroed(sizeof(CaptureSession));
  auto* session = mem ? new (mem) CaptureSession(config) : nullptr;
  if (session && (!session->analyzers_.communication || !session->analyzers_.sections ||
                  !session->threads_ || !session->contexts_))
    return nullptr;
  return session;
}

CaptureSession::CaptureSession(const CaptureConfig& config)
    : analyses_(config.analyses.with_requirements()), max_threads_(config.max_threads) {
  // An analysis whose memory cannot be reserved does not run (create()
  // refuses a session without communication).
  const AnalysisSet wanted = analyses_;
  wanted.for_each([&](const AnalysisDescriptor& d) {
    if (!capture_of(d.id).create(analyzers_, config)) analyses_.remove(d.id);
  });
  if (CommunicationAnalyzer* communication = analyzers_.communication)
    communication->connect(analyzers_.distances, analyzers_.footprint, analyzers_.sections);
  threads_ = static_cast<ThreadRecord*>(reserve_zeroed(max_threads_ * sizeof(ThreadRecord)));
  contexts_ = static_cast<std::atomic<ThreadContext*>*>(
      reserve_zeroed(max_threads_ * sizeof(std::atomic<ThreadContext*>)));
}

ThreadContext* CaptureSession::start_thread(uint32_t tid, int32_t parent, uint64_t start_routine,
                                            int32_t os_tid, uint64_t time_ns) {
  void* mem = reserve_zeroed(sizeof(ThreadContext));
  if (!mem) return nullptr;
  auto* c = new (mem) ThreadContext;
  c->tid = tid;
  // Ids come from reserve_thread_id, or from the Valgrind tool: count them.
  for (uint32_t n = next_tid_.load(); n <= tid && !next_tid_.compare_exchange_weak(n, tid + 1);) {
  }
  c->sync.records =
      static_cast<SyncRecord*>(reserve_zeroed(SyncLog::kCapacity * sizeof(SyncRecord)));
  if (tid < max_threads_) {
    analyses_.for_each([&](const AnalysisDescriptor& d) {
      if (auto attach = capture_of(d.id).attach) attach(analyzers_, *c);
    });
    ThreadRecord& r = threads_[tid];
    r.id = tid;
    r.os_tid = os_tid;
    r.parent = parent;
    r.start_routine = start_routine;
    r.start_ns = time_ns;
    c->record = &r;
    contexts_[tid].store(c);
  }
  record_sync(*c, SyncKind::ThreadStart, time_ns, 0, 0, parent);
  return c;
}

void CaptureSession::finish_thread(ThreadContext& thread, uint64_t time_ns) {
  record_sync(thread, SyncKind::ThreadExit, time_ns, 0, 0);
  if (thread.record) thread.record->end_ns = time_ns;
}

void CaptureSession::record_sync(ThreadContext& thread, SyncKind kind, uint64_t time_ns,
                                 uint64_t pc, uint64_t object, int64_t arg0, int64_t arg1) {
  SyncLog& log = thread.sync;
  if (!log.records) return;
  if (kind == SyncKind::MutexLock || kind == SyncKind::MutexUnlock) {
    if (log.mutex_records >= SyncLog::kMaxMutexRecords) {
      ++log.unlogged_mutex_events;
      return;
    }
    ++log.mutex_records;
  }
  if (log.size >= SyncLog::kCapacity) {
    ++log.dropped;
    return;
  }
  SyncRecord& r = log.records[log.size];
  r.thread = thread.tid;
  r.kind = kind;
  r.time_ns = time_ns;
  r.pc = pc;
  r.object = object;
  r.arg0 = arg0;
  r.arg1 = arg1;
  std::atomic_signal_fence(std::memory_order_release);
  ++log.size;

  if (analyzers_.imbalance && thread.tid < max_threads_) count_segments(thread, kind);
  if (!closes_section(kind)) return;
  CommunicationAnalyzer::ThreadState* state = thread.comm.load(std::memory_order_relaxed);
  if (!state) return;
  uint64_t site = pc != 0 ? pc : kUnknownSectionSite;
  if (kind == SyncKind::ThreadExit) site = SectionAttribution::kThreadExitSite;
  communication().close_section(*state, site);
}

// Segment k of a thread ends at its k-th logged closing record. Between a
// closing point where the thread waits and the point where it resumes, its
// control flow and accesses (the barrier's or the thread pool's own code,
// under the binary source) are not counted: the thread is detached.
void CaptureSession::count_segments(ThreadContext& thread, SyncKind kind) {
  ImbalanceCounts* imbalance = analyzers_.imbalance;
  if (resumes_section(kind)) {
    if (counting_.load(std::memory_order_relaxed))
      thread.imbalance.store(imbalance->attach(thread.tid), std::memory_order_relaxed);
    return;
  }
  if (!closes_section(kind)) return;
  if (ImbalanceCounts::ThreadState* t = imbalance->attach(thread.tid)) imbalance->close_segment(*t);
  if (waits_after_closing(kind)) thread.imbalance.store(nullptr, std::memory_order_relaxed);
}

void CaptureSession::record_allocation(ThreadContext& thread, uint64_t pc, uint64_t address,
                                       uint64_t size) {
  if (!analyzers_.false_sharing || !counting_.load(std::memory_order_relaxed)) return;
  AllocationRecord r;
  r.address = address;
  r.size = size;
  r.pc = pc;
  r.thread = thread.tid;
  r.sequence = static_cast<uint32_t>(thread.allocations.size());
  thread.allocations.append(r);
}

void CaptureSession::stop_counting(bool wait) {
  counting_.store(false);
  for (uint32_t i = 0; i < max_threads_; ++i)
    if (ThreadContext* c = contexts_[i].load())
      analyses_.for_each([&](const AnalysisDescriptor& d) {
        if (auto detach = capture_of(d.id).detach) detach(*c);
      });
  if (wait)
    for (int spin = 0; spin < 1000 && communication().any_thread_busy(); ++spin) usleep(50);
}

uint32_t CaptureSession::recorded_threads() const {
  const uint32_t thread_count = next_tid_.load();
  return thread_count < max_threads_ ? thread_count : max_threads_;
}

void CaptureSession::write_meta(RawWriter& out, bool complete, const char* reason) {
  const uint32_t thread_count = next_tid_.load();
  if (thread_count > max_threads_) {
    reason =
        "the program created more threads than --max-threads allows; "
        "threads beyond the limit were not analyzed";
    complete = false;
  }
  RawMeta meta;
  meta.complete = complete ? 1 : 0;
  meta.granularity = analyzers_.communication->config().granularity;
  meta.max_threads = max_threads_;
  meta.thread_count = thread_count;
  meta.analyses = analyses_.bits();
  analyses_.for_each([&](const AnalysisDescriptor& d) {
    meta.dropped_events += capture_of(d.id).dropped(analyzers_);
  });
  const uint32_t recorded = recorded_threads();
  for (uint32_t i = 0; i < recorded; ++i)
    if (ThreadContext* c = contexts_[i].load()) {
      meta.dropped_sync_events += c->sync.dropped;
      meta.unlogged_mutex_events += c->sync.unlogged_mutex_events;
    }
  out.section(RawSection::Meta, sizeof meta, 1);
  out.bytes(&meta, sizeof meta);
  out.section(RawSection::Reason, 1, strlen(reason));
  out.text(reason);
}

// Threads, in id order; a thread still running has end_ns = 0.
void CaptureSession::write_threads(RawWriter& out) {
  const uint32_t recorded = recorded_threads();
  uint64_t live = 0;
  for (uint32_t i = 0; i < recorded; ++i)
    if (ThreadContext* c = contexts_[i].load()) {
      threads_[i].basic_blocks = c->basic_blocks;
      ++live;
    }
  out.section(RawSection::Threads, sizeof(ThreadRecord), live);
  for (uint32_t i = 0; i < recorded; ++i)
    if (contexts_[i].load()) out.bytes(&threads_[i], sizeof(ThreadRecord));
}

void CaptureSession::write_sync(RawWriter& out) {
  const uint32_t recorded = recorded_threads();
  uint64_t total = 0;
  for (uint32_t i = 0; i < recorded; ++i)
    if (ThreadContext* c = contexts_[i].load()) total += c->sync.size;
  out.section(RawSection::Sync, sizeof(SyncRecord), total);
  uint64_t written = 0;
  for (uint32_t i = 0; i < recorded; ++i)
    if (ThreadContext* c = contexts_[i].load())
      for (uint64_t k = 0; k < c->sync.size && written < total; ++k, ++written)
        out.bytes(&c->sync.records[k], sizeof(SyncRecord));
}

void CaptureSession::write(int fd, bool complete, const char* reason, const char* maps,
                           size_t maps_size) {
  // Sections still open end with the program (or with their thread, which
  // the profile resolves to its join when there was one).
  for (uint32_t i = 0; i < max_threads_; ++i)
    if (contexts_[i].load())
      if (CommunicationAnalyzer::ThreadState* state = communication().attach(i))
        communication().close_section(*state, SectionAttribution::kThreadExitSite);

  // Static: a 64 KiB buffer is too much for a signal handler's stack.
  alignas(RawWriter) static char writer_memory[sizeof(RawWriter)];
  RawWriter& out = *new (writer_memory) RawWriter(fd);
  out.bytes(kRawCaptureMagic, sizeof kRawCaptureMagic);
  write_meta(out, complete, reason);
  write_threads(out);
  analyses_.for_each([&](const AnalysisDescriptor& d) {
    const AnalysisCapture& capture = capture_of(d.id);
    if (capture.values) {
      // Static, like the writer: off the signal handler's stack.
      alignas(ValueLines) static char lines_memory[sizeof(ValueLines)];
      ValueLines& lines = *new (lines_memory) ValueLines;
      capture.values(analyzers_, lines);
      out.section(RawSection::AnalysisValues, 1, lines.size());
      out.bytes(lines.data(), lines.size());
    }
    capture.write_sections(*this, out);
  });
  write_sync(out);
  if (maps) {
    out.section(RawSection::ProcessMaps, 1, maps_size);
    out.bytes(maps, maps_size);
  } else {
    write_own_process_maps(out);
  }
  out.section(RawSection::End, 0, 0);
  out.flush();
  out.~RawWriter();
}

}  // namespace weft
