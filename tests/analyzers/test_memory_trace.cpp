// Memory address traces by nested loop recognition: the offline model
// (common/loop_trace.h: expansion, text form, binary encoding) and the online
// recorder (analyzers/traces/memory_trace_recorder.h), whose output must
// decode to exactly the recorded addresses.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "analyzers/traces/memory_trace_recorder.h"
#include "common/loop_trace.h"
#include "common/loop_trace_format.h"

namespace weft {
namespace {

// `count` 8-byte slots picked at random (fixed seed) among `slots` from
// 0x7f0000000000: an irregular stream, a gather's.
std::vector<uint64_t> random_slots(size_t count, uint64_t slots, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> addresses;
  addresses.reserve(count);
  for (size_t i = 0; i < count; ++i) addresses.push_back(0x7f0000000000 + 8 * (rng() % slots));
  return addresses;
}

LoopTrace trace_of(std::vector<TraceNode> elements) {
  LoopTrace trace;
  trace.elements = std::move(elements);
  return trace;
}

struct Captured {
  TraceStreamHeader header;
  std::vector<uint8_t> bytes;
  std::vector<TraceSegmentRun> segments;
  LoopTrace decoded() const { return decode_loop_trace(bytes.data(), bytes.size()); }
};

// Every stream of `recorder`, sorted by (thread, pc); checks that Body
// writes header.encoded_bytes bytes, the same on every call.
std::vector<Captured> capture(MemoryTraceRecorder& recorder) {
  recorder.finish();
  std::vector<Captured> streams;
  recorder.for_each_stream(
      [&](const TraceStreamHeader& header, const MemoryTraceRecorder::Body& body) {
        Captured c{header, {}, {}};
        auto append = [&](const void* data, size_t n) {
          const auto* b = static_cast<const uint8_t*>(data);
          c.bytes.insert(c.bytes.end(), b, b + n);
        };
        body.write(append);
        EXPECT_EQ(c.bytes.size(), header.encoded_bytes);
        std::vector<uint8_t> runs;
        body.write_segments([&](const void* data, size_t n) {
          const auto* b = static_cast<const uint8_t*>(data);
          runs.insert(runs.end(), b, b + n);
        });
        EXPECT_EQ(runs.size(), header.segment_runs * sizeof(TraceSegmentRun));
        c.segments.resize(runs.size() / sizeof(TraceSegmentRun));
        if (!runs.empty()) std::memcpy(c.segments.data(), runs.data(), runs.size());
        std::vector<uint8_t> again;
        body.write([&](const void* data, size_t n) {
          const auto* b = static_cast<const uint8_t*>(data);
          again.insert(again.end(), b, b + n);
        });
        EXPECT_EQ(again, c.bytes);
        streams.push_back(std::move(c));
      });
  std::sort(streams.begin(), streams.end(), [](const Captured& a, const Captured& b) {
    return std::tie(a.header.thread, a.header.pc) < std::tie(b.header.thread, b.header.pc);
  });
  return streams;
}

MemoryTraceConfig small_config() {
  MemoryTraceConfig config;
  config.max_threads = 8;
  return config;
}

constexpr uint64_t kPc = 0x401234;

// The one stream of `addresses`, read by instruction kPc of thread 0.
Captured record(const std::vector<uint64_t>& addresses,
                const MemoryTraceConfig& config = small_config()) {
  MemoryTraceRecorder recorder(config);
  MemoryTraceRecorder::ThreadState* t = recorder.attach(0);
  EXPECT_NE(t, nullptr);
  for (uint64_t a : addresses) recorder.access(*t, kPc, a, 8, false);
  std::vector<Captured> streams = capture(recorder);
  if (addresses.empty()) {  // an instruction never executed has no stream
    EXPECT_TRUE(streams.empty());
    return Captured{{}, {0x00}, {}};
  }
  EXPECT_EQ(streams.size(), 1u);
  return streams.empty() ? Captured{} : streams[0];
}

// One read of instruction `pc` as the hooks give it: the inline part first,
// the rest out of line.
void read_as_the_hooks_do(MemoryTraceRecorder& recorder, MemoryTraceRecorder::ThreadState& t,
                          uint64_t pc, uint64_t address) {
  if (!MemoryTraceRecorder::access_fast(t, pc, address, 8, false))
    recorder.access(t, pc, address, 8, false);
}

// Records, checks losslessness both ways, returns the decoded trace.
LoopTrace round_trip(const std::vector<uint64_t>& addresses,
                     const MemoryTraceConfig& config = small_config()) {
  const Captured c = record(addresses, config);
  EXPECT_EQ(c.header.accesses, addresses.size());
  EXPECT_EQ(c.header.lost, 0u);
  const LoopTrace trace = c.decoded();
  EXPECT_EQ(trace_length(trace), addresses.size());
  EXPECT_TRUE(expand_loop_trace(trace) == addresses);
  EXPECT_EQ(encode_loop_trace(trace), c.bytes);
  return trace;
}

void expect_corrupt(const std::vector<uint8_t>& bytes) {
  try {
    decode_loop_trace(bytes.data(), bytes.size());
    ADD_FAILURE() << "decoded a corrupt trace";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("corrupt memory trace: ", 0), 0u) << e.what();
  }
}

// ---------------------------------------------------------------------------
// Offline model.

TEST(LoopTrace, FormatPrintsLoopsValuesAndSignedCoefficients) {
  const LoopTrace trace = trace_of({
      trace_value(0x1000),
      trace_loop(4, {trace_value(0x2000, {-8}), trace_loop(2, {trace_value(0x3000, {0, 16})})}),
  });
  EXPECT_EQ(format_loop_trace(trace),
            "val 0x1000\n"
            "for i0 = 0 to 3\n"
            "  val 0x2000 - 8*i0\n"
            "  for i1 = 0 to 1\n"
            "    val 0x3000 + 16*i1\n");
  EXPECT_EQ(format_loop_trace(trace, 2),
            "val 0x1000\n"
            "for i0 = 0 to 3\n"
            "... (1 more elements)\n");
  EXPECT_EQ(format_loop_trace(trace, 0), "... (2 more elements)\n");
  EXPECT_EQ(format_loop_trace(trace_of({trace_value(1, {}), trace_value(2, {})}), 1),
            "val 0x1\n... (1 more elements)\n");
}

TEST(LoopTrace, LengthDepthAndExpansion) {
  const LoopTrace trace = trace_of({
      trace_value(0x1000),
      trace_loop(3, {trace_value(0x2000, {-8}), trace_loop(2, {trace_value(0x3000, {0, 16})})}),
  });
  EXPECT_EQ(trace_length(trace), 1u + 3u * 3u);
  EXPECT_EQ(trace_depth(trace), 2u);
  EXPECT_EQ(trace_depth(trace_of({trace_value(5)})), 0u);
  const std::vector<uint64_t> expected = {0x1000, 0x2000, 0x3000, 0x3010, 0x1ff8,
                                          0x3000, 0x3010, 0x1ff0, 0x3000, 0x3010};
  EXPECT_EQ(expand_loop_trace(trace), expected);
  EXPECT_EQ(expand_loop_trace(trace, 4),
            std::vector<uint64_t>(expected.begin(), expected.begin() + 4));
  std::vector<uint64_t> visited;
  expand_loop_trace(
      trace, [&](uint64_t a) { visited.push_back(a); }, 7);
  EXPECT_EQ(visited, std::vector<uint64_t>(expected.begin(), expected.begin() + 7));
  // Arithmetic is modulo 2^64.
  EXPECT_EQ(expand_loop_trace(trace_of({trace_loop(2, {trace_value(8, {-16})})})),
            (std::vector<uint64_t>{8, ~uint64_t{0} - 7}));
}

// Samples are the addresses at floor(i * length / count), found without
// expanding: the same as picking them from the expansion.
TEST(LoopTrace, SamplesAreEvenlySpreadAddresses) {
  const LoopTrace trace = trace_of({
      trace_value(0x1000),
      trace_loop(3, {trace_value(0x2000, {-8}), trace_loop(2, {trace_value(0x3000, {0, 16})})}),
  });
  const std::vector<uint64_t> all = expand_loop_trace(trace);
  EXPECT_EQ(sample_loop_trace(trace, 10), all);
  EXPECT_EQ(sample_loop_trace(trace, 64), all);
  EXPECT_EQ(sample_loop_trace(trace, 4), (std::vector<uint64_t>{all[0], all[2], all[5], all[7]}));
  EXPECT_EQ(sample_loop_trace(trace, 1), std::vector<uint64_t>{0x1000});
  EXPECT_TRUE(sample_loop_trace(trace, 0).empty());
  EXPECT_TRUE(sample_loop_trace(LoopTrace{}, 8).empty());
  // A million-address nest: the 1000 samples are every 1000th address.
  const LoopTrace nest =
      trace_of({trace_loop(1000, {trace_loop(1000, {trace_value(0x10000, {8000, 8})})})});
  const std::vector<uint64_t> samples = sample_loop_trace(nest, 1000);
  ASSERT_EQ(samples.size(), 1000u);
  for (uint64_t i = 0; i < 1000; ++i) EXPECT_EQ(samples[i], 0x10000 + 8000 * i) << i;
}

// The sampler over the encoding picks what the sampler over the decoded
// trace picks, element by element; a damaged encoding is an error.
TEST(LoopTrace, SamplesFromTheEncodingAreTheDecodedTracesSamples) {
  std::vector<TraceNode> elements;
  uint64_t x = 0x9e3779b97f4a7c15;
  for (int i = 0; i < 5000; ++i) {  // an irregular stream: top-level values
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    elements.push_back(trace_value(0x7f0000000000 + (x & 0xffff8)));
    if (i % 997 == 0)
      elements.push_back(trace_loop(i + 3, {trace_value(0x1000, {8}), trace_value(0x2000, {-8})}));
  }
  const LoopTrace trace = trace_of(std::move(elements));
  const std::vector<uint8_t> bytes = encode_loop_trace(trace);
  for (size_t count : {0, 1, 2, 63, 64, 1000, 100000})
    EXPECT_EQ(sample_encoded_loop_trace(bytes.data(), bytes.size(), count),
              sample_loop_trace(trace, count))
        << count;
  const uint8_t empty[] = {0x00};
  EXPECT_TRUE(sample_encoded_loop_trace(empty, 1, 8).empty());
  EXPECT_THROW(sample_encoded_loop_trace(bytes.data(), bytes.size() - 1, 8), std::runtime_error);
}

TEST(LoopTrace, EncodingIsTheDocumentedBytes) {
  // 2 elements | loop 4 x 1 | value, 1 coefficient, base +0x1000, 8 | value, base -8.
  const LoopTrace trace = trace_of({trace_loop(4, {trace_value(0x1000, {8})}), trace_value(0xff8)});
  const std::vector<uint8_t> bytes = {0x02, 0x01, 0x04, 0x01, 0x02, 0x80, 0x40, 0x10, 0x00, 0x0f};
  EXPECT_EQ(encode_loop_trace(trace), bytes);
  EXPECT_EQ(decode_loop_trace(bytes.data(), bytes.size()), trace);
  EXPECT_EQ(encode_loop_trace(LoopTrace{}), std::vector<uint8_t>{0x00});
  const uint8_t empty[] = {0x00};
  EXPECT_EQ(decode_loop_trace(empty, 1), LoopTrace{});
}

TEST(LoopTrace, EncodeRejectsTracesOutsideTheModel) {
  EXPECT_THROW(encode_loop_trace(trace_of({trace_loop(0, {trace_value(1, {1})})})),
               std::invalid_argument);
  EXPECT_THROW(encode_loop_trace(trace_of({trace_loop(2, {})})), std::invalid_argument);
  EXPECT_THROW(encode_loop_trace(trace_of({trace_loop(2, {trace_value(1)})})),
               std::invalid_argument);
  EXPECT_THROW(encode_loop_trace(trace_of({trace_value(1, {3})})), std::invalid_argument);
  TraceNode deep = trace_value(0, std::vector<int64_t>(17, 1));
  for (int d = 0; d < 17; ++d) deep = trace_loop(1, {deep});
  EXPECT_THROW(encode_loop_trace(trace_of({deep})), std::invalid_argument);
}

TEST(LoopTrace, EncodingRoundTripsExtremeValues) {
  const int64_t kMin = INT64_MIN;
  const int64_t kMax = INT64_MAX;
  TraceNode deepest = trace_value(~uint64_t{0}, std::vector<int64_t>(16, kMin));
  for (int d = 0; d < 16; ++d)
    deepest = trace_loop(~uint64_t{0} - static_cast<uint64_t>(d), {deepest});
  const LoopTrace trace =
      trace_of({trace_value(0), trace_value(~uint64_t{0}), trace_value(0),
                trace_loop(1, {trace_value(1, {kMax}), trace_value(2, {kMin})}), deepest});
  const std::vector<uint8_t> bytes = encode_loop_trace(trace);
  EXPECT_EQ(decode_loop_trace(bytes.data(), bytes.size()), trace);
  EXPECT_EQ(trace_depth(trace), 16u);
  EXPECT_EQ(trace_length(trace), ~uint64_t{0});  // saturated
}

TEST(LoopTrace, DecodeRejectsCorruptInput) {
  const LoopTrace trace = trace_of({trace_loop(64, {trace_value(0x7f0012340000, {8}),
                                                    trace_loop(3, {trace_value(0x10, {4, -4})})}),
                                    trace_value(5)});
  const std::vector<uint8_t> bytes = encode_loop_trace(trace);
  ASSERT_EQ(decode_loop_trace(bytes.data(), bytes.size()), trace);

  // Truncated, at every length.
  for (size_t n = 0; n < bytes.size(); ++n)
    expect_corrupt(std::vector<uint8_t>(bytes.begin(), bytes.begin() + n));
  // Trailing bytes.
  std::vector<uint8_t> trailing = bytes;
  trailing.push_back(0);
  expect_corrupt(trailing);
  // Bad tags: odd bytes other than 0x01, even bytes beyond 2 * 16.
  expect_corrupt({0x01, 0x03, 0x00});
  expect_corrupt({0x01, 0x22, 0x00});
  expect_corrupt({0x01, 0xff, 0x00});
  // Loop count 0, empty body.
  expect_corrupt({0x01, 0x01, 0x00, 0x01, 0x02, 0x00, 0x00});
  expect_corrupt({0x01, 0x01, 0x02, 0x00});
  // Coefficient count not equal to the depth.
  expect_corrupt({0x01, 0x02, 0x00, 0x00});
  expect_corrupt({0x01, 0x01, 0x02, 0x01, 0x00, 0x00});
  // A varint longer than 64 bits.
  expect_corrupt({0x01, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02});
  // 16 nested loops are fine, 17 are not.
  std::vector<uint8_t> deep = {0x01};
  for (int d = 0; d < 16; ++d) deep.insert(deep.end(), {0x01, 0x01, 0x01});
  deep.push_back(loop_trace_format::value_tag(16));
  deep.insert(deep.end(), 17, 0x00);
  EXPECT_EQ(trace_depth(decode_loop_trace(deep.data(), deep.size())), 16u);
  std::vector<uint8_t> deeper = {0x01};
  for (int d = 0; d < 17; ++d) deeper.insert(deeper.end(), {0x01, 0x01, 0x01});
  deeper.push_back(loop_trace_format::value_tag(16));
  deeper.insert(deeper.end(), 17, 0x00);
  expect_corrupt(deeper);
  // A huge element count with no elements is truncated, not an allocation.
  expect_corrupt({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01});
  expect_corrupt({0x01, 0x01, 0x02, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01});
}

// ---------------------------------------------------------------------------
// Online recorder.

TEST(MemoryTrace, RecognizesTheFigure12Nest) {
  // MAQAO Fig. 12: for j < 8, for i < 64, for k < 64: c[i * NRA + j] += ...
  std::vector<uint64_t> addresses;
  for (uint64_t j = 0; j < 8; ++j)
    for (uint64_t i = 0; i < 64; ++i)
      for (uint64_t k = 0; k < 64; ++k) addresses.push_back(0x62cd5a0 + 64 * j + 512 * i);
  const LoopTrace trace = round_trip(addresses);
  EXPECT_EQ(trace,
            trace_of({trace_loop(
                8, {trace_loop(64, {trace_loop(64, {trace_value(0x62cd5a0, {64, 512, 0})})})})}));
  EXPECT_EQ(format_loop_trace(trace),
            "for i0 = 0 to 7\n"
            "  for i1 = 0 to 63\n"
            "    for i2 = 0 to 63\n"
            "      val 0x62cd5a0 + 64*i0 + 512*i1\n");
  EXPECT_EQ(trace_depth(trace), 3u);
}

TEST(MemoryTrace, OneDimensionalStrides) {
  for (int64_t stride : {8, -8, 0, 4096, -3}) {
    std::vector<uint64_t> addresses;
    for (uint64_t i = 0; i < 1000; ++i)
      addresses.push_back(0x7f0000100000 + static_cast<uint64_t>(stride) * i);
    EXPECT_EQ(round_trip(addresses),
              trace_of({trace_loop(1000, {trace_value(0x7f0000100000, {stride})})}))
        << "stride " << stride;
  }
}

TEST(MemoryTrace, ShortStreamsStayValuesUntilThreeTermsAgree) {
  EXPECT_EQ(round_trip({}), LoopTrace{});
  EXPECT_EQ(round_trip({0x100}), trace_of({trace_value(0x100)}));
  EXPECT_EQ(round_trip({0x100, 0x108}), trace_of({trace_value(0x100), trace_value(0x108)}));
  EXPECT_EQ(round_trip({0x100, 0x108, 0x110}),
            trace_of({trace_loop(3, {trace_value(0x100, {8})})}));
  EXPECT_EQ(round_trip({0x100, 0x108, 0x118}),
            trace_of({trace_value(0x100), trace_value(0x108), trace_value(0x118)}));
}

TEST(MemoryTrace, RepeatedAddressIsAStrideZeroLoop) {
  EXPECT_EQ(round_trip(std::vector<uint64_t>(5000, 0x601040)),
            trace_of({trace_loop(5000, {trace_value(0x601040, {0})})}));
}

TEST(MemoryTrace, TwoDimensionalNests) {
  std::vector<uint64_t> rows;  // row-major, rows going up, columns going down
  for (uint64_t i = 0; i < 50; ++i)
    for (uint64_t j = 0; j < 30; ++j) rows.push_back(0x500000 + 1000 * i - 16 * j);
  EXPECT_EQ(round_trip(rows),
            trace_of({trace_loop(50, {trace_loop(30, {trace_value(0x500000, {1000, -16})})})}));

  std::vector<uint64_t> same_row;  // the same row 10 times: outer stride 0
  for (uint64_t i = 0; i < 10; ++i)
    for (uint64_t j = 0; j < 20; ++j) same_row.push_back(0x500000 + 8 * j);
  EXPECT_EQ(round_trip(same_row),
            trace_of({trace_loop(10, {trace_loop(20, {trace_value(0x500000, {0, 8})})})}));

  std::vector<uint64_t> columns;  // column-major walk of a 40 x 40 matrix of doubles
  for (uint64_t j = 0; j < 40; ++j)
    for (uint64_t i = 0; i < 40; ++i) columns.push_back(0x500000 + 8 * j + 320 * i);
  EXPECT_EQ(round_trip(columns),
            trace_of({trace_loop(40, {trace_loop(40, {trace_value(0x500000, {8, 320})})})}));
}

// Once a nest's outer loop holds a finished row, the next row's accesses
// are only counted until the row completes (the nested fast path); a row
// that breaks off at any column, a thread that exits mid-row and a budget
// that runs out mid-row record exactly the addresses read, in order.
TEST(MemoryTrace, ARowBrokenAtAnyColumnStaysExact) {
  auto row_address = [](uint64_t i, uint64_t j) { return 0x500000 + 1000 * i - 16 * j; };
  // Per column k of the break, the top-level elements of the trace, as the
  // general step alone builds it (the recorder before the nested fast
  // path gave the same, byte for byte): rows 0-19, the broken row's
  // pieces, rows 21-39.
  const std::pair<uint64_t, size_t> breaks[] = {{0, 3}, {1, 5},  {2, 6}, {3, 5},
                                                {5, 5}, {28, 6}, {29, 5}};
  for (const auto& [k, elements] : breaks) {
    std::vector<uint64_t> addresses;
    for (uint64_t i = 0; i < 40; ++i)
      for (uint64_t j = 0; j < 30; ++j) {
        if (i == 20 && j == k) addresses.push_back(0x900000 + 8 * k);  // one irregular read
        addresses.push_back(row_address(i, j));
      }
    const LoopTrace trace = round_trip(addresses);
    EXPECT_EQ(trace.elements.size(), elements) << k << ": " << format_loop_trace(trace);
  }
  // Predicted rows of a nest whose outer stride is 0 and one whose inner
  // stride is 0 (a column re-read).
  std::vector<uint64_t> same;
  for (uint64_t i = 0; i < 12; ++i)
    for (uint64_t j = 0; j < 16; ++j) same.push_back(0x500000 + 8 * j);
  same.push_back(0x500000 + 8 * 3);  // a row that ends after 1 access
  EXPECT_EQ(round_trip(same).elements.size(), 2u);
  std::vector<uint64_t> column;
  for (uint64_t i = 0; i < 12; ++i)
    for (uint64_t j = 0; j < 16; ++j) column.push_back(0x500000 + 64 * i);
  EXPECT_EQ(round_trip(column),
            trace_of({trace_loop(12, {trace_loop(16, {trace_value(0x500000, {64, 0})})})}));
}

// The general step's work on a nest: three pushes for each of its first
// three rows (a row's loop forms from three values), then none (the rows
// are predicted). Before the nested fast path, three for every row.
TEST(MemoryTrace, ANestsRowsAfterTheThirdTakeNoGeneralStep) {
  MemoryTraceRecorder recorder(small_config());
  MemoryTraceRecorder::ThreadState* t = recorder.attach(0);
  ASSERT_NE(t, nullptr);
  std::vector<uint64_t> addresses;
  for (uint64_t i = 0; i < 100; ++i)
    for (uint64_t j = 0; j < 30; ++j) addresses.push_back(0x500000 + 1000 * i - 16 * j);
  for (uint64_t a : addresses) read_as_the_hooks_do(recorder, *t, kPc, a);
  EXPECT_EQ(t->general_steps, 9u);
  const std::vector<Captured> streams = capture(recorder);
  ASSERT_EQ(streams.size(), 1u);
  EXPECT_EQ(expand_loop_trace(streams[0].decoded()), addresses);
}

// A row pending while the thread's table of streams grows (its entries
// move): the count lives with the stack, not in the entry.
TEST(MemoryTrace, ARowPendingWhileTheTableGrowsStaysExact) {
  MemoryTraceRecorder recorder(small_config());
  MemoryTraceRecorder::ThreadState* t = recorder.attach(0);
  ASSERT_NE(t, nullptr);
  std::vector<uint64_t> rows;
  for (uint64_t i = 0; i < 8; ++i)
    for (uint64_t j = 0; j < 16; ++j) rows.push_back(0x700000 + 512 * i + 8 * j);
  const size_t pause_at = 5 * 16 + 7;  // row 5, column 7: pending
  auto read = [&](uint64_t pc, uint64_t address) {
    read_as_the_hooks_do(recorder, *t, pc, address);
  };
  for (size_t n = 0; n < pause_at; ++n) read(kPc, rows[n]);
  for (uint64_t other = 1; other <= 20000; ++other) read(kPc + other, 0x900000 + 8 * other);
  for (size_t n = pause_at; n < rows.size(); ++n) read(kPc, rows[n]);
  const std::vector<Captured> streams = capture(recorder);
  ASSERT_EQ(streams.size(), 20001u);
  EXPECT_EQ(streams[0].header.lost, 0u);
  EXPECT_EQ(expand_loop_trace(streams[0].decoded()), rows);
}

TEST(MemoryTrace, AThreadThatExitsMidRowKeepsTheRowsAccesses) {
  MemoryTraceRecorder recorder(small_config());
  MemoryTraceRecorder::ThreadState* t = recorder.attach(0);
  ASSERT_NE(t, nullptr);
  std::vector<uint64_t> addresses;
  for (uint64_t i = 0; i < 10; ++i)
    for (uint64_t j = 0; j < 24; ++j) addresses.push_back(0x700000 + 512 * i + 8 * j);
  const size_t exit_at = 5 * 24 + 11;  // row 5, column 11
  for (size_t n = 0; n < addresses.size(); ++n) {
    if (n == exit_at) recorder.finish_thread(*t);
    read_as_the_hooks_do(recorder, *t, kPc, addresses[n]);
  }
  const std::vector<Captured> streams = capture(recorder);
  ASSERT_EQ(streams.size(), 1u);
  EXPECT_EQ(streams[0].header.lost, 0u);
  EXPECT_EQ(expand_loop_trace(streams[0].decoded()), addresses);
}

TEST(MemoryTrace, ABudgetThatRunsOutMidRowKeepsAnExactPrefix) {
  MemoryTraceConfig config = small_config();
  config.max_bytes_per_thread = 64 << 10;
  MemoryTraceRecorder recorder(config);
  MemoryTraceRecorder::ThreadState* t = recorder.attach(0);
  ASSERT_NE(t, nullptr);
  std::vector<uint64_t> rows;
  for (uint64_t i = 0; i < 20; ++i)
    for (uint64_t j = 0; j < 24; ++j) rows.push_back(0x700000 + 512 * i + 8 * j);
  auto read = [&](uint64_t pc, uint64_t address) {
    read_as_the_hooks_do(recorder, *t, pc, address);
  };
  const size_t noise_at = 6 * 24 + 13;  // row 6, column 13: 13 accesses pending
  for (size_t n = 0; n < noise_at; ++n) read(kPc, rows[n]);
  // Other instructions' gathers spend the budget (each stops alone at its
  // share, a 16th of it).
  uint64_t pc = kPc;
  for (uint64_t a : random_slots(400000, 1 << 24, 3)) {
    if (t->exhausted) break;
    pc = pc == kPc + 40 ? kPc + 1 : pc + 1;
    read(pc, a);
  }
  ASSERT_TRUE(t->exhausted);
  for (size_t n = noise_at; n < rows.size(); ++n) read(kPc, rows[n]);
  const std::vector<Captured> streams = capture(recorder);
  ASSERT_EQ(streams.size(), 41u);
  const Captured& nest = streams[0];
  EXPECT_EQ(nest.header.accesses, rows.size());
  // The pending row's accesses were recorded before the first lost one.
  EXPECT_EQ(nest.header.lost, rows.size() - noise_at);
  const std::vector<uint64_t> kept(rows.begin(), rows.begin() + noise_at);
  EXPECT_EQ(expand_loop_trace(nest.decoded()), kept);
}

TEST(MemoryTrace, ThreeDimensionalNest) {
  std::vector<uint64_t> addresses;
  for (uint64_t i = 0; i < 6; ++i)
    for (uint64_t j = 0; j < 7; ++j)
      for (uint64_t k = 0; k < 9; ++k) addresses.push_back(0x900000 - 4096 * i + 256 * j + 8 * k);
  EXPECT_EQ(round_trip(addresses),
            trace_of({trace_loop(
                6, {trace_loop(7, {trace_loop(9, {trace_value(0x900000, {-4096, 256, 8})})})})}));
}

TEST(MemoryTrace, TriangularNestIsOneLoopPerRow) {
  // for i < 20, for j <= i: a[i][j]: rows of different counts do not fold.
  const uint64_t a = 0x20000;
  std::vector<uint64_t> addresses;
  for (uint64_t i = 0; i < 20; ++i)
    for (uint64_t j = 0; j <= i; ++j) addresses.push_back(a + 1024 * i + 8 * j);
  std::vector<TraceNode> rows = {trace_value(a), trace_value(a + 1024), trace_value(a + 1032)};
  for (uint64_t i = 2; i < 20; ++i)
    rows.push_back(trace_loop(i + 1, {trace_value(a + 1024 * i, {8})}));
  EXPECT_EQ(round_trip(addresses), trace_of(rows));
}

TEST(MemoryTrace, InterleavedPatternIsALoopWithATwoValueBody) {
  // One instruction alternating between two arrays of different strides.
  std::vector<uint64_t> addresses;
  for (uint64_t i = 0; i < 100; ++i) {
    addresses.push_back(0x10000 + 8 * i);
    addresses.push_back(0x900000 + 16 * i);
  }
  EXPECT_EQ(round_trip(addresses),
            trace_of({trace_loop(100, {trace_value(0x10000, {8}), trace_value(0x900000, {16})})}));

  // The same inside an outer loop: a body of two values, nested.
  std::vector<uint64_t> nested;
  for (uint64_t r = 0; r < 12; ++r)
    for (uint64_t i = 0; i < 25; ++i) {
      nested.push_back(0x10000 + 4096 * r + 8 * i);
      nested.push_back(0x900000 + 16 * i);
    }
  EXPECT_EQ(round_trip(nested),
            trace_of({trace_loop(12, {trace_loop(25, {trace_value(0x10000, {4096, 8}),
                                                      trace_value(0x900000, {0, 16})})})}));
}

TEST(MemoryTrace, RandomStreamRoundTripsAndStaysSmall) {
  std::mt19937_64 rng(20080406);
  std::vector<uint64_t> addresses;
  for (int i = 0; i < 100000; ++i) addresses.push_back(0x7f3a12340000 + 8 * (rng() % (1 << 20)));
  const Captured c = record(addresses);
  const LoopTrace trace = c.decoded();
  EXPECT_TRUE(expand_loop_trace(trace) == addresses);
  EXPECT_EQ(encode_loop_trace(trace), c.bytes);
  EXPECT_LT(c.bytes.size(), 10 * addresses.size());
  EXPECT_EQ(c.header.accesses, addresses.size());
  EXPECT_EQ(c.header.lost, 0u);
}

TEST(MemoryTrace, MillionAccessNestCompressesOverThousandfold) {
  std::vector<uint64_t> addresses;
  for (uint64_t i = 0; i < 64; ++i)
    for (uint64_t j = 0; j < 128; ++j)
      for (uint64_t k = 0; k < 128; ++k)
        addresses.push_back(0x7f5e00000000 + (i << 21) + 2048 * j + 8 * k);
  ASSERT_EQ(addresses.size(), 1048576u);
  const Captured c = record(addresses);
  EXPECT_LT(c.bytes.size(), 100u);
  EXPECT_GT(8 * addresses.size() / c.bytes.size(), 1000u);
  const LoopTrace trace = c.decoded();
  EXPECT_EQ(
      trace,
      trace_of({trace_loop(
          64, {trace_loop(
                  128, {trace_loop(128, {trace_value(0x7f5e00000000, {1 << 21, 2048, 8})})})})}));
  EXPECT_TRUE(expand_loop_trace(trace) == addresses);
}

// Regular pieces and noise, mixed.
std::vector<uint64_t> generated_stream(std::mt19937_64& rng) {
  std::vector<uint64_t> out;
  auto pick = [&](uint64_t n) { return rng() % n; };
  const uint64_t region = 0x7f0000000000 + (pick(1 << 16) << 20);
  const unsigned pieces = 1 + static_cast<unsigned>(pick(12));
  for (unsigned p = 0; p < pieces; ++p) {
    const uint64_t base = region + 8 * pick(1 << 16);
    const auto stride = static_cast<uint64_t>(static_cast<int64_t>(pick(65)) * 8 - 256);
    switch (pick(6)) {
      case 0:  // noise
        for (uint64_t n = pick(40); n; --n) out.push_back(region + pick(1 << 20));
        break;
      case 1:  // 1-D run
        for (uint64_t i = 0, n = 1 + pick(200); i < n; ++i) out.push_back(base + stride * i);
        break;
      case 2: {  // 2-D nest
        const uint64_t rows = 1 + pick(20), cols = 1 + pick(20), row = 8 * pick(4096);
        for (uint64_t i = 0; i < rows; ++i)
          for (uint64_t j = 0; j < cols; ++j) out.push_back(base + row * i + stride * j);
        break;
      }
      case 3: {  // 3-D nest with a stride-0 level
        const uint64_t n0 = 1 + pick(6), n1 = 1 + pick(6), n2 = 1 + pick(6);
        for (uint64_t i = 0; i < n0; ++i)
          for (uint64_t j = 0; j < n1; ++j)
            for (uint64_t k = 0; k < n2; ++k) out.push_back(base + 4096 * i + stride * k);
        break;
      }
      case 4: {  // interleaved body, sometimes with noise inside
        const uint64_t other = region + 8 * pick(1 << 16);
        for (uint64_t i = 0, n = 1 + pick(50); i < n; ++i) {
          out.push_back(base + stride * i);
          out.push_back(other + 24 * i);
          if (pick(10) == 0) out.push_back(region + pick(1 << 20));
        }
        break;
      }
      default:  // triangular
        for (uint64_t i = 0, n = pick(12); i < n; ++i)
          for (uint64_t j = 0; j <= i; ++j) out.push_back(base + 512 * i + stride * j);
        break;
    }
  }
  return out;
}

TEST(MemoryTrace, GeneratedStreamsRoundTripUnderManyConfigurations) {
  std::mt19937_64 rng(42);
  const unsigned lengths[] = {1, 2, 3, 5, 8, 64};
  const unsigned bodies[] = {1, 2, 3, 8};
  const unsigned flushes[] = {1, 2, 16};
  const unsigned depths[] = {1, 2, 3, 8, 16};
  for (int run = 0; run < 400; ++run) {
    MemoryTraceConfig config = small_config();
    config.stack_length = lengths[rng() % 6];
    config.max_body = bodies[rng() % 4];
    config.flush_count = flushes[rng() % 3];
    config.max_depth = depths[rng() % 5];
    const std::vector<uint64_t> addresses = generated_stream(rng);
    SCOPED_TRACE("run " + std::to_string(run) + ": " + std::to_string(addresses.size()) +
                 " addresses, stack_length " + std::to_string(config.stack_length) + ", max_body " +
                 std::to_string(config.max_body) + ", flush_count " +
                 std::to_string(config.flush_count) + ", max_depth " +
                 std::to_string(config.max_depth));
    const LoopTrace trace = round_trip(addresses, config);
    EXPECT_LE(trace_depth(trace), std::min(config.max_depth, 16u));
    if (HasFailure()) break;
  }
}

TEST(MemoryTrace, HeaderCountsKindsSizesAndInstructions) {
  MemoryTraceRecorder recorder(small_config());
  MemoryTraceRecorder::ThreadState* t = recorder.attach(3);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(recorder.attach(3), t);
  EXPECT_EQ(recorder.attach(8), nullptr);  // beyond max_threads
  for (uint64_t i = 0; i < 10; ++i) {
    recorder.access(*t, 0x10, 0x1000 + 4 * i, 4, false);
    recorder.access(*t, 0x20, 0x2000 + 8 * i, i == 7 ? 16 : 2, i % 2 == 0);
    recorder.access(*t, 0, 0x3000, 8, true);  // no pc: not recorded
  }
  const std::vector<Captured> streams = capture(recorder);
  ASSERT_EQ(streams.size(), 2u);
  EXPECT_EQ(streams[0].header.thread, 3u);
  EXPECT_EQ(streams[0].header.pc, 0x10u);
  EXPECT_EQ(streams[0].header.kinds, kTraceRead);
  EXPECT_EQ(streams[0].header.access_size, 4u);
  EXPECT_EQ(streams[0].header.accesses, 10u);
  EXPECT_EQ(streams[0].decoded(), trace_of({trace_loop(10, {trace_value(0x1000, {4})})}));
  EXPECT_EQ(streams[1].header.pc, 0x20u);
  EXPECT_EQ(streams[1].header.kinds, kTraceRead | kTraceWrite);
  EXPECT_EQ(streams[1].header.access_size, 16u);
  EXPECT_EQ(streams[1].decoded(), trace_of({trace_loop(10, {trace_value(0x2000, {8})})}));
  EXPECT_EQ(recorder.dropped(), 10u);
  // finish() is idempotent.
  recorder.finish();
  EXPECT_EQ(capture(recorder)[1].bytes, streams[1].bytes);
}

TEST(MemoryTrace, ExhaustedBudgetKeepsAnExactPrefix) {
  MemoryTraceConfig config = small_config();
  config.max_bytes_per_thread = 6000;
  const std::vector<uint64_t> noise = random_slots(20000, 1 << 20, 7);
  std::vector<uint64_t> nest;
  for (uint64_t i = 0; i < 200; ++i)
    for (uint64_t j = 0; j < 50; ++j) nest.push_back(0x600000 + 4096 * i + 8 * j);

  MemoryTraceRecorder recorder(config);
  MemoryTraceRecorder::ThreadState* t = recorder.attach(0);
  ASSERT_NE(t, nullptr);
  for (size_t i = 0; i < noise.size(); ++i) {
    recorder.access(*t, 0x111, noise[i], 8, false);
    if (i < nest.size()) recorder.access(*t, 0x222, nest[i], 8, true);
  }
  const std::vector<Captured> streams = capture(recorder);
  ASSERT_EQ(streams.size(), 2u);
  uint64_t lost = 0;
  for (const Captured& c : streams) {
    const std::vector<uint64_t>& input = c.header.pc == 0x111 ? noise : nest;
    EXPECT_EQ(c.header.accesses, input.size());
    ASSERT_LE(c.header.lost, c.header.accesses);
    const std::vector<uint64_t> kept(input.begin(), input.end() - c.header.lost);
    const LoopTrace trace = c.decoded();
    EXPECT_TRUE(expand_loop_trace(trace) == kept);
    EXPECT_EQ(encode_loop_trace(trace), c.bytes);
    lost += c.header.lost;
  }
  EXPECT_GT(streams[0].header.lost, 0u);  // the noise outgrew the budget
  EXPECT_GT(streams[1].header.lost, 0u);  // and stopped the whole thread
  EXPECT_EQ(recorder.dropped(), lost);
}

// Past the budget (the thread's, or here each stream's share of it) an
// access of a recently seen stream only counts: the inline path
// (access_fast) takes it, instead of a call out of line per
// access for the rest of the run, and the streams are those access() alone
// records.
TEST(MemoryTrace, PastTheBudgetTheInlinePathCountsTheLostAccesses) {
  MemoryTraceConfig config = small_config();
  config.max_bytes_per_thread = 6000;
  const std::vector<uint64_t> noise = random_slots(20000, 1 << 20, 7);

  MemoryTraceRecorder inline_first(config), out_of_line(config);
  MemoryTraceRecorder::ThreadState* t = inline_first.attach(0);
  MemoryTraceRecorder::ThreadState* u = out_of_line.attach(0);
  ASSERT_NE(t, nullptr);
  ASSERT_NE(u, nullptr);
  uint64_t calls = 0;
  for (size_t i = 0; i < noise.size(); ++i) {
    const uint64_t pc = i % 2 == 0 ? 0x111 : 0x222;  // two irregular streams in turn
    if (!MemoryTraceRecorder::access_fast(*t, pc, noise[i], 8, false)) {
      ++calls;
      inline_first.access(*t, pc, noise[i], 8, false);
    }
    out_of_line.access(*u, pc, noise[i], 8, false);
  }
  const std::vector<Captured> a = capture(inline_first), b = capture(out_of_line);
  ASSERT_EQ(a.size(), 2u);
  ASSERT_EQ(b.size(), 2u);
  uint64_t recorded = 0, lost = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].header.accesses, 10000u);
    EXPECT_EQ(a[i].header.accesses, b[i].header.accesses);
    EXPECT_EQ(a[i].header.lost, b[i].header.lost);
    EXPECT_EQ(a[i].header.kinds, b[i].header.kinds);
    EXPECT_EQ(a[i].bytes, b[i].bytes);
    recorded += a[i].header.accesses - a[i].header.lost;
    lost += a[i].header.lost;
  }
  EXPECT_GT(lost, 10000u);
  // Out of line: exactly the recorded accesses (each stream stops at its
  // share of the budget after a recorded one, so none is lost out of line).
  EXPECT_EQ(calls, recorded);
  EXPECT_EQ(inline_first.dropped(), out_of_line.dropped());
}

