#include "calibration/micro_benchmarks.h"

#include <immintrin.h>
#include <sys/mman.h>
#include <time.h>
#include <x86intrin.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <new>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "calibration/machine_calibration.h"

namespace weft {
namespace {

// rdtsc after every earlier instruction has completed (lfence before), and
// before any later one starts (lfence after).
inline uint64_t ordered_tsc() {
  _mm_lfence();
  const uint64_t ticks = __rdtsc();
  _mm_lfence();
  return ticks;
}

uint64_t monotonic_ns() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1000000000u + static_cast<uint64_t>(now.tv_nsec);
}

// The results the compiler must not drop.
volatile uint64_t benchmark_sink = 0;

__attribute__((target("avx2"))) uint64_t load_pass_avx2(const std::byte* data, size_t bytes) {
  __m256i a = _mm256_setzero_si256(), b = a, c = a, d = a;
  for (const std::byte* p = data; p < data + bytes; p += 128) {
    a = _mm256_or_si256(a, _mm256_load_si256(reinterpret_cast<const __m256i*>(p)));
    b = _mm256_or_si256(b, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + 32)));
    c = _mm256_or_si256(c, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + 64)));
    d = _mm256_or_si256(d, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + 96)));
  }
  const __m256i all = _mm256_or_si256(_mm256_or_si256(a, b), _mm256_or_si256(c, d));
  return static_cast<uint64_t>(_mm256_extract_epi64(all, 0));
}

uint64_t load_pass_sse2(const std::byte* data, size_t bytes) {
  __m128i a = _mm_setzero_si128(), b = a, c = a, d = a;
  for (const std::byte* p = data; p < data + bytes; p += 64) {
    a = _mm_or_si128(a, _mm_load_si128(reinterpret_cast<const __m128i*>(p)));
    b = _mm_or_si128(b, _mm_load_si128(reinterpret_cast<const __m128i*>(p + 16)));
    c = _mm_or_si128(c, _mm_load_si128(reinterpret_cast<const __m128i*>(p + 32)));
    d = _mm_or_si128(d, _mm_load_si128(reinterpret_cast<const __m128i*>(p + 48)));
  }
  const __m128i all = _mm_or_si128(_mm_or_si128(a, b), _mm_or_si128(c, d));
  return static_cast<uint64_t>(_mm_cvtsi128_si64(all));
}

__attribute__((target("avx2"))) void store_pass_avx2(std::byte* data, size_t bytes,
                                                     uint64_t value) {
  const __m256i v = _mm256_set1_epi64x(static_cast<long long>(value));
  for (std::byte* p = data; p < data + bytes; p += 128) {
    _mm256_store_si256(reinterpret_cast<__m256i*>(p), v);
    _mm256_store_si256(reinterpret_cast<__m256i*>(p + 32), v);
    _mm256_store_si256(reinterpret_cast<__m256i*>(p + 64), v);
    _mm256_store_si256(reinterpret_cast<__m256i*>(p + 96), v);
  }
  asm volatile("" ::: "memory");
}

void store_pass_sse2(std::byte* data, size_t bytes, uint64_t value) {
  const __m128i v = _mm_set1_epi64x(static_cast<long long>(value));
  for (std::byte* p = data; p < data + bytes; p += 64) {
    _mm_store_si128(reinterpret_cast<__m128i*>(p), v);
    _mm_store_si128(reinterpret_cast<__m128i*>(p + 16), v);
    _mm_store_si128(reinterpret_cast<__m128i*>(p + 32), v);
    _mm_store_si128(reinterpret_cast<__m128i*>(p + 48), v);
  }
  asm volatile("" ::: "memory");
}

bool has_avx2() {
  static const bool avx2 = __builtin_cpu_supports("avx2");
  return avx2;
}

