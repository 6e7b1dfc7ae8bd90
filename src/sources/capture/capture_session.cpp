#include "sources/capture/capture_session.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <new>

#include "analyzers/state/page_memory.h"
#include "sources/compile/raw_capture_format.h"

namespace weft {

namespace {

template <class T, class... Args>
T* make_reserved(Args&&... args) {
  void* mem = reserve_zeroed(sizeof(T));
  return mem ? new (mem) T(static_cast<Args&&>(args)...) : nullptr;
}

// Buffered write(2), no allocation.
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
      const ssize_t w = ::write(fd_, buffer_ + off, used_ - off);
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

void write_own_process_maps(RawWriter& out) {
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

}  // namespace

CaptureSession* CaptureSession::create(const CaptureConfig& config) {
  void* mem = reserve_zeroed(sizeof(CaptureSession));
  auto* session = mem ? new (mem) CaptureSession(config) : nullptr;
  if (session && (!session->communication_ || !session->sections_ || !session->threads_ ||
                  !session->contexts_))
    return nullptr;
  return session;
}

CaptureSession::CaptureSession(const CaptureConfig& config) : max_threads_(config.max_threads) {
  CommunicationConfig comm;
  comm.granularity = config.granularity;
  comm.max_threads = config.max_threads;
  comm.count_invalidations = true;
  communication_ = make_reserved<CommunicationAnalyzer>(comm);
  sections_ = make_reserved<SectionAttribution>(config.max_threads);
  if (config.crd) {
    CrdConfig crd;
    crd.max_threads = config.max_threads;
    crd.max_granules_per_pair = config.crd_max_granules;
    distances_ = make_reserved<CommunicationReuseDistance>(crd);
    footprint_ =
        make_reserved<SharingFootprint>(static_cast<unsigned>(__builtin_ctz(config.granularity)));
  }
  if (communication_) communication_->connect(distances_, footprint_, sections_);
  if (config.imbalance) {
    ImbalanceConfig imbalance;
    imbalance.max_threads = config.max_threads;
    imbalance.cache = config.cache;
    imbalance_ = make_reserved<ImbalanceCounts>(imbalance);
  }
  if (config.false_sharing) {
    FalseSharingConfig false_sharing;
    false_sharing.line_size = config.line_size;
    false_sharing.max_threads = config.max_threads;
    false_sharing_ = make_reserved<FalseSharingDetector>(false_sharing);
  }
  if (config.traces) {
    MemoryTraceConfig traces;
    traces.max_threads = config.max_threads;
    traces.max_bytes_per_thread = config.trace_bytes_per_thread;
    traces_ = make_reserved<MemoryTraceRecorder>(traces);
  }
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
    c->comm.store(communication_->attach(tid));
    if (imbalance_) c->imbalance.store(imbalance_->attach(tid));
    if (false_sharing_) c->false_sharing.store(false_sharing_->attach(tid));
    if (traces_) c->traces.store(traces_->attach(tid));
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

  if (imbalance_ && thread.tid < max_threads_) count_segments(thread, kind);
  if (!closes_section(kind)) return;
  CommunicationAnalyzer::ThreadState* state = thread.comm.load(std::memory_order_relaxed);
  if (!state) return;
  uint64_t site = pc != 0 ? pc : kUnknownSectionSite;
  if (kind == SyncKind::ThreadExit) site = SectionAttribution::kThreadExitSite;
  communication_->close_section(*state, site);
}

// Segment k of a thread ends at its k-th logged closing record. Between a
// closing point where the thread waits and the point where it resumes, its
// control flow and accesses (the barrier's or the thread pool's own code,
// under the binary source) are not counted: the thread is detached.
void CaptureSession::count_segments(ThreadContext& thread, SyncKind kind) {
  if (resumes_section(kind)) {
    if (counting_.load(std::memory_order_relaxed))
      thread.imbalance.store(imbalance_->attach(thread.tid), std::memory_order_relaxed);
    return;
  }
  if (!closes_section(kind)) return;
  if (ImbalanceCounts::ThreadState* t = imbalance_->attach(thread.tid))
    imbalance_->close_segment(*t);
  if (waits_after_closing(kind)) thread.imbalance.store(nullptr, std::memory_order_relaxed);
}

void CaptureSession::record_allocation(ThreadContext& thread, uint64_t pc, uint64_t address,
                                       uint64_t size) {
  if (!false_sharing_ || !counting_.load(std::memory_order_relaxed)) return;
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
    if (ThreadContext* c = contexts_[i].load()) {
      if (CommunicationAnalyzer::ThreadState* state = c->comm.exchange(nullptr))
        CommunicationAnalyzer::retire(*state);
      c->imbalance.store(nullptr);
      c->false_sharing.store(nullptr);
      c->traces.store(nullptr);
    }
  if (wait)
    for (int spin = 0; spin < 1000 && communication_->any_thread_busy(); ++spin) usleep(50);
}

void CaptureSession::write(int fd, bool complete, const char* reason, const char* maps,
                           size_t maps_size) {
  // Sections still open end with the program (or with their thread, which
  // the profile resolves to its join when there was one).
  for (uint32_t i = 0; i < max_threads_; ++i)
    if (contexts_[i].load())
      if (CommunicationAnalyzer::ThreadState* state = communication_->attach(i))
        communication_->close_section(*state, SectionAttribution::kThreadExitSite);

  // Static: a 64 KiB buffer is too much for a signal handler's stack.
  alignas(RawWriter) static char writer_memory[sizeof(RawWriter)];
  RawWriter& out = *new (writer_memory) RawWriter(fd);
  out.bytes(kRawCaptureMagic, sizeof kRawCaptureMagic);

  const uint32_t thread_count = next_tid_.load();
  const uint32_t recorded = thread_count < max_threads_ ? thread_count : max_threads_;
  if (thread_count > max_threads_) {
    reason =
        "the program created more threads than --max-threads allows; "
        "threads beyond the limit were not analyzed";
    complete = false;
  }

  RawMeta meta;
  meta.complete = complete ? 1 : 0;
  meta.granularity = communication_->config().granularity;
  meta.max_threads = max_threads_;
  meta.thread_count = thread_count;
  meta.dropped_events = communication_->dropped() + (distances_ ? distances_->dropped() : 0) +
                        sections_->dropped() + (imbalance_ ? imbalance_->dropped() : 0) +
                        (false_sharing_ ? false_sharing_->dropped() : 0);
  if (distances_) {
    meta.analyses |= kRawAnalysisCrd;
    meta.crd_max_granules = distances_->config().max_granules_per_pair;
    meta.crd_capped_pairs = distances_->capped_pairs();
  }
  if (imbalance_) {
    meta.analyses |= kRawAnalysisImbalance;
    meta.caches = imbalance_->config().cache;
  }
  if (false_sharing_) {
    meta.analyses |= kRawAnalysisFalseSharing;
    meta.line_size = false_sharing_->config().line_size;
    meta.untracked_accesses = false_sharing_->untracked_accesses();
  }
  if (traces_) meta.analyses |= kRawAnalysisTraces;
  for (uint32_t i = 0; i < recorded; ++i)
    if (ThreadContext* c = contexts_[i].load()) {
      meta.dropped_sync_events += c->sync.dropped;
      meta.unlogged_mutex_events += c->sync.unlogged_mutex_events;
    }
  out.section(RawSection::Meta, sizeof meta, 1);
  out.bytes(&meta, sizeof meta);
  out.section(RawSection::Reason, 1, strlen(reason));
  out.bytes(reason, strlen(reason));

  // Threads, in id order; a thread still running has end_ns = 0.
  uint64_t live = 0;
  for (uint32_t i = 0; i < recorded; ++i)
    if (contexts_[i].load()) ++live;
  for (uint32_t i = 0; i < recorded; ++i)
    if (ThreadContext* c = contexts_[i].load()) threads_[i].basic_blocks = c->basic_blocks;
  out.section(RawSection::Threads, sizeof(ThreadRecord), live);
  for (uint32_t i = 0; i < recorded; ++i)
    if (contexts_[i].load()) out.bytes(&threads_[i], sizeof(ThreadRecord));

  write_records<PcCommunication>(out, RawSection::Communication,
                                 [&](auto&& emit) { communication_->for_each_count(emit); });
  if (distances_) {
    write_records<PcDistanceCount>(out, RawSection::Distances, [&](auto&& emit) {
      distances_->for_each_distance([&](const CommunicationReuseDistance::Record& r) {
        emit(PcDistanceCount{r.pc, r.reader, r.writer, r.distance, r.count});
      });
    });
  }
  write_records<PcCommunication>(out, RawSection::SectionCommunication, [&](auto&& emit) {
    sections_->for_each_count([&](uint32_t tid, const PcPeerCounts& c) {
      emit(PcCommunication{c.pc(), tid, c.peer(), c.comm, c.reuse, c.inval});
    });
  });
  write_records<PcDistanceCount>(out, RawSection::SectionDistances, [&](auto&& emit) {
    sections_->for_each_distance([&](uint32_t tid, const PcWriterDistanceCount& d) {
      emit(PcDistanceCount{d.key.pc_writer >> 16, tid,
                           static_cast<uint32_t>(d.key.pc_writer & 0xffff), d.key.distance,
                           d.count});
    });
  });
  if (footprint_) {
    // One walk of the shadow; write_records reads the totals twice.
    PagedHashTable<SharingFootprint::Totals> totals;
    footprint_->collect(totals);
    write_records<PcFootprint>(out, RawSection::Footprints, [&](auto&& emit) {
      totals.for_each([&](const SharingFootprint::Totals& t) {
        const SharingFootprint::Record r = t.record();
        emit(PcFootprint{r.pc, r.thread, 0, r.private_granules, r.shared_granules});
      });
    });
  }

  if (imbalance_) {
    write_records<SegmentEdge>(out, RawSection::SegmentEdges,
                               [&](auto&& emit) { imbalance_->for_each_edge(emit); });
    write_records<SegmentInstruction>(out, RawSection::SegmentInstructions,
                                      [&](auto&& emit) { imbalance_->for_each_instruction(emit); });
  }

  if (false_sharing_) {
    write_records<LineSharingRecord>(out, RawSection::LineSharing, [&](auto&& emit) {
      false_sharing_->for_each_line_record(emit);
    });
    write_records<SharingPairTotals>(out, RawSection::SharingTotals, [&](auto&& emit) {
      false_sharing_->for_each_pair_total(emit);
    });
    write_records<AllocationRecord>(out, RawSection::Allocations, [&](auto&& emit) {
      for (uint32_t i = 0; i < recorded; ++i)
        if (ThreadContext* c = contexts_[i].load()) c->allocations.for_each(emit);
    });
  }
  if (traces_) {
    traces_->finish();
    uint64_t trace_bytes = 0;
    traces_->for_each_stream([&](const TraceStreamHeader& h, const auto&) {
      trace_bytes += sizeof h + h.encoded_bytes;
    });
    out.section(RawSection::Traces, 1, trace_bytes);
    uint64_t written = 0;
    traces_->for_each_stream([&](const TraceStreamHeader& h, const auto& body) {
      if (written + sizeof h + h.encoded_bytes > trace_bytes) return;
      out.bytes(&h, sizeof h);
      body.write([&](const void* p, size_t n) { out.bytes(p, n); });
      written += sizeof h + h.encoded_bytes;
    });
    for (; written < trace_bytes; ++written) out.bytes("", 1);  // cannot happen once finished
  }

  uint64_t sync_total = 0;
  for (uint32_t i = 0; i < recorded; ++i)
    if (ThreadContext* c = contexts_[i].load()) sync_total += c->sync.size;
  out.section(RawSection::Sync, sizeof(SyncRecord), sync_total);
  uint64_t sync_written = 0;
  for (uint32_t i = 0; i < recorded; ++i)
    if (ThreadContext* c = contexts_[i].load())
      for (uint64_t k = 0; k < c->sync.size && sync_written < sync_total; ++k, ++sync_written)
        out.bytes(&c->sync.records[k], sizeof(SyncRecord));

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
