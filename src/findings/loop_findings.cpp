#include "findings/loop_findings.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <tuple>

#include "findings/finding_error.h"
#include "findings/recorded_accesses.h"
#include "static/binary_structure.h"

namespace weft {
namespace {

// FILE names the loop's file: the same path, or its last components.
bool file_matches(const std::string& loop_file, const std::string& wanted) {
  if (loop_file == wanted) return true;
  return loop_file.size() > wanted.size() &&
         loop_file.compare(loop_file.size() - wanted.size(), wanted.size(), wanted) == 0 &&
         loop_file[loop_file.size() - wanted.size() - 1] == '/';
}

bool is_elf(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  return in.gcount() == 4 && magic[0] == 0x7f && magic[1] == 'E' && magic[2] == 'L' &&
         magic[3] == 'F';
}

// `weft loops --profile`: gives the loops' accesses what the profile's
// memory traces recorded for them; returns how many got it.
uint32_t join_profile(std::vector<LoopPerformance>& loops, const LoopQuery& query) {
  const Profile profile = Profile::open(query.profile);
  if (!profile.has_analysis(AnalysisId::Traces))
    throw FindingError("'" + query.profile +
                       "' has no memory traces: record it with the traces analysis (weft record "
                       "--analyses traces)");
  std::vector<LineRange> lines;
  for (const LoopPerformance& loop : loops)
    lines.push_back({loop.file, loop.first_line, loop.last_line});
  const TracedPcs traced = traced_pcs_on_lines(profile, lines);
  Symbolizer symbolizer{ModuleMap()};
  uint32_t joined = 0;
  for (size_t l = 0; l < loops.size(); ++l)
    joined +=
        join_recorded_accesses(loops[l], query.binary, {lines[l]}, traced, profile, symbolizer);
  return joined;
}

}  // namespace

// The calibration named by the query, or the machine's own; a missing,
// unreadable or foreign default file is a note, an explicit file that
// cannot be used a FindingError.
LoopCalibration resolve_calibration(const std::string& explicit_file) {
  LoopCalibration result;
  MachineCalibration calibration;
  std::error_code ec;
  if (!explicit_file.empty()) {
    try {
      calibration = read_calibration_file(explicit_file);
    } catch (const CalibrationError& error) {
      throw FindingError(error.what());
    }
    result.path = explicit_file;
  } else {
    result.path = default_calibration_path();
    if (result.path.empty() || !std::filesystem::exists(result.path, ec)) {
      result.note =
          "no calibration of this machine: run `weft calibrate` for the L2 and RAM estimates";
      return result;
    }
    try {
      calibration = read_calibration_file(result.path);
    } catch (const CalibrationError& error) {
      result.note = std::string(error.what()) +
                    ": run `weft calibrate --force` for the L2 and "
                    "RAM estimates";
      return result;
    }
    if (!(calibration.key == this_machine_key())) {
      result.note = "the calibration in " + result.path +
                    " is of another machine: run `weft calibrate` for the L2 and RAM estimates";
      return result;
    }
  }
  const MemoryLevelCalibration* l2 = calibration.level("L2");
  const MemoryLevelCalibration* ram = calibration.level("RAM");
  if (l2 == nullptr || ram == nullptr) {
    const std::string missing = "the calibration in " + result.path + " has no " +
                                (l2 == nullptr ? "L2" : "RAM") + " level";
    if (!explicit_file.empty()) throw FindingError(missing);
    result.note = missing + ": run `weft calibrate --force` for the L2 and RAM estimates";
    return result;
  }
  result.used = true;
  if (const MemoryLevelCalibration* l1 = calibration.level("L1")) result.l1 = *l1;
  result.l2 = *l2;
  result.ram = *ram;
  // The file's figures are per TSC tick; MCA's L1 cycles are core cycles.
  // With the ratio measured beside them, both levels are converted to core
  // cycles (bytes per tick x ticks per cycle; ticks / ticks per cycle).
  if (calibration.tsc_ticks_per_core_cycle > 0) {
    result.tsc_ticks_per_core_cycle = calibration.tsc_ticks_per_core_cycle;
    for (MemoryLevelCalibration* level : {&result.l1, &result.l2, &result.ram}) {
      level->load_bytes_per_cycle *= calibration.tsc_ticks_per_core_cycle;
      level->store_bytes_per_cycle *= calibration.tsc_ticks_per_core_cycle;
      for (StreamMixCalibration& mix : level->stream_mixes)
        mix.bytes_per_cycle *= calibration.tsc_ticks_per_core_cycle;
      level->latency_cycles /= calibration.tsc_ticks_per_core_cycle;
    }
  }
  result.line_bytes = calibration.key.line_bytes;
  return result;
}

MemoryLevelEstimate estimate_memory_level(const LoopPerformance& loop,
                                          const MemoryLevelCalibration& level, uint32_t line_bytes,
                                          const std::vector<MemoryLevelCalibration>& nearer) {
  MemoryLevelEstimate estimate;
  estimate.level = level.level;
  // The strided streams: accesses of one direction through the same
  // address registers (an unrolled loop's [rax], [rax + 8], ...).
  struct Stream {
    int64_t stride = 0;
    int64_t low = INT64_MAX, high = INT64_MIN;  // bytes the iteration's accesses span
    uint32_t accesses = 0;
    double per_iteration = 0;  // the most executed access's executions per iteration
  };
  // Irregular accesses per iteration times the latency each pays.
  double irregular_latency = 0;
  std::map<std::pair<std::string, bool>, Stream> streams;
  for (const MemoryAccess& access : loop.memory_accesses) {
    double& bytes = access.store ? estimate.store_bytes : estimate.load_bytes;
    if (access.recorded) ++estimate.recorded_strides;
    // Without a run, every access executes once per iteration.
    const double per_iteration = access.recorded ? access.recorded->per_iteration : 1.0;
    switch (access.effective_pattern()) {
      case AccessPattern::kIrregular: {
        ++estimate.irregular_accesses;
        double latency = level.latency_cycles;
        const uint64_t footprint = access.recorded ? access.recorded->footprint_bytes : 0;
        for (size_t n = 0; footprint != 0 && n < nearer.size(); ++n)
          if (footprint <= nearer[n].cache_bytes / 2) {
            // L1's latency is in MCA's own L1 figure already.
            latency = nearer[n].level == "L1" ? 0.0 : nearer[n].latency_cycles;
            ++estimate.cached_irregular_accesses;
            break;
          }
        irregular_latency += per_iteration * latency;
        break;
      }
      case AccessPattern::kUnknownStride:
        bytes += access.bytes * per_iteration;  // as if stride 1
        ++(access.store ? estimate.store_streams : estimate.load_streams);
        break;
      case AccessPattern::kStrided: {
        Stream& stream = streams[{access.address, access.store}];
        stream.stride = access.effective_stride();
        stream.low = std::min(stream.low, access.displacement);
        stream.high = std::max(
            stream.high, access.displacement + static_cast<int64_t>(std::max(access.bytes, 1u)));
        ++stream.accesses;
        stream.per_iteration = std::max(stream.per_iteration, per_iteration);
        break;
      }
    }
  }
  const double line = line_bytes;
  for (const auto& [key, stream] : streams) {
    const double stride = std::fabs(static_cast<double>(stream.stride));
    double bytes = 0;  // stride 0: the same bytes every iteration, kept in L1
    if (stride > 0 && stride <= line) {
      bytes = stride;
    } else if (stride > line) {
      const double lines = std::ceil(static_cast<double>(stream.high - stream.low) / line);
      bytes = line * std::clamp(lines, 1.0, static_cast<double>(stream.accesses));
    }
    (key.second ? estimate.store_bytes : estimate.load_bytes) += bytes * stream.per_iteration;
    if (bytes > 0) ++(key.second ? estimate.store_streams : estimate.load_streams);
  }
  // Loads and stores at once move what the calibration's mix of as many
  // streams moved (more streams than its largest mix: as that mix).
  const StreamMixCalibration* mix =
      estimate.load_streams + estimate.store_streams == 0
          ? nullptr
          : level.stream_mix(std::min<uint32_t>(estimate.load_streams, kMaxMixedLoadStreams),
                             std::min<uint32_t>(estimate.store_streams, kMaxMixedStoreStreams));
  if (mix != nullptr) {
    estimate.stream_mix_bytes_per_cycle = mix->bytes_per_cycle;
    estimate.bandwidth_cycles = (estimate.load_bytes + estimate.store_bytes) / mix->bytes_per_cycle;
  } else {
    estimate.bandwidth_cycles = estimate.load_bytes / level.load_bytes_per_cycle +
                                estimate.store_bytes / level.store_bytes_per_cycle;
  }
  estimate.latency_cycles = irregular_latency / kIrregularMemoryParallelism;
  const double memory_cycles = estimate.bandwidth_cycles + estimate.latency_cycles;
  const double core_cycles = loop.effective_cycles_per_iteration();
  estimate.cycles_per_iteration = std::max(core_cycles, memory_cycles);
  if (memory_cycles > core_cycles)
    estimate.bottleneck =
        level.level +
        (estimate.bandwidth_cycles >= estimate.latency_cycles ? " bandwidth" : " latency");
  else
    estimate.bottleneck = "core (L1)";
  return estimate;
}

std::vector<MemoryLevelEstimate> memory_level_estimates(const LoopPerformance& loop,
                                                        const LoopCalibration& calibration) {
  return {estimate_memory_level(loop, calibration.l2, calibration.line_bytes, {calibration.l1}),
          estimate_memory_level(loop, calibration.ram, calibration.line_bytes,
                                {calibration.l1, calibration.l2})};
}

std::vector<SourceLoop> group_by_source_loop(std::vector<LoopPerformance> loops) {
  std::sort(loops.begin(), loops.end(), [](const LoopPerformance& a, const LoopPerformance& b) {
    return std::tie(a.function_start, a.file, a.first_line, a.header) <
           std::tie(b.function_start, b.file, b.first_line, b.header);
  });
  std::vector<SourceLoop> groups;
  for (LoopPerformance& loop : loops) {
    SourceLoop* last = groups.empty() ? nullptr : &groups.back();
    // Sorted by first line, a loop joins the previous group when its range
    // starts inside the group's range (ranges overlap).
    const bool joins = last != nullptr && !loop.file.empty() && loop.first_line != 0 &&
                       last->versions.front().function_start == loop.function_start &&
                       last->file == loop.file && loop.first_line <= last->last_line;
    if (!joins) {
      groups.push_back({loop.function, loop.file, loop.first_line, loop.last_line, {}});
      last = &groups.back();
    }
    last->last_line = std::max(last->last_line, loop.last_line);
    last->versions.push_back(std::move(loop));
  }
  for (SourceLoop& group : groups)
    std::sort(
        group.versions.begin(), group.versions.end(),
        [](const LoopPerformance& a, const LoopPerformance& b) { return a.header < b.header; });
  return groups;
}

LoopFindings find_loops(const LoopQuery& query) {
  std::error_code ec;
  if (!std::filesystem::exists(query.binary, ec))
    throw FindingError("cannot open '" + query.binary + "': no such file");
  if (!std::filesystem::is_regular_file(query.binary, ec))
    throw FindingError("'" + query.binary + "' is not a regular file");
  if (!is_elf(query.binary)) throw FindingError("'" + query.binary + "' is not an ELF file");
  std::unique_ptr<BinaryStructure> structure = BinaryStructure::open(query.binary);
  if (!structure) throw FindingError("'" + query.binary + "' is not a readable x86-64 ELF file");
  const std::vector<uint64_t> starts = structure->function_starts();
  if (starts.empty())
    throw FindingError("'" + query.binary +
                       "' has no function symbols (stripped?): weft loops needs its symbol table");

  std::vector<const FunctionStructure*> functions;
  if (!query.function.empty()) {
    functions = structure->functions_named(query.function);
    if (functions.empty())
      throw FindingError("no function named '" + query.function + "' in '" + query.binary + "'");
  } else {
    for (uint64_t start : starts)
      if (const FunctionStructure* function = structure->function_at(start))
        if (function->start == start) functions.push_back(function);
  }

  LoopFindings findings;
  findings.binary = query.binary;
  findings.profile = query.profile;
  findings.calibration = resolve_calibration(query.calibration_file);
  try {
    LoopPerformanceAnalyzer analyzer(query.binary, query.cpu);
    findings.cpu = analyzer.cpu();
    analyzer.set_trip_counts(query.trip_count, query.trip_counts);
    std::vector<LoopPerformance> loops;
    for (const FunctionStructure* function : functions) {
      // With --line, only the functions with a loop spanning it: simulating
      // every loop of a large binary first took seconds (a 4,000-instruction
      // unrolled loop elsewhere) for one line's answer.
      if (query.line != 0 &&
          std::none_of(function->loops.begin(), function->loops.end(), [&](const Loop& loop) {
            return file_matches(loop.file, query.line_file) && loop.first_line <= query.line &&
                   query.line <= loop.last_line;
          }))
        continue;
      ++findings.functions_analyzed;
      for (LoopPerformance& loop : analyzer.analyze(*function)) loops.push_back(std::move(loop));
    }
    if (!query.profile.empty()) findings.recorded_accesses = join_profile(loops, query);
    if (findings.calibration.used)
      for (LoopPerformance& loop : loops)
        if (loop.modeled) loop.memory_levels = memory_level_estimates(loop, findings.calibration);
    findings.source_loops = group_by_source_loop(std::move(loops));
  } catch (const LoopPerformanceError& error) {
    throw FindingError(error.what());
  }
  structure->save_cache();

  if (query.line != 0) {
    std::erase_if(findings.source_loops, [&](const SourceLoop& loop) {
      return !file_matches(loop.file, query.line_file) || query.line < loop.first_line ||
             query.line > loop.last_line;
    });
    if (findings.source_loops.empty())
      throw FindingError("no innermost loop spans " + query.line_file + ":" +
                         std::to_string(query.line) + " in '" + query.binary + "'");
  }
  return findings;
}

}  // namespace weft