// One 64-byte line of each of kLoads streams read and kStores streams
// written, `bytes` of each from `offset` (a multiple of 64). GCC's vector
// extension: 32-byte lanes, two AVX2 operations per line in the avx2
// instance, four SSE2 ones in the other.
using Lanes = long long __attribute__((vector_size(32)));
template <unsigned kLoads, unsigned kStores>
__attribute__((always_inline)) inline uint64_t mixed_lines(std::byte* const* streams, size_t offset,
                                                           size_t bytes, uint64_t value) {
  Lanes sum = {};
  const Lanes written = {static_cast<long long>(value), 0, 0, 0};
  for (size_t at = offset; at < offset + bytes; at += 64) {
    for (unsigned s = 0; s < kLoads; ++s) {
      const auto* line = reinterpret_cast<const Lanes*>(streams[s] + at);
      sum |= line[0] | line[1];
    }
    for (unsigned s = 0; s < kStores; ++s) {
      auto* line = reinterpret_cast<Lanes*>(streams[kLoads + s] + at);
      line[0] = written;
      line[1] = written;
    }
  }
  asm volatile("" ::: "memory");
  return static_cast<uint64_t>(sum[0] | sum[1] | sum[2] | sum[3]);
}
template <unsigned kLoads, unsigned kStores>
__attribute__((target("avx2"))) uint64_t mixed_lines_avx2(std::byte* const* streams, size_t offset,
                                                          size_t bytes, uint64_t value) {
  return mixed_lines<kLoads, kStores>(streams, offset, bytes, value);
}
template <unsigned kLoads, unsigned kStores>
uint64_t mixed_lines_sse2(std::byte* const* streams, size_t offset, size_t bytes, uint64_t value) {
  return mixed_lines<kLoads, kStores>(streams, offset, bytes, value);
}

using MixedLines = uint64_t (*)(std::byte* const*, size_t, size_t, uint64_t);
constexpr unsigned kMixColumns = kMaxMixedStoreStreams + 1;
template <bool kAvx2, unsigned kIndex>
constexpr MixedLines mixed_instance() {
  constexpr unsigned loads = kIndex / kMixColumns, stores = kIndex % kMixColumns;
  if constexpr (loads + stores == 0)
    return nullptr;
  else if constexpr (kAvx2)
    return &mixed_lines_avx2<loads, stores>;
  else
    return &mixed_lines_sse2<loads, stores>;
}
template <bool kAvx2, unsigned... kIndex>
constexpr std::array<MixedLines, sizeof...(kIndex)> mixed_instances(
    std::integer_sequence<unsigned, kIndex...>) {
  return {mixed_instance<kAvx2, kIndex>()...};
}
// Indexed by loads x kMixColumns + stores.
constexpr auto kMixedAvx2 = mixed_instances<true>(
    std::make_integer_sequence<unsigned, (kMaxMixedLoadStreams + 1) * kMixColumns>());
constexpr auto kMixedSse2 = mixed_instances<false>(
    std::make_integer_sequence<unsigned, (kMaxMixedLoadStreams + 1) * kMixColumns>());

// Passes over `working_set` so that a repetition moves at least `minimum` bytes.
size_t passes_for(size_t working_set, size_t minimum) {
  return std::max<size_t>(1, (minimum + working_set - 1) / working_set);
}

}  // namespace

double measure_tsc_hz() {
  double best = 0;
  // The window whose ticks per nanosecond are the least disturbed: the one
  // measured with the shortest clock reads around it is kept (a preemption
  // between a clock read and rdtsc shows as a longer read).
  uint64_t best_read_span = UINT64_MAX;
  for (int window = 0; window < 5; ++window) {
    const uint64_t tsc_before = ordered_tsc();
    const uint64_t ns_start = monotonic_ns();
    const uint64_t tsc_start = ordered_tsc();
    while (monotonic_ns() - ns_start < 20000000u) {
    }
    const uint64_t tsc_end_before = ordered_tsc();
    const uint64_t ns_end = monotonic_ns();
    const uint64_t tsc_end = ordered_tsc();
    const uint64_t read_span = (tsc_start - tsc_before) + (tsc_end - tsc_end_before);
    const double hz =
        static_cast<double>((tsc_end + tsc_end_before) / 2 - (tsc_start + tsc_before) / 2) /
        (static_cast<double>(ns_end - ns_start) * 1e-9);
    if (read_span < best_read_span) {
      best_read_span = read_span;
      best = hz;
    }
  }
  return best;
}

