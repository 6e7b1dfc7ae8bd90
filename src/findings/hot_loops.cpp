#include "findings/hot_loops.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>

#include "analyzers/imbalance/imbalance_tables.h"
#include "findings/finding_error.h"
#include "static/binary_structure.h"

namespace weft {

namespace {

// weft-cc's access hook: a module defining it is an instrumented build.
constexpr const char* kInstrumentationMarker = "__tsan_read8";

std::string base_name(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

// One analyzer and one binary structure per file, opened once; the plain
// build's loops per function, analyzed once.
class LoopAnalyses {
 public:
  LoopAnalyses(std::string cpu, std::string plain)
      : cpu_(std::move(cpu)), plain_(std::move(plain)) {}

  void analyze(HotLoop& loop) {
    Module& m = open(loop.module);
    if (!m.error.empty()) {
      loop.not_analyzed = m.error;
      return;
    }
    if (!m.instrumented) {
      const FunctionStructure* function = m.binary->function_at(loop.vaddr);
      const Loop* binary_loop = function ? function->innermost_loop(loop.vaddr) : nullptr;
      if (!binary_loop) {
        loop.not_analyzed = "no loop of the binary holds its busiest block";
        return;
      }
      loop.analyzed_in = loop.module;
      loop.performance = m.analyzer->analyze_loop(*function, *binary_loop);
      return;
    }
    if (plain_.empty()) {
      loop.not_analyzed = base_name(loop.module) +
                          " is a weft-cc build, whose loops call the instrumentation: give "
                          "--binary with a build of it without weft-cc (same compiler and flags)";
      return;
    }
    analyze_in_plain_build(loop);
  }

  std::string cpu_name() const {
    for (const auto& [path, m] : modules_)
      if (m.analyzer) return m.analyzer->cpu().name;
    return cpu_.empty() ? "this machine's" : cpu_;
  }

 private:
  struct Module {
    std::unique_ptr<LoopPerformanceAnalyzer> analyzer;
    std::unique_ptr<BinaryStructure> binary;
    bool instrumented = false;
    std::string error;
    std::map<std::string, std::vector<LoopPerformance>> loops;  // by function name
  };

  Module& open(const std::string& path) {
    auto [it, fresh] = modules_.try_emplace(path);
    Module& m = it->second;
    if (!fresh) return m;
    m.binary = BinaryStructure::open(path);
    if (!m.binary) {
      m.error = path + " is not here or not a readable x86-64 ELF file";
      return m;
    }
    m.instrumented = !m.binary->functions_named(kInstrumentationMarker).empty();
    // The file reads: what fails now is the CPU (unknown to LLVM 14), which
    // fails every loop alike.
    try {
      m.analyzer = std::make_unique<LoopPerformanceAnalyzer>(path, cpu_);
    } catch (const LoopPerformanceError& e) {
      throw FindingError(e.what());
    }
    return m;
  }

  // The plain build's innermost loop of the same function whose source lines
  // overlap the region's most; the first in address order among equals.
  void analyze_in_plain_build(HotLoop& loop) {
    Module& m = open(plain_);
    if (!m.error.empty() || m.instrumented) {
      loop.not_analyzed =
          m.error.empty() ? "--binary " + plain_ + " is a weft-cc build too" : m.error;
      return;
    }
    auto cached = m.loops.find(loop.function);
    if (cached == m.loops.end()) {
      std::vector<LoopPerformance> loops;
      for (const FunctionStructure* f : m.binary->functions_named(loop.function))
        for (LoopPerformance& l : m.analyzer->analyze(*f)) loops.push_back(std::move(l));
      cached = m.loops.emplace(loop.function, std::move(loops)).first;
    }
    const LoopPerformance* best = nullptr;
    uint32_t best_overlap = 0;
    for (const LoopPerformance& candidate : cached->second) {
      if (base_name(candidate.file) != base_name(loop.region.file)) continue;
      const uint32_t first = std::max(candidate.first_line, loop.region.first_line);
      const uint32_t last = std::min(candidate.last_line, loop.region.last_line);
      const uint32_t overlap = last >= first ? last - first + 1 : 0;
      if (overlap > best_overlap) {
        best = &candidate;
        best_overlap = overlap;
      }
    }
    if (!best) {
      loop.not_analyzed = "no innermost loop of " + loop.function + " in " + base_name(plain_) +
                          " spans its source lines";
      return;
    }
    loop.analyzed_in = plain_;
    loop.performance = *best;
  }

  std::string cpu_;
  std::string plain_;
  std::map<std::string, Module> modules_;
};

}  // namespace

HotLoopFindings find_hot_loops(const Profile& profile, size_t top, const std::string& cpu,
                               const std::string& plain_binary) {
  HotLoopFindings f;
  f.plain_binary = plain_binary;
  f.recorded = profile.has_analysis(AnalysisId::Imbalance);
  if (!f.recorded) return f;
  const std::vector<RegionInfo> regions = profile.regions();
  std::map<int64_t, const RegionInfo*> by_id;
  for (const RegionInfo& r : regions) by_id[r.id] = &r;

  struct Totals {
    uint64_t instructions = 0;
    std::vector<uint64_t> threads;
    std::map<uint64_t, uint64_t> decisions;  // decision pc -> instructions
  };
  std::map<int64_t, Totals> loops;
  for (const DecisionInstructions& d : executed_instructions(profile)) {
    f.instructions += d.instructions;
    auto region = by_id.find(d.region_id);
    if (region == by_id.end() || region->second->kind != "loop") continue;
    Totals& t = loops[d.region_id];
    t.instructions += d.instructions;
    if (t.threads.size() <= d.thread) t.threads.resize(d.thread + 1);
    t.threads[d.thread] += d.instructions;
    t.decisions[d.decision_pc] += d.instructions;
  }
  std::vector<std::pair<uint64_t, int64_t>> ranked;
  for (const auto& [id, t] : loops) ranked.push_back({t.instructions, id});
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  std::erase_if(ranked, [&](const auto& r) {
    return static_cast<double>(r.first) < kMinHotLoopShare * static_cast<double>(f.instructions);
  });
  if (ranked.size() > top) ranked.resize(top);

  std::map<int64_t, RegionVolume> volumes;
  for (const RegionVolume& v : profile.region_volumes()) volumes[v.region.id] = v;
  LoopAnalyses analyses(cpu, plain_binary);
  for (const auto& [instructions, id] : ranked) {
    const Totals& t = loops[id];
    HotLoop loop;
    loop.region = *by_id[id];
    loop.instructions = instructions;
    loop.share = f.instructions ? static_cast<double>(instructions) / f.instructions : 0;
    loop.thread_instructions = t.threads;
    uint64_t busiest_thread = 0, running = 0;
    for (uint64_t n : t.threads)
      if (n > 0) {
        busiest_thread = std::max(busiest_thread, n);
        ++running;
      }
    loop.thread_spread =
        running ? static_cast<double>(busiest_thread) * running / static_cast<double>(instructions)
                : 0;
    if (auto v = volumes.find(id); v != volumes.end()) {
      loop.raw = v->second.raw;
      loop.rar = v->second.rar;
    }
    const auto busiest =
        std::max_element(t.decisions.begin(), t.decisions.end(),
                         [](const auto& a, const auto& b) { return a.second < b.second; });
    if (const std::optional<SourcePosition> at = profile.source_position(busiest->first))
      loop.function = at->function;
    if (const std::optional<Profile::ModuleAddress> at = profile.module_address(busiest->first)) {
      loop.module = at->path;
      loop.vaddr = at->vaddr;
      analyses.analyze(loop);
    } else {
      loop.not_analyzed = "its code is in no file";
    }
    f.loops.push_back(std::move(loop));
  }
  f.cpu = analyses.cpu_name();
  // The L2 and RAM estimates of weft loops, with this machine's calibration.
  const LoopCalibration calibration = resolve_calibration("");
  f.calibration_note = calibration.note;
  if (calibration.used)
    for (HotLoop& loop : f.loops)
      if (loop.performance && loop.performance->modeled)
        loop.performance->memory_levels = {
            estimate_memory_level(*loop.performance, calibration.l2, calibration.line_bytes),
            estimate_memory_level(*loop.performance, calibration.ram, calibration.line_bytes)};
  return f;
}

void attach_memory_hints(HotLoopFindings& loops, const MemoryHints& memory) {
  for (HotLoop& loop : loops.loops)
    for (const MemoryHint& hint : memory.hints)
      if (!loop.region.file.empty() && hint.position.file == loop.region.file &&
          hint.position.line >= loop.region.first_line &&
          hint.position.line <= loop.region.last_line)
        loop.memory.push_back(hint);
}

}  // namespace weft
