// The machine's calibration for `weft loops`' L2 and RAM estimates: for each
// level of the memory hierarchy (L1, L2, L3 when there is one, RAM) the
// sustained single-thread load and store bandwidth of stride-1 streams
// (bytes per cycle) and the load-to-use latency (cycles), measured once per
// machine by weft's micro-benchmarks (micro_benchmarks.h) and kept as JSON
// in weft's cache directory, keyed by the CPU model name and cache sizes.
// docs/loops.md, "Calibration"; the file's fields are listed there.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace weft {

// What the calibration is of: a change of any field (another CPU model, a
// VM given other caches) asks for a new measurement.
struct CalibrationKey {
  std::string cpu_model;  // /proc/cpuinfo's "model name"
  uint64_t l1_bytes = 0;
  uint64_t l2_bytes = 0;
  uint64_t l3_bytes = 0;  // 0: no L3
  uint32_t line_bytes = 0;
  bool operator==(const CalibrationKey&) const = default;
};

// The largest numbers of load and of store streams a stream mix is
// measured for (StreamMixBenchmark, micro_benchmarks.h).
inline constexpr unsigned kMaxMixedLoadStreams = 4;
inline constexpr unsigned kMaxMixedStoreStreams = 2;

// Loads and stores at once: `loads` stride-1 streams read and `stores`
// written in step over the level's working set (StreamMixBenchmark), bytes
// read and written together per cycle.
struct StreamMixCalibration {
  unsigned loads = 0;
  unsigned stores = 0;
  double bytes_per_cycle = 0;
};

struct MemoryLevelCalibration {
  std::string level;         // "L1", "L2", "L3", "RAM"
  uint64_t cache_bytes = 0;  // the level's size (0 for RAM)
  uint64_t working_set = 0;  // the bytes the benchmarks streamed and chased over
  double load_bytes_per_cycle = 0;
  double store_bytes_per_cycle = 0;
  double latency_cycles = 0;  // one dependent load
  // Every mix of 0 to kMaxMixedLoadStreams loads and 0 to
  // kMaxMixedStoreStreams stores, for the levels `weft loops` estimates (L2
  // and RAM); empty in other levels and in files written before weft
  // measured them.
  std::vector<StreamMixCalibration> stream_mixes;

  // The mix of exactly `loads` and `stores` streams, or nullptr.
  const StreamMixCalibration* stream_mix(unsigned loads, unsigned stores) const;
};

struct MachineCalibration {
  CalibrationKey key;
  double tsc_hz = 0;  // TSC ticks per second: one "cycle" of the figures
  // TSC ticks per core cycle during the measurement (a chain of dependent
  // multiplies); 0: unknown (a file written before weft measured it). `weft
  // loops` converts the figures to core cycles, MCA's unit, with it.
  double tsc_ticks_per_core_cycle = 0;
  std::string measured_at;                     // UTC, "2026-11-25T07:50:00Z"
  double measurement_seconds = 0;              // wall time of the benchmarks
  uint32_t repetitions = 0;                    // each figure is the best of this many
  std::vector<MemoryLevelCalibration> levels;  // L1, L2, [L3,] RAM

  // The level named `name`, or nullptr.
  const MemoryLevelCalibration* level(std::string_view name) const;
};

// A calibration file that cannot be read (corrupt, another format, a missing
// field); what() is one line.
class CalibrationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline constexpr int kCalibrationFormat = 1;

// This machine's key: its CPU model name and the caches weft models
// (topology/machine_caches.h).
CalibrationKey this_machine_key();

// Runs the micro-benchmarks on this machine (a few seconds), RAM's beyond
// every cache the key's and 4 times `largest_described_cache_bytes`
// (MachineCaches::largest_described_bytes).
MachineCalibration measure_calibration(const CalibrationKey& key,
                                       uint64_t largest_described_cache_bytes);

// The file's JSON text, and back. parse throws CalibrationError naming
// `origin` (the path) and what is wrong.
std::string calibration_json(const MachineCalibration& calibration);
MachineCalibration parse_calibration(const std::string& text, const std::string& origin);
// Reads and parses a file; throws CalibrationError.
MachineCalibration read_calibration_file(const std::string& path);

// weft_cache_dir()/calibration.json; empty when there is no cache directory.
std::string default_calibration_path();

struct CalibrationResult {
  MachineCalibration calibration;
  std::string path;     // where it is stored (empty: nowhere, no cache directory)
  bool reused = false;  // read from the file, not measured now
  std::string
      reason;  // why it was measured: "--force", "no calibration file", "the machine changed"
};

// The calibration of this machine: the stored one when its key is this
// machine's and `force` is false, else measured now and stored (temporary
// file + rename). Throws CalibrationError when the file cannot be written.
CalibrationResult calibrate_this_machine(bool force);

}  // namespace weft