// One stream stops at its share of the budget (1/16): an irregular gather
// that outgrows it keeps an exact prefix, and a loop the thread runs after
// it is still traced whole (it was lost whole when the gather spent the
// thread's budget).
TEST(MemoryTrace, AnIrregularStreamStopsAtItsShareAndLeavesTheRestTraced) {
  MemoryTraceConfig config = small_config();
  config.max_bytes_per_thread = size_t{1} << 20;
  const std::vector<uint64_t> gather = random_slots(200000, 1 << 24, 11);
  std::vector<uint64_t> nest;
  for (uint64_t i = 0; i < 100; ++i)
    for (uint64_t j = 0; j < 64; ++j) nest.push_back(0x600000 + 4096 * i + 8 * j);

  MemoryTraceRecorder recorder(config);
  MemoryTraceRecorder::ThreadState* t = recorder.attach(0);
  ASSERT_NE(t, nullptr);
  for (uint64_t address : gather) recorder.access(*t, 0x111, address, 8, false);
  for (uint64_t address : nest) recorder.access(*t, 0x222, address, 8, true);
  EXPECT_FALSE(t->exhausted);
  const std::vector<Captured> streams = capture(recorder);
  ASSERT_EQ(streams.size(), 2u);
  const Captured& irregular = streams[0];
  EXPECT_EQ(irregular.header.accesses, gather.size());
  EXPECT_GT(irregular.header.lost, 0u);
  EXPECT_LT(irregular.header.lost, gather.size());
  EXPECT_EQ(irregular.header.kinds, kTraceRead);
  // Its output stops just past 64 KiB (one flush of 16 elements more).
  EXPECT_GT(irregular.bytes.size(), size_t{64} << 10);
  EXPECT_LT(irregular.bytes.size(), (size_t{64} << 10) + 4096);
  const std::vector<uint64_t> kept(gather.begin(), gather.end() - irregular.header.lost);
  EXPECT_TRUE(expand_loop_trace(irregular.decoded()) == kept);
  const Captured& regular = streams[1];
  EXPECT_EQ(regular.header.accesses, nest.size());
  EXPECT_EQ(regular.header.lost, 0u);
  EXPECT_TRUE(expand_loop_trace(regular.decoded()) == nest);
  EXPECT_EQ(recorder.dropped(), irregular.header.lost);
}

