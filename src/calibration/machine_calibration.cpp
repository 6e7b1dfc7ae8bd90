#include "calibration/machine_calibration.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "calibration/micro_benchmarks.h"
#include "common/cache_dir.h"
#include "topology/machine_caches.h"

namespace weft {
namespace {

// Each figure is the best of kRounds x kRepetitionsPerRound repetitions
// (the machine is shared: the best one is the least disturbed). The rounds
// sweep every level in turn, so each figure's repetitions are spread over
// the whole measurement rather than caught in one busy moment; a
// repetition is short, to fit in a scheduler time slice of a loaded
// machine (a few milliseconds).
constexpr unsigned kRounds = 10;
constexpr unsigned kRepetitionsPerRound = 3;
// Bytes each bandwidth repetition moves at least (passes over a cache-sized
// working set; one pass over RAM's).
constexpr size_t kBytesPerRepetition = size_t{16} << 20;
// Dependent loads per latency repetition: enough to dwarf rdtsc's cost
// (tens of cycles), few enough for RAM's (hundreds of cycles each) to last
// a few milliseconds.
constexpr size_t kChaseSteps = size_t{1} << 15;
// RAM's working set: several times the last level, at least this.
constexpr uint64_t kMinimumRamWorkingSet = uint64_t{128} << 20;
// Runs of the multiply chain behind each TSC-per-core-cycle figure.
constexpr unsigned kChainRepetitions = 2000;

uint64_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page)
                               : kMinimumRamWorkingSet * 4;
}

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon == std::string::npos) break;
      const size_t start = line.find_first_not_of(" \t", colon + 1);
      return start == std::string::npos ? std::string() : line.substr(start);
    }
  return "unknown CPU";
}

// A multiple of 128 bytes (the streaming kernels' step), at least 4 KiB.
uint64_t round_working_set(uint64_t bytes) { return std::max<uint64_t>(4096, bytes / 128 * 128); }

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

template <class T>
T field(const nlohmann::json& object, const char* name, const std::string& origin) {
  if (!object.is_object() || !object.contains(name))
    throw CalibrationError(origin + ": not a weft calibration (no '" + std::string(name) + "')");
  try {
    return object.at(name).get<T>();
  } catch (const nlohmann::json::exception&) {
    throw CalibrationError(origin + ": '" + std::string(name) + "' has the wrong type");
  }
}

}  // namespace

const StreamMixCalibration* MemoryLevelCalibration::stream_mix(unsigned loads,
                                                               unsigned stores) const {
  for (const StreamMixCalibration& mix : stream_mixes)
    if (mix.loads == loads && mix.stores == stores) return &mix;
  return nullptr;
}

const MemoryLevelCalibration* MachineCalibration::level(std::string_view name) const {
  for (const MemoryLevelCalibration& candidate : levels)
    if (candidate.level == name) return &candidate;
  return nullptr;
}

namespace {

// The levels `weft loops` estimates from (loop_findings.cpp), which get the
// stream mixes; the L3's figures are not used for an estimate.
bool levels_with_stream_mixes(std::string_view level) { return level == "L2" || level == "RAM"; }

CalibrationKey key_of(const MachineCaches& caches) {
  CalibrationKey key;
  key.cpu_model = cpu_model_name();
  key.l1_bytes = caches.l1.cache.size_bytes;
  key.l2_bytes = caches.l2.cache.size_bytes;
  key.l3_bytes = caches.last_level.cache.depth >= 3 ? caches.last_level.cache.size_bytes : 0;
  key.line_bytes = caches.l1.cache.line_bytes != 0 ? caches.l1.cache.line_bytes : 64;
  return key;
}

// Whether every level weft estimates from has its stream mixes (a file
// written before weft measured them is measured again).
bool has_stream_mixes(const MachineCalibration& calibration) {
  for (const MemoryLevelCalibration& level : calibration.levels)
    if (levels_with_stream_mixes(level.level) && level.stream_mixes.empty()) return false;
  return true;
}

}  // namespace

CalibrationKey this_machine_key() { return key_of(this_machine_caches()); }

