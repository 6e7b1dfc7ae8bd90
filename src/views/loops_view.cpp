#include "views/loops_view.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "views/text_table.h"

namespace weft {
namespace {

std::string base_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string source_range(const std::string& file, uint32_t first, uint32_t last) {
  if (file.empty()) return "(no line information)";
  if (first == last) return fmt::format("{}:{}", base_name(file), first);
  return fmt::format("{}:{}-{}", base_name(file), first, last);
}

// "1 load", "2 loads".
std::string count_of(uint32_t count, const std::string& noun) {
  return fmt::format("{} {}{}", count, noun, count == 1 ? "" : "s");
}

std::string ratio_text(const std::optional<double>& ratio) {
  return ratio ? fmt::format("{:.2f}", *ratio) : "-";
}

nlohmann::json ratio_json(const std::optional<double>& ratio) {
  return ratio ? nlohmann::json(*ratio) : nlohmann::json(nullptr);
}

// The table's label: the JSON key, but "add/sub" for add_sub.
const char* kind_label(FpKind kind) {
  return kind == FpKind::kAddSub ? "add/sub" : fp_kind_name(kind);
}

// "8 B, stride 8", "8 B, irregular", "8 B, stride unknown".
std::string access_text(const MemoryAccess& access) {
  const std::string size = access.bytes == 0 ? "size unknown" : fmt::format("{} B", access.bytes);
  switch (access.pattern) {
    case AccessPattern::kStrided:
      return fmt::format("{}, stride {}", size, access.stride);
    case AccessPattern::kIrregular:
      return size + ", irregular";
    case AccessPattern::kUnknownStride:
      break;
  }
  return size + ", stride unknown";
}

// What a run recorded for it: " (run: stride 128)", " (run: irregular over
// 1 KiB)", "" when no profile was joined.
std::string recorded_text(const MemoryAccess& access) {
  if (!access.recorded) return "";
  const MemoryAccess::Recorded& r = *access.recorded;
  if (!r.irregular) return fmt::format(" (run: stride {})", r.stride);
  if (r.footprint_bytes == 0) return " (run: irregular)";
  return r.footprint_bytes % 1024 == 0
             ? fmt::format(" (run: irregular over {} KiB)", r.footprint_bytes / 1024)
             : fmt::format(" (run: irregular over {} B)", r.footprint_bytes);
}

// "rsi + rax", "rdi - 8", "rsi + rax + 32".
std::string address_text(const MemoryAccess& access) {
  if (access.displacement == 0) return access.address;
  return fmt::format("{} {} {}", access.address, access.displacement < 0 ? '-' : '+',
                     access.displacement < 0 ? -access.displacement : access.displacement);
}

std::string level_text(const MemoryLevelCalibration& level) {
  return fmt::format("{} load {:.2f} B/cycle, store {:.2f} B/cycle, latency {:.1f} cycles",
                     level.level, level.load_bytes_per_cycle, level.store_bytes_per_cycle,
                     level.latency_cycles);
}

void render_version(std::string& out, const LoopPerformance& loop, size_t number, size_t count,
                    const CpuModel& cpu) {
  out += fmt::format("  version {}/{}  header 0x{:x}  {} instructions, {} block{}{}  {}\n", number,
                     count, loop.header, loop.mix.instructions, loop.blocks,
                     loop.blocks == 1 ? "" : "s",
                     loop.several_paths ? " (several paths, all blocks analyzed)" : "",
                     source_range(loop.file, loop.first_line, loop.last_line));
  const InstructionMix& mix = loop.mix;
  out += fmt::format("    mix: {}, {}, {} FP add/sub, {} FP mul, {} FMA, {} FP div, {} other\n",
                     count_of(mix.loads, "load"), count_of(mix.stores, "store"), mix.fp_add_sub,
                     mix.fp_mul, mix.fp_fma, mix.fp_div, mix.other);
  TextTable table({TextTable::Align::Left, TextTable::Align::Right, TextTable::Align::Right,
                   TextTable::Align::Right, TextTable::Align::Right});
  table.add_row({"vectorization", fmt::format("packed {}", cpu.vector_width_bits),
                 "packed narrower", "scalar", "instructions"});
  for (FpKind kind : kFpKinds) {
    const VectorizationCounts& counts = loop.counts(kind);
    if (counts.total() == 0) continue;
    table.add_row({kind_label(kind), ratio_text(counts.full_width_ratio()),
                   ratio_text(counts.below_width_ratio()), ratio_text(counts.scalar_ratio()),
                   std::to_string(counts.total())});
  }
  out += table.render("    ");
  out += fmt::format(
      "    vector width used: {}\n",
      loop.vector_width_used == 0
          ? std::string("none (scalar)")
          : fmt::format("{} of {} bits", loop.vector_width_used, cpu.vector_width_bits));
  if (!loop.memory_accesses.empty()) {
    std::string accesses;
    for (const MemoryAccess& access : loop.memory_accesses)
      accesses +=
          fmt::format("{}{} [{}] {}", accesses.empty() ? "" : "; ", access.store ? "store" : "load",
                      address_text(access), access_text(access) + recorded_text(access));
    out += fmt::format("    memory accesses: {}\n", accesses);
  }
  if (!loop.modeled) {
    out += fmt::format("    not modeled: {}\n", loop.not_modeled_reason);
    return;
  }
  out += fmt::format("    cycles per iteration (L1): {:.2f}\n", loop.cycles_per_iteration);
  if (const auto& trip = loop.with_trip_count)
    out += trip->simulated
               ? fmt::format(
                     "    cycles per iteration (L1, {} iterations per entry): {:.2f} (the "
                     "enclosing loop's iteration simulated, its {} own instructions included{})\n",
                     trip->trip_count, trip->cycles_per_iteration, trip->enclosing_instructions,
                     trip->inner_loops > 1 ? fmt::format(", with {} inner loops", trip->inner_loops)
                                           : std::string())
               : fmt::format(
                     "    cycles per iteration (L1, {} iterations per entry): {:.2f} (an "
                     "entry far outlasts the out-of-order window: not simulated)\n",
                     trip->trip_count, trip->cycles_per_iteration);
  for (const MemoryLevelEstimate& level : loop.memory_levels) {
    // Which of the calibration's stream mixes the bandwidth is from.
    const std::string mix =
        level.stream_mix_bytes_per_cycle > 0
            ? fmt::format(" by {} load and {} store stream{} at {:.2f} B/cycle", level.load_streams,
                          level.store_streams,
                          level.load_streams + level.store_streams == 1 ? "" : "s",
                          level.stream_mix_bytes_per_cycle)
            : std::string();
    out += fmt::format(
        "    cycles per iteration ({}): {:.2f} ({:g} B loaded, {:g} B stored{}, {} irregular per "
        "iteration: bandwidth {:.2f} + latency {:.2f} cycles), bound: {}\n",
        level.level, level.cycles_per_iteration, level.load_bytes, level.store_bytes, mix,
        level.irregular_accesses, level.bandwidth_cycles, level.latency_cycles, level.bottleneck);
  }
  out += fmt::format(
      "    bounds: front end {:.2f} ({} micro-ops), ports {:.2f} ({}), dependence chain {:.2f}\n",
      loop.front_end_bound, loop.micro_ops, loop.port_bound, loop.port_bound_resource,
      loop.latency_bound);
  std::string ports;
  for (const PortPressure& port : loop.port_pressure)
    if (port.cycles_per_iteration >= 0.005)
      ports += fmt::format("{}{} {:.2f}", ports.empty() ? "" : ", ", port.port,
                           port.cycles_per_iteration);
  out += fmt::format("    port cycles per iteration: {}\n", ports.empty() ? "none" : ports);
  if (!loop.latency_chain.empty()) {
    std::string chain;
    for (const std::string& instruction : loop.latency_chain)
      chain += (chain.empty() ? "" : "; ") + instruction;
    out += fmt::format("    critical chain: {}\n", chain);
  }
  out += fmt::format("    bottleneck: {}\n", loop.bottleneck.description);
  for (const std::string& hint : loop.hints) out += fmt::format("    hint: {}\n", hint);
  const VectorizationProjection& projection = loop.projection;
  if (projection.projected)
    out += fmt::format(
        "    fully vectorized: {:.2f} cycles per source iteration ({:.2f} per loop iteration, {} "
        "elements per vector, {} replaced{}), x{:.2f}\n",
        projection.cycles_per_source_iteration, projection.cycles_per_iteration,
        projection.elements_per_vector, count_of(projection.replaced_instructions, "instruction"),
        projection.kept_scalar_instructions > 0
            ? fmt::format(", {} scalar kept", projection.kept_scalar_instructions)
            : std::string(),
        projection.speedup);
  else
    out += fmt::format("    fully vectorized: not projected ({})\n", projection.reason);
}

std::string render_table(const LoopFindings& findings) {
  const CpuModel& cpu = findings.cpu;
  std::string out = fmt::format(
      "weft loops: {}\nCPU model: {}{} (LLVM {}), vectors {} bits, dispatch {} micro-ops per "
      "cycle\n",
      findings.binary, cpu.name, cpu.host ? " (this machine)" : "", cpu.llvm_version,
      cpu.vector_width_bits, cpu.dispatch_width);
  for (const std::string& caveat : cpu.caveats) out += fmt::format("model caveat: {}\n", caveat);
  if (findings.calibration.used)
    out += fmt::format("calibration: {} ({}; {}; {})\n", findings.calibration.path,
                       level_text(findings.calibration.l2), level_text(findings.calibration.ram),
                       findings.calibration.tsc_ticks_per_core_cycle > 0
                           ? fmt::format("core cycles, {:.3f} TSC ticks per core cycle",
                                         findings.calibration.tsc_ticks_per_core_cycle)
                           : std::string("TSC ticks: the file has no TSC ticks per core cycle"));
  else
    out += fmt::format("note: {}\n", findings.calibration.note);
  if (!findings.profile.empty())
    out += fmt::format("profile: {} ({} with a recorded stride)\n", findings.profile,
                       findings.recorded_accesses == 1
                           ? std::string("1 memory access")
                           : fmt::format("{} memory accesses", findings.recorded_accesses));
  size_t versions = 0;
  for (const SourceLoop& loop : findings.source_loops) versions += loop.versions.size();
  out += fmt::format("{} functions, {} source loops, {} innermost binary loops\n",
                     findings.functions_analyzed, findings.source_loops.size(), versions);
  for (const SourceLoop& loop : findings.source_loops) {
    out += fmt::format("\nsource loop {} in {} ({} version{})\n",
                       source_range(loop.file, loop.first_line, loop.last_line), loop.function,
                       loop.versions.size(), loop.versions.size() == 1 ? "" : "s");
    for (size_t i = 0; i < loop.versions.size(); ++i)
      render_version(out, loop.versions[i], i + 1, loop.versions.size(), cpu);
  }
  return out;
}

nlohmann::json version_json_of(const LoopPerformance& loop) {
  nlohmann::json out;
  out["function"] = loop.function;
  out["function_start"] = loop.function_start;
  out["loop_index"] = loop.loop_index;
  out["header"] = loop.header;
  nlohmann::json ranges = nlohmann::json::array();
  for (const auto& [lo, hi] : loop.ranges) ranges.push_back({lo, hi});
  out["ranges"] = ranges;
  out["blocks"] = loop.blocks;
  out["several_paths"] = loop.several_paths;
  out["file"] = loop.file.empty() ? nlohmann::json(nullptr) : nlohmann::json(loop.file);
  out["first_line"] = loop.first_line;
  out["last_line"] = loop.last_line;
  out["enclosing_loop_header"] = loop.enclosing_loop_header
                                     ? nlohmann::json(*loop.enclosing_loop_header)
                                     : nlohmann::json(nullptr);
  out["instructions"] = loop.instructions;
  out["mix"] = {{"instructions", loop.mix.instructions},
                {"loads", loop.mix.loads},
                {"stores", loop.mix.stores},
                {"fp_add_sub", loop.mix.fp_add_sub},
                {"fp_mul", loop.mix.fp_mul},
                {"fp_fma", loop.mix.fp_fma},
                {"fp_div", loop.mix.fp_div},
                {"other", loop.mix.other}};
  nlohmann::json vectorization = nlohmann::json::object();
  for (FpKind kind : kFpKinds) {
    const VectorizationCounts& counts = loop.counts(kind);
    vectorization[fp_kind_name(kind)] = {
        {"full_width", counts.full_width},
        {"below_width", counts.below_width},
        {"scalar", counts.scalar},
        {"full_width_ratio", ratio_json(counts.full_width_ratio())},
        {"below_width_ratio", ratio_json(counts.below_width_ratio())},
        {"scalar_ratio", ratio_json(counts.scalar_ratio())}};
  }
  out["vectorization"] = vectorization;
  out["vector_width_used"] = loop.vector_width_used;
  nlohmann::json accesses = nlohmann::json::array();
  for (const MemoryAccess& access : loop.memory_accesses) {
    nlohmann::json a = {
        {"instruction", access.instruction},
        {"kind", access.store ? "store" : "load"},
        {"bytes", access.bytes},
        {"address", access.address},
        {"displacement", access.displacement},
        {"pattern", access_pattern_name(access.pattern)},
        {"stride", access.pattern == AccessPattern::kStrided ? nlohmann::json(access.stride)
                                                             : nlohmann::json(nullptr)}};
    // Joined with a profile's traces (weft report's hot loops, weft loops
    // --profile) only.
    if (access.recorded)
      a["recorded"] = {{"pattern", access.recorded->irregular ? "irregular" : "strided"},
                       {"stride", access.recorded->stride},
                       {"irregular_share", access.recorded->irregular_share},
                       {"accesses", access.recorded->accesses},
                       {"per_iteration", access.recorded->per_iteration},
                       {"footprint_bytes", access.recorded->footprint_bytes != 0
                                               ? nlohmann::json(access.recorded->footprint_bytes)
                                               : nlohmann::json(nullptr)}};
    accesses.push_back(std::move(a));
  }
  out["memory_accesses"] = accesses;
  out["modeled"] = loop.modeled;
  out["not_modeled_reason"] =
      loop.modeled ? nlohmann::json(nullptr) : nlohmann::json(loop.not_modeled_reason);
  if (!loop.modeled) return out;
  out["micro_ops"] = loop.micro_ops;
  out["cycles_per_iteration"] = loop.cycles_per_iteration;
  if (const auto& trip = loop.with_trip_count)
    out["with_trip_count"] = {{"trip_count", trip->trip_count},
                              {"simulated", trip->simulated},
                              {"enclosing_instructions", trip->enclosing_instructions},
                              {"inner_loops", trip->inner_loops},
                              {"cycles_per_iteration", trip->cycles_per_iteration}};
  else
    out["with_trip_count"] = nullptr;
  if (loop.memory_levels.empty()) {
    out["memory_levels"] = nullptr;
  } else {
    nlohmann::json levels = nlohmann::json::object();
    for (const MemoryLevelEstimate& level : loop.memory_levels)
      levels[level.level] = {{"cycles_per_iteration", level.cycles_per_iteration},
                             {"load_bytes", level.load_bytes},
                             {"store_bytes", level.store_bytes},
                             {"load_streams", level.load_streams},
                             {"store_streams", level.store_streams},
                             {"stream_mix_bytes_per_cycle", level.stream_mix_bytes_per_cycle},
                             {"irregular_accesses", level.irregular_accesses},
                             {"recorded_strides", level.recorded_strides},
                             {"cached_irregular_accesses", level.cached_irregular_accesses},
                             {"bandwidth_cycles", level.bandwidth_cycles},
                             {"latency_cycles", level.latency_cycles},
                             {"bottleneck", level.bottleneck}};
    out["memory_levels"] = levels;
  }
  out["bounds"] = {{"front_end", loop.front_end_bound},
                   {"port", loop.port_bound},
                   {"port_resource", loop.port_bound_resource},
                   {"latency", loop.latency_bound}};
  out["latency_chain"] = loop.latency_chain;
  nlohmann::json ports = nlohmann::json::object();
  for (const PortPressure& port : loop.port_pressure) ports[port.port] = port.cycles_per_iteration;
  out["port_pressure"] = ports;
  out["bottleneck"] = {
      {"kind", bottleneck_kind_name(loop.bottleneck.kind)},
      {"port", loop.bottleneck.port.empty() ? nlohmann::json(nullptr)
                                            : nlohmann::json(loop.bottleneck.port)},
      {"stall", loop.bottleneck.stall.empty() ? nlohmann::json(nullptr)
                                              : nlohmann::json(loop.bottleneck.stall)},
      {"description", loop.bottleneck.description},
      {"hint", loop.bottleneck.hint}};
  out["hints"] = loop.hints;
  const VectorizationProjection& projection = loop.projection;
  out["projection"] = {{"projected", projection.projected},
                       {"reason", projection.projected ? nlohmann::json(nullptr)
                                                       : nlohmann::json(projection.reason)},
                       {"elements_per_vector", projection.elements_per_vector},
                       {"replaced_instructions", projection.replaced_instructions},
                       {"kept_scalar_instructions", projection.kept_scalar_instructions},
                       {"cycles_per_iteration", projection.cycles_per_iteration},
                       {"cycles_per_source_iteration", projection.cycles_per_source_iteration},
                       {"speedup", projection.speedup}};
  return out;
}

std::string render_json(const LoopFindings& findings) {
  nlohmann::json out;
  out["binary"] = findings.binary;
  out["cpu"] = {{"name", findings.cpu.name},
                {"host", findings.cpu.host},
                {"llvm_version", findings.cpu.llvm_version},
                {"vector_width_bits", findings.cpu.vector_width_bits},
                {"dispatch_width", findings.cpu.dispatch_width},
                {"ports", findings.cpu.ports},
                {"caveats", findings.cpu.caveats}};
  const LoopCalibration& calibration = findings.calibration;
  auto level_json = [](const MemoryLevelCalibration& level) {
    return nlohmann::json{{"load_bytes_per_cycle", level.load_bytes_per_cycle},
                          {"store_bytes_per_cycle", level.store_bytes_per_cycle},
                          {"latency_cycles", level.latency_cycles}};
  };
  out["calibration"] = {
      {"used", calibration.used},
      {"path",
       calibration.path.empty() ? nlohmann::json(nullptr) : nlohmann::json(calibration.path)},
      {"note", calibration.used ? nlohmann::json(nullptr) : nlohmann::json(calibration.note)},
      {"line_bytes", calibration.line_bytes},
      {"tsc_ticks_per_core_cycle", calibration.tsc_ticks_per_core_cycle > 0
                                       ? nlohmann::json(calibration.tsc_ticks_per_core_cycle)
                                       : nlohmann::json(nullptr)},
      {"irregular_memory_parallelism", kIrregularMemoryParallelism},
      {"levels", calibration.used ? nlohmann::json{{"L2", level_json(calibration.l2)},
                                                   {"RAM", level_json(calibration.ram)}}
                                  : nlohmann::json(nullptr)}};
  out["profile"] = findings.profile.empty()
                       ? nlohmann::json(nullptr)
                       : nlohmann::json{{"path", findings.profile},
                                        {"recorded_accesses", findings.recorded_accesses}};
  out["functions_analyzed"] = findings.functions_analyzed;
  nlohmann::json loops = nlohmann::json::array();
  for (const SourceLoop& loop : findings.source_loops) {
    nlohmann::json versions = nlohmann::json::array();
    for (const LoopPerformance& version : loop.versions)
      versions.push_back(version_json_of(version));
    loops.push_back(
        {{"function", loop.function},
         {"file", loop.file.empty() ? nlohmann::json(nullptr) : nlohmann::json(loop.file)},
         {"first_line", loop.first_line},
         {"last_line", loop.last_line},
         {"versions", versions}});
  }
  out["source_loops"] = loops;
  return out.dump() + "\n";
}

}  // namespace

std::string render_loops(const LoopFindings& findings, OutputFormat format) {
  switch (format) {
    case OutputFormat::Table:
      return render_table(findings);
    case OutputFormat::Json:
      return render_json(findings);
    case OutputFormat::Csv:
      break;
  }
  throw ViewError("weft loops has no CSV output (use --format table or json)");
}

nlohmann::json loop_version_json(const LoopPerformance& loop) { return version_json_of(loop); }

std::string loop_summary_line(const LoopPerformance& loop) {
  std::vector<std::string> fp;
  for (FpKind kind : kFpKinds) {
    const VectorizationCounts& c = loop.counts(kind);
    if (c.total() == 0) continue;
    const std::string width = c.full_width == c.total()    ? "packed full width"
                              : c.scalar == c.total()      ? "scalar"
                              : c.below_width == c.total() ? "packed below full width"
                                                           : "mixed";
    fp.push_back(fmt::format("{} {}", kind_label(kind), width));
  }
  std::string text =
      loop.modeled ? fmt::format("L1 {:.2f} cycles/iteration{}; {}", loop.cycles_per_iteration,
                                 loop.with_trip_count && loop.with_trip_count->simulated
                                     ? fmt::format(" ({:.2f} at its {} iterations per entry)",
                                                   loop.with_trip_count->cycles_per_iteration,
                                                   loop.with_trip_count->trip_count)
                                     : std::string(),
                                 loop.bottleneck.description)
                   : fmt::format("not simulated ({})", loop.not_modeled_reason);
  text += fp.empty() ? "; no FP work" : fmt::format("; FP {}", fmt::join(fp, ", "));
  return text;
}

}  // namespace weft