TEST(MemoryTrace, NoBudgetLosesEverythingAndStillDecodes) {
  MemoryTraceConfig config = small_config();
  config.max_bytes_per_thread = 0;
  const Captured c = record({1, 2, 3, 4}, config);
  EXPECT_EQ(c.header.accesses, 4u);
  EXPECT_EQ(c.header.lost, 4u);
  EXPECT_EQ(c.decoded(), LoopTrace{});
}

TraceSegmentRun segment_run(uint64_t first_access, uint64_t access_step, uint32_t first_segment,
                            uint32_t segment_step, uint32_t count) {
  TraceSegmentRun r;
  r.first_access = first_access;
  r.access_step = access_step;
  r.first_segment = first_segment;
  r.segment_step = segment_step;
  r.count = count;
  return r;
}

// Each stream notes where its accesses cross the thread's segments, as
// arithmetic runs: a loop run the same way in every segment is one run.
TEST(MemoryTrace, SegmentRunsSayWhereAStreamCrossesSegments) {
  MemoryTraceRecorder recorder(small_config());
  MemoryTraceRecorder::ThreadState* t = recorder.attach(0);
  ASSERT_NE(t, nullptr);
  auto run = [&](uint64_t pc, int accesses) {
    for (int i = 0; i < accesses; ++i) recorder.access(*t, pc, 0x1000 + 8 * i, 8, true);
  };
  const std::vector<int> irregular{0, 3, 1, 0, 0, 7, 0};
  for (uint32_t segment = 0; segment <= 6; ++segment) {
    run(0xa, segment == 0 ? 5 : 4);                      // every segment
    run(0xb, segment >= 2 && segment % 2 == 0 ? 2 : 0);  // from segment 2, every other one
    run(0xc, segment == 0 ? 3 : 0);                      // segment 0 only
    run(0xd, irregular[segment]);
    recorder.close_segment(*t);
  }
  const std::vector<Captured> streams = capture(recorder);
  ASSERT_EQ(streams.size(), 4u);
  EXPECT_EQ(streams[0].segments, (std::vector<TraceSegmentRun>{segment_run(5, 4, 1, 1, 6)}));
  EXPECT_EQ(streams[1].segments, (std::vector<TraceSegmentRun>{segment_run(0, 2, 2, 2, 3)}));
  EXPECT_TRUE(streams[2].segments.empty());
  EXPECT_EQ(streams[3].segments,
            (std::vector<TraceSegmentRun>{segment_run(0, 3, 1, 1, 2), segment_run(4, 0, 5, 0, 1)}));
  for (const Captured& c : streams) EXPECT_EQ(c.header.kinds & kTraceSegmentsLost, 0u);
}

