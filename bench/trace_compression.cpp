// Nested-loop trace compression (analyzers/traces): for address streams of
// typical kernels, how small the encoding gets (ratio against 8 bytes per
// address, MAQAO's concern) and what the recorder costs per access. Printed
// as a table by bench/run.sh; issue targets: ratio above 1000x on regular
// kernels, lossless everywhere.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include "analyzers/traces/memory_trace_recorder.h"

namespace {

using weft::MemoryTraceRecorder;

// One kernel: the address stream of one instruction in one thread.
struct Kernel {
  const char* name;
  std::function<void(const std::function<void(uint64_t)>&)> addresses;
};

const uint64_t kBase = 0x7f0000000000;

std::vector<Kernel> kernels() {
  return {
      {"stream a[i], 1M",
       [](const auto& emit) {
         for (uint64_t i = 0; i < (1u << 20); ++i) emit(kBase + 8 * i);
       }},
      {"row-major 1024x1024",
       [](const auto& emit) {
         for (uint64_t i = 0; i < 1024; ++i)
           for (uint64_t j = 0; j < 1024; ++j) emit(kBase + 8 * (i * 1024 + j));
       }},
      {"column-wise 1024x1024",
       [](const auto& emit) {
         for (uint64_t j = 0; j < 1024; ++j)
           for (uint64_t i = 0; i < 1024; ++i) emit(kBase + 8 * (i * 1024 + j));
       }},
      {"dgemm c[i][j] (j,i,k) 128^3",
       [](const auto& emit) {
         for (uint64_t j = 0; j < 128; ++j)
           for (uint64_t i = 0; i < 128; ++i)
             for (uint64_t k = 0; k < 128; ++k) emit(kBase + 8 * (i * 128 + j));
       }},
      {"stencil 3D 128^3 interior",
       [](const auto& emit) {
         for (uint64_t z = 1; z < 127; ++z)
           for (uint64_t y = 1; y < 127; ++y)
             for (uint64_t x = 1; x < 127; ++x) emit(kBase + 8 * ((z * 128 + y) * 128 + x));
       }},
      {"random 1M in 64 MiB",
       [](const auto& emit) {
         std::mt19937_64 random(42);
         for (uint64_t i = 0; i < (1u << 20); ++i) emit(kBase + 8 * (random() % (8u << 20)));
       }},
  };
}

void compress(benchmark::State& state, const Kernel& kernel) {
  std::vector<uint64_t> stream;
  kernel.addresses([&](uint64_t a) { stream.push_back(a); });
  uint64_t encoded = 0, lost = 0;
  for (auto _ : state) {
    weft::MemoryTraceConfig config;
    config.max_threads = 1;
    MemoryTraceRecorder recorder(config);
    MemoryTraceRecorder::ThreadState* t = recorder.attach(0);
    for (uint64_t a : stream) recorder.access(*t, 0x401000, a, 8, false);
    recorder.finish();
    encoded = 0;
    recorder.for_each_stream([&](const weft::TraceStreamHeader& h, const auto&) {
      encoded += h.encoded_bytes;
      lost += h.lost;
    });
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * stream.size()));
  state.counters["accesses"] = static_cast<double>(stream.size());
  state.counters["encoded_bytes"] = static_cast<double>(encoded);
  state.counters["ratio"] = 8.0 * static_cast<double>(stream.size()) / static_cast<double>(encoded);
  state.counters["lost"] = static_cast<double>(lost);
  state.counters["ns_per_access"] = benchmark::Counter(
      static_cast<double>(stream.size()),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

const bool registered = [] {
  for (const Kernel& k : kernels())
    benchmark::RegisterBenchmark((std::string("trace_compression/") + k.name).c_str(),
                                 [k](benchmark::State& s) { compress(s, k); })
        ->Unit(benchmark::kMillisecond);
  return true;
}();

}  // namespace
