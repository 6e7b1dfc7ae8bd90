#include "findings/hot_loops.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>

#include "analyzers/imbalance/imbalance_tables.h"
#include "findings/finding_error.h"
#include "findings/locality.h"
#include "findings/recorded_accesses.h"
#include "static/binary_structure.h"
#include "static/symbolizer.h"

namespace weft {

namespace {

// weft-cc's access hook: a module defining it is an instrumented build.
constexpr const char* kInstrumentationMarker = "__tsan_read8";

std::string base_name(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

// The profile's control-flow counts (the imbalance analysis): edges between
// block pcs, and memory instructions' executions, by runtime pc.
struct ControlFlowCounts {
  std::vector<EdgeTotal> edges;
  std::map<uint64_t, uint64_t> instructions;
};

// Blocks a superblock of the binary source may run through before the exit
// an edge names (VEX follows fall-throughs and jumps; a few blocks at most).
constexpr int kMaxSuperblockBlocks = 16;

// The executions of each block of `function` (ELF addresses; runtime pc =
// ELF address + delta) from the profile's edges between block pcs. An edge
// s -> t ran the block holding s and, when t is no successor of it, the
// blocks control falls (or jumps unconditionally) through to the one t is
// a successor of: a block pc of the binary source is a superblock's start,
// and a superblock goes on past branches not taken. An edge whose t is
// reached so from no block counts for s's block only.
std::vector<uint64_t> block_executions(const FunctionStructure& function,
                                       const std::vector<EdgeTotal>& edges, uint64_t delta) {
  std::vector<uint64_t> counts(function.blocks.size(), 0);
  auto index_of = [&](uint64_t vaddr) -> int64_t {
    const BasicBlock* block = function.block_at(vaddr);
    return block ? block - function.blocks.data() : -1;
  };
  for (const EdgeTotal& edge : edges) {
    const uint64_t from = edge.from - delta, to = edge.to - delta;
    if (from < function.start || from >= function.end) continue;
    int64_t at = index_of(from);
    if (at < 0) continue;
    std::vector<int64_t> path;
    bool reached = false;
    for (int step = 0; step < kMaxSuperblockBlocks && at >= 0; ++step) {
      path.push_back(at);
      const BasicBlock& block = function.blocks[at];
      if (std::any_of(block.successors.begin(), block.successors.end(),
                      [&](uint32_t s) { return function.blocks[s].start == to; })) {
        reached = true;
        break;
      }
      int64_t next = -1;
      for (uint32_t s : block.successors)
        if (block.successors.size() == 1 || function.blocks[s].start == block.end) next = s;
      at = next;
    }
    if (!reached) path.resize(1);
    for (int64_t b : path) counts[b] += edge.count;
  }
  return counts;
}

// The executions of each block: its memory instructions' (the most run of
// them: exact, each execution is counted) when it has any the profile
// counted, else block_executions' (a superblock's exits are told apart by
// their targets only, so a block may be missed where two of its paths
// branch to the same block).
std::vector<uint64_t> block_counts(const FunctionStructure& function, const ControlFlowCounts& flow,
                                   uint64_t delta) {
  std::vector<uint64_t> counts = block_executions(function, flow.edges, delta);
  for (size_t b = 0; b < function.blocks.size(); ++b) {
    const BasicBlock& block = function.blocks[b];
    bool found = false;
    uint64_t most = 0;
    for (auto it = flow.instructions.lower_bound(block.start + delta);
         it != flow.instructions.end() && it->first < block.end + delta; ++it) {
      found = true;
      most = std::max(most, it->second);
    }
    if (found) counts[b] = most;
  }
  return counts;
}

// The hot path of a loop: the blocks run in at least half as many times as
// its header; empty when the header has no count.
std::vector<uint32_t> hot_path(const FunctionStructure& function, const Loop& loop,
                               const std::vector<uint64_t>& counts) {
  const BasicBlock* header = function.block_at(loop.header);
  if (header == nullptr) return {};
  const uint64_t runs = counts[header - function.blocks.data()];
  if (runs == 0) return {};
  std::vector<uint32_t> hot;
  for (uint32_t b : loop.blocks)
    if (2 * counts[b] >= runs) hot.push_back(b);
  return hot;
}

// The iterations per entry of a nested loop: its header's executions over
// its enclosing loop header's (rounded; what bench/loops.sh counts with
// callgrind), 0 when not nested or not counted. `counts`: block_counts'.
uint32_t trip_count(const FunctionStructure& function, const Loop& loop,
                    const std::vector<uint64_t>& counts) {
  if (loop.parent < 0) return 0;
  const Loop& enclosing = function.loops[static_cast<size_t>(loop.parent)];
  const BasicBlock* header = function.block_at(loop.header);
  const BasicBlock* outer = function.block_at(enclosing.header);
  if (header == nullptr || outer == nullptr) return 0;
  const uint64_t runs = counts[header - function.blocks.data()];
  const uint64_t entries = counts[outer - function.blocks.data()];
  if (entries == 0 || runs < entries) return 0;
  const uint64_t trip = (runs + entries / 2) / entries;
  return static_cast<uint32_t>(std::min<uint64_t>(trip, uint64_t{1} << 24));
}

// One analyzer and one binary structure per file, opened once; the plain
// build's loops per function, analyzed once.
class LoopAnalyses {
 public:
  LoopAnalyses(std::string cpu, std::string plain)
      : cpu_(std::move(cpu)), plain_(std::move(plain)) {}

  // `flow`: the profile's control-flow counts (nullptr without), `delta`:
  // runtime pc - ELF address in the loop's module.
  void analyze(HotLoop& loop, const ControlFlowCounts* flow, uint64_t delta) {
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
      // The run's block executions: a nested loop runs the trip count they
      // say (LoopPerformance::with_trip_count: its entries overlap), a loop
      // with several paths is simulated on its hot path.
      const std::vector<uint64_t> counts =
          flow != nullptr ? block_counts(*function, *flow, delta) : std::vector<uint64_t>();
      const uint32_t trip = counts.empty() ? 0 : trip_count(*function, *binary_loop, counts);
      if (trip != 0) m.analyzer->set_trip_counts(0, {{binary_loop->header, trip}});
      loop.performance = m.analyzer->analyze_loop(*function, *binary_loop);
      if (loop.performance->several_paths && !counts.empty())
        simulate_hot_path(loop, m, *function, *binary_loop, counts);
      if (trip != 0) m.analyzer->set_trip_counts(0, {});
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

  // The symbolizer of the plain build's lines.
  Symbolizer& plain_symbolizer() {
    if (!symbolizer_) symbolizer_ = std::make_unique<Symbolizer>(ModuleMap());
    return *symbolizer_;
  }

  // The CPU model of the static analyses (every module's is the same one);
  // null before any module was analyzed.
  const CpuModel* cpu_model() const {
    for (const auto& [path, m] : modules_)
      if (m.analyzer) return &m.analyzer->cpu();
    return nullptr;
  }

  std::string cpu_name() const {
    if (const CpuModel* model = cpu_model()) return model->name;
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
    // The file reads: what fails now is the CPU (unknown to the linked LLVM), which
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

  // The loop simulated on its hot path, when the block counts leave some
  // of its blocks out.
  void simulate_hot_path(HotLoop& loop, Module& m, const FunctionStructure& function,
                         const Loop& binary_loop, const std::vector<uint64_t>& counts) {
    const std::vector<uint32_t> hot = hot_path(function, binary_loop, counts);
    if (hot.empty() || hot.size() == binary_loop.blocks.size()) return;
    Loop path = binary_loop;
    path.blocks = hot;
    LoopPerformance on_path = m.analyzer->analyze_loop(function, path);
    on_path.blocks = loop.performance->blocks;
    on_path.ranges = loop.performance->ranges;
    on_path.several_paths = true;
    loop.all_paths_cycles = loop.performance->cycles_per_iteration;
    loop.hot_path_blocks = static_cast<uint32_t>(hot.size());
    loop.performance = std::move(on_path);
  }

  std::string cpu_;
  std::string plain_;
  std::map<std::string, Module> modules_;
  std::unique_ptr<Symbolizer> symbolizer_;
};

}  // namespace

HotLoopFindings find_hot_loops(const Profile& profile, size_t top, const std::string& cpu,
                               const std::string& plain_binary,
                               const std::string& calibration_file) {
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
  const ControlFlowCounts flow{edge_totals(profile), instruction_executions(profile)};
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
      const uint64_t delta = busiest->first - at->vaddr;
      analyses.analyze(loop, &flow, delta);
    } else {
      loop.not_analyzed = "its code is in no file";
    }
    f.loops.push_back(std::move(loop));
  }
  // The strides the traces recorded, decoding only the traces of the hot
  // loops' instructions: those at their addresses in the profiled file, or
  // on their source lines (for a plain build): the region's, and those of
  // the analyzed loop's accesses (a loop inlined from another function has
  // its instructions on the callee's lines, its region at the call).
  std::vector<std::vector<LineRange>> lines(f.loops.size());
  for (size_t l = 0; l < f.loops.size(); ++l) {
    const HotLoop& loop = f.loops[l];
    if (!loop.performance) continue;
    lines[l] =
        memory_access_lines(*loop.performance, loop.analyzed_in, analyses.plain_symbolizer());
    lines[l].push_back({loop.region.file, loop.region.first_line, loop.region.last_line});
  }
  std::vector<std::pair<uint64_t, uint64_t>> spans(f.loops.size(), {1, 0});  // ELF addresses
  for (size_t l = 0; l < f.loops.size(); ++l)
    if (f.loops[l].performance && !f.loops[l].performance->instruction_addresses.empty()) {
      const auto [low, high] =
          std::minmax_element(f.loops[l].performance->instruction_addresses.begin(),
                              f.loops[l].performance->instruction_addresses.end());
      spans[l] = {*low, *high};
    }
  const TracedPcs traced = traced_pcs_if(profile, [&](uint64_t pc) {
    const std::optional<Profile::ModuleAddress> at = profile.module_address(pc);
    const std::optional<SourcePosition> line = profile.source_position(pc);
    for (size_t l = 0; l < f.loops.size(); ++l) {
      const HotLoop& loop = f.loops[l];
      if (!loop.performance) continue;
      if (at && at->path == loop.module && at->vaddr >= spans[l].first &&
          at->vaddr <= spans[l].second)
        return true;
      if (line && on_lines(lines[l], *line)) return true;
    }
    return false;
  });
  for (size_t l = 0; l < f.loops.size(); ++l)
    if (HotLoop& loop = f.loops[l]; loop.performance)
      loop.recorded_strides = join_recorded_accesses(*loop.performance, loop.analyzed_in, lines[l],
                                                     traced, profile, analyses.plain_symbolizer());
  f.cpu = analyses.cpu_name();
  if (const CpuModel* model = analyses.cpu_model()) f.cpu_caveats = model->caveats;
  // The L2 and RAM estimates of weft loops, with this machine's calibration.
  const LoopCalibration calibration = resolve_calibration(calibration_file);
  f.calibration_note = calibration.note;
  if (calibration.used)
    for (HotLoop& loop : f.loops)
      if (loop.performance && loop.performance->modeled)
        loop.performance->memory_levels = memory_level_estimates(*loop.performance, calibration);
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

namespace weft {

void attach_crd(HotLoopFindings& loops, const Profile& profile, const CacheModel& cache) {
  for (HotLoop& loop : loops.loops) {
    const LocalityMetrics metrics = compute_locality(profile, {loop.region.id}, cache);
    HotLoop::Crd crd;
    crd.events = metrics.crd.events;
    crd.median = metrics.median();
    crd.beyond_min = metrics.crd.fraction_beyond_min();
    crd.above_max = metrics.crd.fraction_above_max;
    loop.crd = crd;
  }
}

}  // namespace weft