// A segment the capture does not trace (trace_segment false at its
// beginning) leaves no access in any stream, and its stream's segment runs
// step over it: the traced segments 0, 2, 4 and 6 of a stream read four
// times in every one.
TEST(MemoryTrace, UntracedSegmentsLeaveNoAccessAndTheRunsStepOverThem) {
  MemoryTraceRecorder recorder(small_config());
  MemoryTraceRecorder::ThreadState* t = recorder.attach(0);
  ASSERT_NE(t, nullptr);
  for (uint32_t segment = 0; segment <= 6; ++segment) {
    MemoryTraceRecorder::trace_segment(*t, segment % 2 == 0);
    for (int i = 0; i < 4; ++i) {
      read_as_the_hooks_do(recorder, *t, kPc, 0x1000 + 8 * (4 * segment + i));
    }
    MemoryTraceRecorder::close_segment(*t);
  }
  EXPECT_EQ(recorder.skipped_segments(), 3u);
  const std::vector<Captured> streams = capture(recorder);
  ASSERT_EQ(streams.size(), 1u);
  EXPECT_EQ(streams[0].header.accesses, 16u);
  EXPECT_EQ(streams[0].segments, (std::vector<TraceSegmentRun>{segment_run(4, 4, 2, 2, 3)}));
  // The addresses of the traced segments, in order.
  std::vector<uint64_t> expected;
  for (uint32_t segment = 0; segment <= 6; segment += 2)
    for (int i = 0; i < 4; ++i) expected.push_back(0x1000 + 8 * (4 * segment + i));
  EXPECT_EQ(expand_loop_trace(streams[0].decoded()), expected);
}

