// weft's micro-benchmarks of this machine's memory hierarchy, single thread:
// the sustained load and store bandwidth of a stride-1 stream over a working
// set, and the load-to-use latency of a pointer chase over a random cyclic
// permutation of the working set's cache lines. Time is read with rdtsc:
// cycles are TSC ticks (reference cycles, not core cycles: this VM has no
// hardware counters). docs/loops.md, "Calibration".
#pragma once

#include <cstddef>
#include <cstdint>

namespace weft {

// TSC ticks per second, measured against CLOCK_MONOTONIC (the best of a few
// windows of ~20 ms each).
double measure_tsc_hz();

// TSC ticks per core cycle while this code runs: the ticks of a chain of
// dependent 64-bit multiplies (three core cycles each on every x86-64 core
// of the last fifteen years; an add chain is not one cycle per add on
// cores that fold immediates in the renamer), the difference of two chain
// lengths (the reading of the TSC cancels out), the best (lowest) of
// `repetitions` short runs.
// Below 1 when the core runs faster than the TSC (turbo), above when slower.
double tsc_ticks_per_core_cycle(unsigned repetitions);

// An anonymous mapping of `bytes` (transparent huge pages asked for), every
// page touched once so no page fault falls in a measurement.
class BenchmarkBuffer {
 public:
  explicit BenchmarkBuffer(size_t bytes);
  ~BenchmarkBuffer();
  BenchmarkBuffer(const BenchmarkBuffer&) = delete;
  BenchmarkBuffer& operator=(const BenchmarkBuffer&) = delete;
  std::byte* data() const { return data_; }
  size_t size() const { return bytes_; }

 private:
  std::byte* data_ = nullptr;
  size_t bytes_ = 0;
};

// Bytes per TSC tick of a stride-1 read (resp. write) stream over the first
// `working_set` bytes of `buffer` (a multiple of 128), passes repeated until
// at least `bytes_per_repetition` bytes moved; the best of `repetitions`.
// AVX2 loads and stores when the CPU has AVX2, else SSE2.
double load_bytes_per_tick(const BenchmarkBuffer& buffer, size_t working_set,
                           size_t bytes_per_repetition, unsigned repetitions);
double store_bytes_per_tick(const BenchmarkBuffer& buffer, size_t working_set,
                            size_t bytes_per_repetition, unsigned repetitions);

// A loop's mix of stride-1 streams over one working set, MAQAO's "Load X
// Store Y": `loads` streams read and `stores` streams written in step (a
// 64-byte line of each per step), each in its own part of the working set.
// Each repetition moves at least `bytes_per_repetition` bytes, every stream
// going on from where the last repetition left it (so a working set larger
// than one repetition is not re-read from a cache in between); the best of
// `repetitions`, in bytes (read and written together) per TSC tick.
// Loads and stores at once do not run at the rate the separate load and
// store figures give: on the development guest in RAM a copy (1 load, 1
// store) moves 5.85 bytes per tick where the single streams' figures,
// their times added, give 4.57 (docs/loops.md, "Mixed streams").
// 1 <= loads + stores, loads <= kMaxMixedLoadStreams, stores <=
// kMaxMixedStoreStreams (machine_calibration.h).
class StreamMixBenchmark {
 public:
  StreamMixBenchmark(const BenchmarkBuffer& buffer, size_t working_set, unsigned loads,
                     unsigned stores);
  double bytes_per_tick(size_t bytes_per_repetition, unsigned repetitions);

 private:
  void advance(size_t bytes_per_stream);
  std::byte* base_;
  size_t part_bytes_;  // each stream's part of the working set (a multiple of 64)
  unsigned loads_, stores_;
  size_t cursor_ = 0;  // where every stream goes on, within its part
};

// TSC ticks per dependent load: a chase through one pointer per `line_bytes`
// line of the first `working_set` bytes of `buffer`, the lines linked in a
// random single cycle (Sattolo's shuffle, fixed seed, so no prefetcher can
// predict the next line); `steps` loads per repetition, the best of
// `repetitions`.
double chase_ticks_per_load(const BenchmarkBuffer& buffer, size_t working_set, size_t line_bytes,
                            size_t steps, unsigned repetitions);

}  // namespace weft
