// The per-access hot paths of the analyzers, in nanoseconds per event
// (Google Benchmark; bench/run.sh prints the medians): the communication
// shadow's private re-read and re-write (the inline fast paths), a write
// followed by another thread's first read (the slow path with its counts),
// a reader's reuses of another thread's granules at a short distance (with
// and without CRD), the CRD distance update, one step of the simulated
// private and shared caches, the false-sharing detector's private re-read
// and a line transfer, and the trace recorder's step on a regular stream
// (its O(1) path).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "analyzers/communication/communication_analyzer.h"
#include "analyzers/crd/communication_reuse_distance.h"
#include "analyzers/false_sharing/false_sharing_detector.h"
#include "analyzers/imbalance/cache_simulator.h"
#include "analyzers/imbalance/imbalance_counts.h"
#include "analyzers/traces/memory_trace_recorder.h"
#include "sources/capture/capture_session.h"

namespace {

using namespace weft;

constexpr size_t kGranules = 4096;  // a working set that stays in the host's caches

std::vector<uint64_t>& buffer() {
  static std::vector<uint64_t> data(kGranules * 8);  // one 64-byte granule per 8 words
  return data;
}

uintptr_t address_of(size_t granule) {
  return reinterpret_cast<uintptr_t>(buffer().data() + granule * 8);
}

// A thread re-reading or re-writing granules it wrote last: the inline
// fast path.
// (A compile-time choice: a branch per access would be measured with it.)
template <class IsWrite>
void CommPrivate(benchmark::State& state, IsWrite) {
  CommunicationAnalyzer comm(CommunicationConfig{});
  auto* t = comm.attach(0);
  for (size_t g = 0; g < kGranules; ++g) comm.write(*t, 0x401000, address_of(g), 8);
  const uintptr_t base = address_of(0);
  size_t g = 0;
  for (auto _ : state) {
    if constexpr (IsWrite::value) {
      comm.write(*t, 0x401020, base + g * 64, 8);
    } else {
      comm.read(*t, 0x401010, base + g * 64, 8);
    }
    g = (g + 1) % kGranules;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK_CAPTURE(CommPrivate, reread, std::false_type{});
BENCHMARK_CAPTURE(CommPrivate, rewrite, std::true_type{});

// One event = thread 0 writes a granule thread 1 read (an invalidation),
// then thread 1 reads it first (one true communication, with CRD).
void CommRemoteWriteThenFirstRead(benchmark::State& state) {
  CommunicationAnalyzer comm(CommunicationConfig{});
  CommunicationReuseDistance crd(CrdConfig{});
  comm.connect(&crd, nullptr, nullptr);
  auto* writer = comm.attach(0);
  auto* reader = comm.attach(1);
  size_t g = 0;
  for (auto _ : state) {
    comm.write(*writer, 0x401000, address_of(g), 8);
    comm.read(*reader, 0x401100, address_of(g), 8);
    g = (g + 1) % kGranules;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(CommRemoteWriteThenFirstRead);

// One event = thread 1 re-reads, in turn, one of Arg(1) granules thread 0
// wrote (a bisection's top levels, a gather's hot rows: reuses at a short
// distance, the read-sharing kernels' commonest event). Arg(0): 0 without
// CRD (the reuse memo counts them inline), 1 with the sampled CRD of
// `weft record` (every event goes to the slow path and the distances).
void CommReuseCycle(benchmark::State& state) {
  CommunicationAnalyzer comm(CommunicationConfig{});
  CrdConfig config;
  config.sample_granules = 16384;  // weft record's default
  CommunicationReuseDistance crd(config);
  if (state.range(0) != 0) comm.connect(&crd, nullptr, nullptr);
  auto* writer = comm.attach(0);
  auto* reader = comm.attach(1);
  const auto cycle = static_cast<size_t>(state.range(1));
  for (size_t g = 0; g < cycle; ++g) comm.write(*writer, 0x401000, address_of(g), 8);
  for (size_t g = 0; g < cycle; ++g) comm.read(*reader, 0x401100, address_of(g), 8);
  size_t g = 0;
  for (auto _ : state) {
    comm.read(*reader, 0x401100, address_of(g), 8);
    if (++g == cycle) g = 0;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(CommReuseCycle)->Args({0, 17})->Args({1, 17})->Args({1, 256});

void CrdDistanceUpdate(benchmark::State& state) {
  CommunicationReuseDistance crd(CrdConfig{});
  auto* reader = crd.attach(1);
  // Arg 1: the first pass receives each granule (starting its epoch), the
  // later passes re-read it (the epoch's set update, docs/metrics.md "CRR");
  // arg 0: every event a reuse of data with no epoch (the distance alone).
  uint64_t g = 0;
  bool first_pass = state.range(0) != 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(crd.on_event(*reader, 0x401100, 0, g << 6, first_pass));
    g = (g + 1) % kGranules;
    if (g == 0) first_pass = false;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(CrdDistanceUpdate)->Arg(0)->Arg(1);

// One step of a simulated cache on a cyclic stream of Arg lines: for the
// 32 KiB L1, 1024 lines make every step a miss and an eviction (the slowest
// path) and 256 a resident set (hits); likewise for the 8 MiB shared LLC.
// (The null pointer only names the cache type.)
template <class Cache>
void CacheStep(benchmark::State& state, Cache*, CacheLevelGeometry geometry) {
  Cache cache;
  cache.configure(geometry, 64);
  const uint64_t lines = static_cast<uint64_t>(state.range(0));
  uint64_t line = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(cache.access(line));
    line = (line + 1) % lines;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK_CAPTURE(CacheStep, private_l1, static_cast<PrivateCache*>(nullptr),
                  CacheLevelGeometry{32 << 10, 8})
    ->Arg(256)
    ->Arg(1024);
BENCHMARK_CAPTURE(CacheStep, shared_llc, static_cast<SharedCache*>(nullptr),
                  CacheLevelGeometry{8 << 20, 16})
    ->Arg(65536)
    ->Arg(262144);

// A 2-D stencil's five interleaved streams on one thread: four loads around
// a point of one grid, the store into the other (rows of 8 KiB, so all five
// lines fall into one L1 set). step(access) makes one point's accesses,
// access(pc, address, is_write).
class StencilStreams {
 public:
  template <class Access>
  void step(Access&& access) {
    access(0x401000, x_ + p_ - kRow, false);
    access(0x401010, x_ + p_ + kRow, false);
    access(0x401020, x_ + p_ - 8, false);
    access(0x401030, x_ + p_ + 8, false);
    access(0x401040, y_ + p_, true);
    p_ += 8;
    if (p_ >= 62 * kRow) p_ = kRow + 8;
  }
  // Every address of both grids once, as writes (the initialization).
  template <class Access>
  void initialize(Access&& access) {
    for (uintptr_t a = x_; a < y_ + 64 * kRow; a += 8) access(0x400f00, a, true);
  }
  static constexpr int kAccessesPerStep = 5;

 private:
  static constexpr uintptr_t kRow = 1024 * 8;
  std::vector<double> grid_ = std::vector<double>(2 * 64 * 1024);
  uintptr_t x_ = reinterpret_cast<uintptr_t>(grid_.data());
  uintptr_t y_ = x_ + 64 * kRow;
  uintptr_t p_ = kRow + 8;
};

// This machine's caches (48 KiB 12-way L1, 2 MiB 16-way L2) with a 32 MiB LLC.
CacheGeometry machine_like_caches() {
  CacheGeometry g;
  g.levels[0] = {48 << 10, 12};
  g.levels[1] = {2 << 20, 16};
  g.levels[2] = {32 << 20, 16};
  return g;
}

// The imbalance analysis' step on the stencil's streams: the per-instruction
// count and the L1/L2 lookups. Arg 0: no simulated caches (the count alone);
// 1: the exact model; 2: 1 set in 8 simulated (weft record's default).
void ImbalanceStencilStep(benchmark::State& state) {
  ImbalanceConfig config;
  config.max_threads = 1;
  config.cache = machine_like_caches();
  config.cache_sampling = state.range(0) == 2 ? 8 : 1;
  if (state.range(0) == 0)
    for (CacheLevelGeometry& level : config.cache.levels) level = {0, 0};
  ImbalanceCounts counts(config);
  auto* t = counts.attach(0);
  StencilStreams streams;
  for (auto _ : state)
    streams.step([&](uint64_t pc, uintptr_t a, bool) { counts.access(*t, pc, a, 8); });
  state.SetItemsProcessed(state.iterations() * StencilStreams::kAccessesPerStep);
}
BENCHMARK(ImbalanceStencilStep)->Arg(0)->Arg(1)->Arg(2);

// Every analyzer on one thread's 2-D stencil streams (as above), fed the
// way both sources feed them (communication, then CaptureSession's
// per-access analyses): the cost per access of `weft record` without the
// hook call itself. Arg: the analyses beyond communication (bits: 1 crd,
// 2 imbalance, 4 falseshare, 8 traces; 15 = every analyzer).
void AllAnalyzersStencilStep(benchmark::State& state) {
  CaptureConfig config;
  config.max_threads = 2;
  config.imbalance.cache = machine_like_caches();
  // The analyses beyond communication, as a bit set (AnalysisSet's bits
  // without communication's).
  config.analyses = AnalysisSet::from_bits(1u | static_cast<uint32_t>(state.range(0)) << 1);
  CaptureSession* session = CaptureSession::create(config);  // lives as long as the process
  ThreadContext* t = session->start_thread(session->reserve_thread_id(), -1, 0, 1, 0);
  CommunicationAnalyzer& comm = session->communication();
  CommunicationAnalyzer::ThreadState& c = *t->comm.load();
  auto access = [&](uint64_t pc, uintptr_t a, bool write) {
    write ? comm.write(c, pc, a, 8) : comm.read(c, pc, a, 8);
    CaptureSession::feed_access(*t, session->analyzers(), pc, a, 8, write);
  };
  StencilStreams streams;
  streams.initialize(access);
  for (auto _ : state) streams.step(access);
  state.SetItemsProcessed(state.iterations() * StencilStreams::kAccessesPerStep);
}
BENCHMARK(AllAnalyzersStencilStep)->Arg(0)->Arg(1)->Arg(2)->Arg(4)->Arg(8)->Arg(15);

void FalseSharingPrivateReread(benchmark::State& state) {
  FalseSharingDetector detector(FalseSharingConfig{});
  auto* t = detector.attach(0);
  for (size_t g = 0; g < kGranules; ++g) detector.access(*t, 0x401000, address_of(g), 8, true);
  size_t g = 0;
  for (auto _ : state) {
    detector.access(*t, 0x401010, address_of(g), 8, false);
    g = (g + 1) % kGranules;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(FalseSharingPrivateReread);

// One event = two threads incrementing their own counters in one line,
// alternately: every access is a line transfer (false sharing).
void FalseSharingTransfer(benchmark::State& state) {
  FalseSharingDetector detector(FalseSharingConfig{});
  FalseSharingDetector::ThreadState* t[2] = {detector.attach(0), detector.attach(1)};
  const uintptr_t line = address_of(0);
  unsigned who = 0;
  for (auto _ : state) {
    detector.access(*t[who], 0x401000 + who, line + 8 * who, 8, true);
    who ^= 1;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(FalseSharingTransfer);

void TraceRecorderRegularStep(benchmark::State& state) {
  MemoryTraceConfig config;
  config.max_threads = 1;
  MemoryTraceRecorder recorder(config);
  auto* t = recorder.attach(0);
  uint64_t address = 0x7f0000000000;
  for (auto _ : state) {
    recorder.access(*t, 0x401000, address, 8, false);
    address += 8;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(TraceRecorderRegularStep);

}  // namespace
