#include "views/calibration_view.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "views/text_table.h"

namespace weft {
namespace {

std::string render_table(const CalibrationResult& result) {
  const MachineCalibration& calibration = result.calibration;
  const CalibrationKey& key = calibration.key;
  std::string out = fmt::format("weft calibrate: {}; L1 {}, L2 {}, L3 {}, lines of {} B\n",
                                key.cpu_model, human_bytes(key.l1_bytes), human_bytes(key.l2_bytes),
                                key.l3_bytes == 0 ? std::string("none") : human_bytes(key.l3_bytes),
                                key.line_bytes);
  const std::string where =
      result.path.empty() ? std::string("not stored (no cache directory)") : result.path;
  if (result.reused)
    out += fmt::format("calibration: {} (measured {}; --force measures again)\n", where,
                       calibration.measured_at);
  else
    out += fmt::format("calibration: {} (measured now, {}: {:.1f} s)\n", where, result.reason,
                       calibration.measurement_seconds);
  out += fmt::format(
      "cycles: TSC ticks at {:.3f} GHz (reference cycles; this VM has no hardware counters); "
      "each figure the best of {}, single thread, stride-1 streams\n",
      calibration.tsc_hz * 1e-9, calibration.repetitions);
  TextTable table({TextTable::Align::Left, TextTable::Align::Right, TextTable::Align::Right,
                   TextTable::Align::Right, TextTable::Align::Right});
  table.add_row({"level", "working set", "load B/cycle", "store B/cycle", "latency cycles"});
  for (const MemoryLevelCalibration& level : calibration.levels)
    table.add_row({level.level, human_bytes(level.working_set),
                   fmt::format("{:.2f}", level.load_bytes_per_cycle),
                   fmt::format("{:.2f}", level.store_bytes_per_cycle),
                   fmt::format("{:.1f}", level.latency_cycles)});
  out += table.render("");
  // The stream mixes: one row per number of load streams, one column per
  // number of store streams.
  for (const MemoryLevelCalibration& level : calibration.levels) {
    if (level.stream_mixes.empty()) continue;
    out += fmt::format(
        "\n{} stream mixes (bytes loaded and stored together per cycle, loads and stores at "
        "once):\n",
        level.level);
    std::vector<TextTable::Align> align(kMaxMixedStoreStreams + 2, TextTable::Align::Right);
    align[0] = TextTable::Align::Left;
    TextTable mixes(align);
    std::vector<std::string> header{"load streams"};
    for (unsigned stores = 0; stores <= kMaxMixedStoreStreams; ++stores)
      header.push_back(fmt::format("{} store{}", stores, stores == 1 ? "" : "s"));
    mixes.add_row(header);
    for (unsigned loads = 0; loads <= kMaxMixedLoadStreams; ++loads) {
      std::vector<std::string> row{std::to_string(loads)};
      for (unsigned stores = 0; stores <= kMaxMixedStoreStreams; ++stores) {
        const StreamMixCalibration* mix = level.stream_mix(loads, stores);
        row.push_back(mix ? fmt::format("{:.2f}", mix->bytes_per_cycle) : std::string("-"));
      }
      mixes.add_row(row);
    }
    out += mixes.render("");
  }
  return out;
}

std::string render_json(const CalibrationResult& result) {
  nlohmann::json out = nlohmann::json::parse(calibration_json(result.calibration));
  out["path"] = result.path.empty() ? nlohmann::json(nullptr) : nlohmann::json(result.path);
  out["reused"] = result.reused;
  out["reason"] = result.reused ? nlohmann::json(nullptr) : nlohmann::json(result.reason);
  return out.dump() + "\n";
}

}  // namespace

std::string render_calibration(const CalibrationResult& result, OutputFormat format) {
  switch (format) {
    case OutputFormat::Table:
      return render_table(result);
    case OutputFormat::Json:
      return render_json(result);
    case OutputFormat::Csv:
      break;
  }
  throw ViewError("weft calibrate has no CSV output (use --format table or json)");
}

}  // namespace weft