namespace {
// The best ticks of `blocks` x 100 dependent 64-bit multiplies over
// `repetitions` runs. A multiply, not an add: Intel's Golden Cove cores
// (Alder Lake, Sapphire Rapids) fold chains of `add $1` in the renamer and
// run them several to a cycle (measured: 0.145 ticks per add against 0.767
// per imul cycle), while `imul r64, r64` takes 3 cycles on every x86-64
// core of the last fifteen years, Intel and AMD alike.
double multiply_chain_ticks(long blocks, unsigned repetitions) {
  uint64_t best = UINT64_MAX;
  for (unsigned repetition = 0; repetition < repetitions; ++repetition) {
    uint64_t x = 1;
    const uint64_t start = ordered_tsc();
    for (long i = 0; i < blocks; ++i)
      asm volatile(
          ".rept 100\n\t"
          "imul %0, %0\n\t"
          ".endr"
          : "+r"(x));
    best = std::min(best, ordered_tsc() - start);
    benchmark_sink = x;
  }
  return static_cast<double>(best);
}
constexpr double kMultiplyLatencyCycles = 3.0;
}  // namespace

double tsc_ticks_per_core_cycle(unsigned repetitions) {
  constexpr long kBlocks = 20;                 // 2,000 multiplies: a few microseconds
  multiply_chain_ticks(kBlocks, repetitions);  // the core leaves its idle clock
  const double longer = multiply_chain_ticks(2 * kBlocks, repetitions);
  const double shorter = multiply_chain_ticks(kBlocks, repetitions);
  return (longer - shorter) / (kBlocks * 100.0 * kMultiplyLatencyCycles);
}

BenchmarkBuffer::BenchmarkBuffer(size_t bytes) : bytes_(bytes) {
  void* mapping = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapping == MAP_FAILED)
    throw std::runtime_error("cannot map " + std::to_string(bytes) + " bytes for the benchmarks");
  // Huge pages, when the kernel gives them, keep TLB misses out of the
  // latency of the larger working sets.
  madvise(mapping, bytes, MADV_HUGEPAGE);
  data_ = static_cast<std::byte*>(mapping);
  std::memset(data_, 1, bytes);
}

BenchmarkBuffer::~BenchmarkBuffer() { munmap(data_, bytes_); }

double load_bytes_per_tick(const BenchmarkBuffer& buffer, size_t working_set,
                           size_t bytes_per_repetition, unsigned repetitions) {
  const size_t passes = passes_for(working_set, bytes_per_repetition);
  auto pass = has_avx2() ? load_pass_avx2 : load_pass_sse2;
  uint64_t sink = pass(buffer.data(), working_set);  // warm-up: the working set in its level
  double best = 0;
  for (unsigned repetition = 0; repetition < repetitions; ++repetition) {
    const uint64_t start = ordered_tsc();
    for (size_t i = 0; i < passes; ++i) sink += pass(buffer.data(), working_set);
    const uint64_t ticks = ordered_tsc() - start;
    best = std::max(best, static_cast<double>(passes * working_set) / static_cast<double>(ticks));
  }
  benchmark_sink = sink;
  return best;
}

double store_bytes_per_tick(const BenchmarkBuffer& buffer, size_t working_set,
                            size_t bytes_per_repetition, unsigned repetitions) {
  const size_t passes = passes_for(working_set, bytes_per_repetition);
  auto pass = has_avx2() ? store_pass_avx2 : store_pass_sse2;
  pass(buffer.data(), working_set, 2);
  double best = 0;
  for (unsigned repetition = 0; repetition < repetitions; ++repetition) {
    const uint64_t start = ordered_tsc();
    for (size_t i = 0; i < passes; ++i) pass(buffer.data(), working_set, i);
    const uint64_t ticks = ordered_tsc() - start;
    best = std::max(best, static_cast<double>(passes * working_set) / static_cast<double>(ticks));
  }
  return best;
}

namespace {
// Stream k's part begins k x kPartSkew bytes further than an even split
// would put it: parts a multiple of 4 KiB apart would make every load
// alias the stores' addresses in their low 12 bits (4K aliasing), a cost
// of the layout and not of the memory.
constexpr size_t kPartSkew = 7 * 64;
}  // namespace

StreamMixBenchmark::StreamMixBenchmark(const BenchmarkBuffer& buffer, size_t working_set,
                                       unsigned loads, unsigned stores)
    : base_(buffer.data()), loads_(loads), stores_(stores) {
  const unsigned streams = loads + stores;
  if (streams == 0 || loads > kMaxMixedLoadStreams || stores > kMaxMixedStoreStreams)
    throw std::invalid_argument(
        "a stream mix is 0 to 4 loads and 0 to 2 stores, one stream at least");
  working_set = std::min(working_set, buffer.size());
  if (working_set < streams * (kPartSkew + 64))
    throw std::invalid_argument("the working set is too small for the stream mix");
  part_bytes_ = (working_set - streams * kPartSkew) / streams / 64 * 64;
}