// Segment runs come out of the thread's budget: without room, the stream
// says they are lost rather than keep some.
TEST(MemoryTrace, SegmentRunsBeyondTheBudgetAreLost) {
  MemoryTraceConfig config = small_config();
  config.max_bytes_per_thread = 0;
  MemoryTraceRecorder recorder(config);
  MemoryTraceRecorder::ThreadState* t = recorder.attach(0);
  ASSERT_NE(t, nullptr);
  recorder.access(*t, kPc, 0x1000, 8, false);
  recorder.close_segment(*t);
  recorder.access(*t, kPc, 0x1008, 8, false);
  const std::vector<Captured> streams = capture(recorder);
  ASSERT_EQ(streams.size(), 1u);
  EXPECT_EQ(streams[0].header.kinds & kTraceSegmentsLost, kTraceSegmentsLost);
  EXPECT_EQ(streams[0].header.kinds & (kTraceRead | kTraceWrite), kTraceRead);
  EXPECT_EQ(streams[0].header.segment_runs, 0u);
}

TEST(MemoryTrace, ThreadsRecordConcurrently) {
  MemoryTraceRecorder recorder(small_config());
  constexpr unsigned kThreads = 4;
  auto pattern = [](unsigned tid, uint64_t pc) {
    std::vector<uint64_t> addresses;
    if (pc == 0x1000) {  // a 2-D nest, different per thread
      for (uint64_t i = 0; i < 100 + 10 * tid; ++i)
        for (uint64_t j = 0; j < 64; ++j)
          addresses.push_back(0x10000000 * (tid + 1) + 8192 * i + 8 * (tid + 1) * j);
    } else {  // noise
      std::mt19937_64 rng(tid);
      for (int i = 0; i < 20000; ++i) addresses.push_back(0x7f0000000000 + 16 * (rng() % 100000));
    }
    return addresses;
  };
  std::vector<std::thread> threads;
  for (unsigned tid = 0; tid < kThreads; ++tid)
    threads.emplace_back([&, tid] {
      MemoryTraceRecorder::ThreadState* t = recorder.attach(tid);
      ASSERT_NE(t, nullptr);
      const std::vector<uint64_t> nest = pattern(tid, 0x1000), noise = pattern(tid, 0x2000);
      for (size_t i = 0; i < std::max(nest.size(), noise.size()); ++i) {
        if (i < nest.size()) recorder.access(*t, 0x1000, nest[i], 8, true);
        if (i < noise.size()) recorder.access(*t, 0x2000, noise[i], 4, false);
      }
    });
  for (std::thread& t : threads) t.join();
  const std::vector<Captured> streams = capture(recorder);
  ASSERT_EQ(streams.size(), 2 * kThreads);
  for (const Captured& c : streams) {
    SCOPED_TRACE("thread " + std::to_string(c.header.thread) + " pc " +
                 std::to_string(c.header.pc));
    const std::vector<uint64_t> expected = pattern(c.header.thread, c.header.pc);
    EXPECT_EQ(c.header.accesses, expected.size());
    EXPECT_EQ(c.header.lost, 0u);
    const LoopTrace trace = c.decoded();
    EXPECT_TRUE(expand_loop_trace(trace) == expected);
    if (c.header.pc == 0x1000) {
      EXPECT_EQ(trace.elements.size(), 1u);
    }
  }
  EXPECT_EQ(recorder.dropped(), 0u);
}

}  // namespace
}  // namespace weft