MachineCalibration measure_calibration(const CalibrationKey& key,
                                       uint64_t largest_described_cache_bytes) {
  const auto started = std::chrono::steady_clock::now();
  MachineCalibration calibration;
  calibration.key = key;
  calibration.measured_at = utc_now();
  calibration.tsc_hz = measure_tsc_hz();
  // The best of many short chains, measured before the memory benchmarks
  // and again after them (the lower: the core's clock when it is fastest,
  // as under the loops' own load).
  calibration.tsc_ticks_per_core_cycle = tsc_ticks_per_core_cycle(kChainRepetitions);

  // Working sets: half of L1 (the stack and code share it); half of L2, but
  // at least 4 L1s; a quarter of L3 (shared with other cores, and a
  // sliced L3 keeps far slices slower), but at least 4 L2s; RAM: 4 L3s, at
  // least 128 MiB, and 4 times the largest cache any source describes,
  // credible or not (a virtual machine's 260 MiB L3 is its host's, shared,
  // but it still holds a 128 MiB stream), at most a quarter of the memory.
  struct Level {
    const char* name;
    uint64_t cache_bytes;
    uint64_t working_set;
  };
  std::vector<Level> levels;
  const uint64_t l1_set = key.l1_bytes / 2;
  const uint64_t l2_set = std::max(key.l2_bytes / 2, 4 * key.l1_bytes);
  levels.push_back({"L1", key.l1_bytes, l1_set});
  levels.push_back({"L2", key.l2_bytes, std::min(l2_set, key.l2_bytes * 3 / 4)});
  uint64_t largest_cache = key.l2_bytes;
  if (key.l3_bytes > key.l2_bytes) {
    levels.push_back(
        {"L3", key.l3_bytes,
         std::min(std::max(key.l3_bytes / 4, 4 * key.l2_bytes), key.l3_bytes * 3 / 4)});
    largest_cache = key.l3_bytes;
  }
  const uint64_t ram_set =
      std::max({4 * largest_cache, kMinimumRamWorkingSet,
                std::min(4 * largest_described_cache_bytes, physical_memory_bytes() / 4)});
  levels.push_back({"RAM", 0, ram_set});

  uint64_t largest_set = 0;
  for (Level& level : levels) {
    level.working_set = round_working_set(level.working_set);
    largest_set = std::max(largest_set, level.working_set);
  }
  const BenchmarkBuffer buffer(largest_set);
  calibration.repetitions = kRounds * kRepetitionsPerRound;
  for (const Level& level : levels) {
    MemoryLevelCalibration measured;
    measured.level = level.name;
    measured.cache_bytes = level.cache_bytes;
    measured.working_set = level.working_set;
    calibration.levels.push_back(measured);
  }
  // The stream mixes of the levels `weft loops` estimates. A mix of one
  // stream is the level's load or store figure, measured below anyway: only
  // mixes of two streams or more have a benchmark of their own, which keeps
  // its place in the working set from round to round.
  struct MixMeasurement {
    size_t level;  // in calibration.levels
    size_t mix;    // in that level's stream_mixes
    StreamMixBenchmark benchmark;
  };
  std::vector<MixMeasurement> mixes;
  for (size_t n = 0; n < calibration.levels.size(); ++n) {
    MemoryLevelCalibration& measured = calibration.levels[n];
    if (!levels_with_stream_mixes(measured.level)) continue;
    for (unsigned loads = 0; loads <= kMaxMixedLoadStreams; ++loads)
      for (unsigned stores = 0; stores <= kMaxMixedStoreStreams; ++stores) {
        if (loads + stores == 0) continue;
        measured.stream_mixes.push_back({loads, stores, 0.0});
        if (loads + stores >= 2)
          mixes.push_back({n, measured.stream_mixes.size() - 1,
                           StreamMixBenchmark(buffer, measured.working_set, loads, stores)});
      }
  }
  // RAM's single load and store streams go on from round to round too, like
  // the mixes: a repetition that passed over the whole working set moved
  // 4 times the largest described cache each time (1.9 GiB under a
  // described 480 MiB L3: 22 of the calibration's seconds), where any part
  // of a set that large comes from RAM.
  const size_t ram = calibration.levels.size() - 1;
  StreamMixBenchmark ram_loads(buffer, calibration.levels[ram].working_set, 1, 0);
  StreamMixBenchmark ram_stores(buffer, calibration.levels[ram].working_set, 0, 1);
  // Cycles are TSC ticks (reference cycles): the figures are per tick.
  for (unsigned round = 0; round < kRounds; ++round)
    for (size_t n = 0; n < calibration.levels.size(); ++n) {
      MemoryLevelCalibration& measured = calibration.levels[n];
      for (MixMeasurement& m : mixes)
        if (m.level == n) {
          double& figure = measured.stream_mixes[m.mix].bytes_per_cycle;
          figure = std::max(figure,
                            m.benchmark.bytes_per_tick(kBytesPerRepetition, kRepetitionsPerRound));
        }
      const size_t set = measured.working_set;
      const double loads =
          n == ram ? ram_loads.bytes_per_tick(kBytesPerRepetition, kRepetitionsPerRound)
                   : load_bytes_per_tick(buffer, set, kBytesPerRepetition, kRepetitionsPerRound);
      const double stores =
          n == ram ? ram_stores.bytes_per_tick(kBytesPerRepetition, kRepetitionsPerRound)
                   : store_bytes_per_tick(buffer, set, kBytesPerRepetition, kRepetitionsPerRound);
      measured.load_bytes_per_cycle = std::max(measured.load_bytes_per_cycle, loads);
      measured.store_bytes_per_cycle = std::max(measured.store_bytes_per_cycle, stores);
      const double latency =
          chase_ticks_per_load(buffer, set, key.line_bytes, kChaseSteps, kRepetitionsPerRound);
      if (round == 0 || latency < measured.latency_cycles) measured.latency_cycles = latency;
    }
  for (MemoryLevelCalibration& level : calibration.levels)
    for (StreamMixCalibration& mix : level.stream_mixes)
      if (mix.loads + mix.stores == 1)
        mix.bytes_per_cycle = mix.loads ? level.load_bytes_per_cycle : level.store_bytes_per_cycle;
  calibration.tsc_ticks_per_core_cycle =
      std::min(calibration.tsc_ticks_per_core_cycle, tsc_ticks_per_core_cycle(kChainRepetitions));
  calibration.measurement_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return calibration;
}