void StreamMixBenchmark::advance(size_t bytes_per_stream) {
  std::byte* streams[kMaxMixedLoadStreams + kMaxMixedStoreStreams];
  for (unsigned k = 0; k < loads_ + stores_; ++k)
    streams[k] = base_ + k * (part_bytes_ + kPartSkew);
  const MixedLines lines = (has_avx2() ? kMixedAvx2 : kMixedSse2)[loads_ * kMixColumns + stores_];
  uint64_t sink = 0;
  while (bytes_per_stream > 0) {
    const size_t run = std::min(bytes_per_stream, part_bytes_ - cursor_);
    sink += lines(streams, cursor_, run, cursor_);
    bytes_per_stream -= run;
    cursor_ = (cursor_ + run) % part_bytes_;
  }
  benchmark_sink = sink;
}

double StreamMixBenchmark::bytes_per_tick(size_t bytes_per_repetition, unsigned repetitions) {
  const unsigned streams = loads_ + stores_;
  const size_t per_stream = std::max<size_t>(64, bytes_per_repetition / streams / 64 * 64);
  // Warm-up: a working set that fits a cache is in it, a larger one's
  // streams are running.
  advance(std::min(per_stream, part_bytes_));
  double best = 0;
  for (unsigned repetition = 0; repetition < repetitions; ++repetition) {
    const uint64_t start = ordered_tsc();
    advance(per_stream);
    const uint64_t ticks = ordered_tsc() - start;
    best = std::max(best, static_cast<double>(per_stream * streams) / static_cast<double>(ticks));
  }
  return best;
}

double chase_ticks_per_load(const BenchmarkBuffer& buffer, size_t working_set, size_t line_bytes,
                            size_t steps, unsigned repetitions) {
  const size_t all_lines = working_set / line_bytes;
  if (all_lines < 2) throw std::invalid_argument("the pointer chase needs at least two lines");
  // A cycle through every line of a large working set costs a cache miss
  // per line to link, each time the streams overwrote it: one through at
  // most kMaxChaseLines lines spread evenly over it (every `spacing`-th)
  // misses as well, and no repetition comes back to a line (the chase
  // loads far fewer).
  constexpr size_t kMaxChaseLines = size_t{1} << 20;
  const size_t spacing = (all_lines + kMaxChaseLines - 1) / kMaxChaseLines;
  const size_t lines = all_lines / spacing;
  line_bytes *= spacing;
  // Sattolo's shuffle: a uniformly random permutation with a single cycle,
  // so the chase visits every line before it repeats.
  std::vector<uint32_t> order(lines);
  std::iota(order.begin(), order.end(), 0u);
  std::mt19937_64 random(0x5eed);
  for (size_t i = lines - 1; i > 0; --i) {
    std::uniform_int_distribution<size_t> pick(0, i - 1);
    std::swap(order[i], order[pick(random)]);
  }
  std::byte* base = buffer.data();
  for (size_t i = 0; i < lines; ++i) {
    std::byte* line = base + static_cast<size_t>(order[i]) * line_bytes;
    std::byte* next = base + static_cast<size_t>(order[(i + 1) % lines]) * line_bytes;
    std::memcpy(line, &next, sizeof next);
  }
  auto chase = [](std::byte* from, size_t count) {
    void* p = from;
    for (size_t i = 0; i < count; ++i) p = *static_cast<void**>(p);
    return p;
  };
  void* position = chase(base, std::min(lines, steps));  // warm-up
  double best = 0;
  for (unsigned repetition = 0; repetition < repetitions; ++repetition) {
    const uint64_t start = ordered_tsc();
    position = chase(static_cast<std::byte*>(position), steps);
    const uint64_t ticks = ordered_tsc() - start;
    const double per_load = static_cast<double>(ticks) / static_cast<double>(steps);
    if (repetition == 0 || per_load < best) best = per_load;
  }
  benchmark_sink = reinterpret_cast<uintptr_t>(position);
  return best;
}

}  // namespace weft