std::string calibration_json(const MachineCalibration& calibration) {
  nlohmann::json levels = nlohmann::json::array();
  for (const MemoryLevelCalibration& level : calibration.levels) {
    nlohmann::json entry = {{"level", level.level},
                            {"cache_bytes", level.cache_bytes},
                            {"working_set_bytes", level.working_set},
                            {"load_bytes_per_cycle", level.load_bytes_per_cycle},
                            {"store_bytes_per_cycle", level.store_bytes_per_cycle},
                            {"latency_cycles", level.latency_cycles}};
    if (!level.stream_mixes.empty()) {
      nlohmann::json mixes = nlohmann::json::array();
      for (const StreamMixCalibration& mix : level.stream_mixes)
        mixes.push_back({{"loads", mix.loads},
                         {"stores", mix.stores},
                         {"bytes_per_cycle", mix.bytes_per_cycle}});
      entry["stream_mixes"] = mixes;
    }
    levels.push_back(entry);
  }
  const CalibrationKey& key = calibration.key;
  nlohmann::json out = {{"format", kCalibrationFormat},
                        {"machine",
                         {{"cpu_model", key.cpu_model},
                          {"l1_bytes", key.l1_bytes},
                          {"l2_bytes", key.l2_bytes},
                          {"l3_bytes", key.l3_bytes},
                          {"line_bytes", key.line_bytes}}},
                        {"cycles", "tsc"},
                        {"tsc_hz", calibration.tsc_hz},
                        {"tsc_ticks_per_core_cycle", calibration.tsc_ticks_per_core_cycle},
                        {"measured_at", calibration.measured_at},
                        {"measurement_seconds", calibration.measurement_seconds},
                        {"repetitions", calibration.repetitions},
                        {"levels", levels}};
  return out.dump(2) + "\n";
}

MachineCalibration parse_calibration(const std::string& text, const std::string& origin) {
  const nlohmann::json in = nlohmann::json::parse(text, nullptr, false);
  if (in.is_discarded() || !in.is_object())
    throw CalibrationError(origin + ": not a weft calibration (not a JSON object)");
  const int format = field<int>(in, "format", origin);
  if (format != kCalibrationFormat)
    throw CalibrationError(origin + ": calibration format " + std::to_string(format) +
                           ", weft reads " + std::to_string(kCalibrationFormat) +
                           " (run weft calibrate --force)");
  MachineCalibration calibration;
  const nlohmann::json machine = field<nlohmann::json>(in, "machine", origin);
  calibration.key.cpu_model = field<std::string>(machine, "cpu_model", origin);
  calibration.key.l1_bytes = field<uint64_t>(machine, "l1_bytes", origin);
  calibration.key.l2_bytes = field<uint64_t>(machine, "l2_bytes", origin);
  calibration.key.l3_bytes = field<uint64_t>(machine, "l3_bytes", origin);
  calibration.key.line_bytes = field<uint32_t>(machine, "line_bytes", origin);
  calibration.tsc_hz = field<double>(in, "tsc_hz", origin);
  // Optional: files written before weft measured it have none (0).
  if (const auto ratio = in.find("tsc_ticks_per_core_cycle");
      ratio != in.end() && ratio->is_number() && ratio->get<double>() > 0)
    calibration.tsc_ticks_per_core_cycle = ratio->get<double>();
  calibration.measured_at = field<std::string>(in, "measured_at", origin);
  calibration.measurement_seconds = field<double>(in, "measurement_seconds", origin);
  calibration.repetitions = field<uint32_t>(in, "repetitions", origin);
  const nlohmann::json levels = field<nlohmann::json>(in, "levels", origin);
  if (!levels.is_array()) throw CalibrationError(origin + ": 'levels' is not an array");
  for (const nlohmann::json& entry : levels) {
    MemoryLevelCalibration level;
    level.level = field<std::string>(entry, "level", origin);
    level.cache_bytes = field<uint64_t>(entry, "cache_bytes", origin);
    level.working_set = field<uint64_t>(entry, "working_set_bytes", origin);
    level.load_bytes_per_cycle = field<double>(entry, "load_bytes_per_cycle", origin);
    level.store_bytes_per_cycle = field<double>(entry, "store_bytes_per_cycle", origin);
    level.latency_cycles = field<double>(entry, "latency_cycles", origin);
    if (!(level.load_bytes_per_cycle > 0) || !(level.store_bytes_per_cycle > 0) ||
        !(level.latency_cycles > 0))
      throw CalibrationError(origin + ": level " + level.level +
                             " has a bandwidth or latency that is not positive");
    // Optional: files written before weft measured the mixes have none.
    if (entry.contains("stream_mixes")) {
      const nlohmann::json mixes = field<nlohmann::json>(entry, "stream_mixes", origin);
      if (!mixes.is_array())
        throw CalibrationError(origin + ": level " + level.level +
                               "'s 'stream_mixes' is not an array");
      for (const nlohmann::json& item : mixes) {
        StreamMixCalibration mix;
        mix.loads = field<unsigned>(item, "loads", origin);
        mix.stores = field<unsigned>(item, "stores", origin);
        mix.bytes_per_cycle = field<double>(item, "bytes_per_cycle", origin);
        if (!(mix.bytes_per_cycle > 0) || mix.loads + mix.stores == 0)
          throw CalibrationError(origin + ": level " + level.level +
                                 " has a stream mix without streams or bandwidth");
        level.stream_mixes.push_back(mix);
      }
    }
    calibration.levels.push_back(level);
  }
  if (calibration.key.line_bytes == 0) throw CalibrationError(origin + ": 'line_bytes' is 0");
  return calibration;
}

MachineCalibration read_calibration_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CalibrationError("cannot open calibration '" + path + "'");
  std::stringstream text;
  text << in.rdbuf();
  return parse_calibration(text.str(), path);
}

std::string default_calibration_path() {
  const std::string dir = weft_cache_dir();
  return dir.empty() ? std::string() : dir + "/calibration.json";
}

CalibrationResult calibrate_this_machine(bool force) {
  CalibrationResult result;
  result.path = default_calibration_path();
  const MachineCaches caches = this_machine_caches();
  const CalibrationKey key = key_of(caches);
  std::error_code ec;
  if (force) {
    result.reason = "--force";
  } else if (result.path.empty()) {
    result.reason = "no cache directory";
  } else if (!std::filesystem::exists(result.path, ec)) {
    result.reason = "no calibration file";
  } else {
    try {
      MachineCalibration stored = read_calibration_file(result.path);
      if (!(stored.key == key)) {
        result.reason = "the machine changed (CPU model or caches)";
      } else if (!has_stream_mixes(stored)) {
        result.reason = "the stored calibration has no mixed load/store streams";
      } else {
        result.calibration = std::move(stored);
        result.reused = true;
        return result;
      }
    } catch (const CalibrationError& error) {
      result.reason = std::string("the stored calibration is unreadable: ") + error.what();
    }
  }
  result.calibration = measure_calibration(key, caches.largest_described_bytes);
  if (result.path.empty()) return result;
  const std::filesystem::path path(result.path);
  std::filesystem::create_directories(path.parent_path(), ec);
  const std::string temporary = result.path + ".tmp" + std::to_string(getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << calibration_json(result.calibration);
    if (!out.flush()) throw CalibrationError("cannot write the calibration to '" + temporary + "'");
  }
  std::filesystem::rename(temporary, path, ec);
  if (ec) {
    std::filesystem::remove(temporary, ec);
    throw CalibrationError("cannot store the calibration as '" + result.path + "'");
  }
  return result;
}

}  // namespace weft
