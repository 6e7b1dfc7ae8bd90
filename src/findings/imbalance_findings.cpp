#include "findings/imbalance_findings.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "analyzers/imbalance/imbalance_tables.h"
#include "common/run_capture.h"
#include "diagnosis/imbalance_diagnosis.h"
#include "findings/finding_error.h"
#include "findings/profile_facts.h"
#include "findings/source_lines.h"

namespace weft {

namespace {

double busy_of(const InstanceThreadBusy& t, BusyMeasure measure) {
  switch (measure) {
    case BusyMeasure::Instructions:
      return static_cast<double>(t.instructions);
    case BusyMeasure::Wall:
      return static_cast<double>(t.wall_ns);
    case BusyMeasure::ModeledCycles:
      break;
  }
  return t.modeled_cycles;
}

double spread(const std::vector<double>& values) {
  if (values.empty()) return 0;
  double mean = 0;
  for (double v : values) mean += v;
  mean /= static_cast<double>(values.size());
  double sum = 0;
  for (double v : values) sum += (v - mean) * (v - mean);
  return std::sqrt(sum / static_cast<double>(values.size()));
}

// The cycles meta.miss_penalties charges per L1, L2, LLC miss.
std::array<double, 3> miss_penalties(const Profile& profile) {
  return parse_miss_penalties(profile.meta_value("miss_penalties")).value_or(kDefaultMissPenalties);
}

// A cache-miss event whose spread over threads, in penalty cycles, is below
// this share of the spread of the threads' modeled cycles cannot account for
// a visible part of the imbalance; it is left out of the diagnosis
// (docs/metrics.md).
constexpr double kMinMissShare = 0.01;

// The counts of one instance in the diagnosis' layout (threads in the order
// of instance.threads).
SectionInstanceData instance_data(const Profile& profile, const SectionInstanceInfo& instance,
                                  BusyMeasure measure, const std::array<double, 3>& penalties) {
  SectionInstanceData data;
  data.threads = instance.threads.size();
  std::map<uint32_t, size_t> position;
  for (const InstanceThreadBusy& t : instance.threads) {
    position[t.thread] = data.time.size();
    data.time.push_back(busy_of(t, measure));
  }
  std::map<std::pair<uint64_t, uint64_t>, size_t> edge_index;
  for (const InstanceEdgeCount& e : instance_edges(profile, instance.id)) {
    auto at = position.find(e.thread);
    if (at == position.end()) continue;
    auto [it, fresh] = edge_index.try_emplace({e.from, e.to}, data.edges.size());
    if (fresh) data.edges.push_back({e.from, e.to, std::vector<double>(data.threads, 0.0)});
    data.edges[it->second].counts[at->second] += static_cast<double>(e.count);
  }
  std::map<uint64_t, size_t> instruction_index;
  for (const InstanceInstructionCount& r : instance_instructions(profile, instance.id)) {
    auto at = position.find(r.thread);
    if (at == position.end()) continue;
    auto [it, fresh] = instruction_index.try_emplace(r.pc, data.instructions.size());
    if (fresh) {
      InstructionEvents events;
      events.pc = r.pc;
      for (auto& counts : events.counts) counts.assign(data.threads, 0.0);
      data.instructions.push_back(std::move(events));
    }
    InstructionEvents& events = data.instructions[it->second];
    events.counts[0][at->second] += static_cast<double>(r.executions);
    events.counts[1][at->second] += static_cast<double>(r.l1_misses);
    events.counts[2][at->second] += static_cast<double>(r.l2_misses);
    events.counts[3][at->second] += static_cast<double>(r.llc_misses);
  }
  std::vector<double> cycles;
  for (const InstanceThreadBusy& t : instance.threads) cycles.push_back(t.modeled_cycles);
  const double visible = kMinMissShare * spread(cycles);
  for (InstructionEvents& events : data.instructions)
    for (size_t level = 1; level < 4; ++level)
      if (spread(events.counts[level]) * penalties[level - 1] < visible)
        events.counts[level].assign(data.threads, 0.0);
  return data;
}

const char* level_name(HardwareLevel level) {
  switch (level) {
    case HardwareLevel::L1Miss:
      return "L1";
    case HardwareLevel::L2Miss:
      return "L2";
    case HardwareLevel::LlcMiss:
      return "LLC";
    case HardwareLevel::Executions:
      break;
  }
  return "";
}

bool section_matches(const RegionInfo& region, const std::string& wanted) {
  if (region.name == wanted || region.name == "section@" + wanted) return true;
  // FILE:LINE with a path: compare the basename form the name uses.
  const size_t slash = wanted.rfind('/');
  return slash != std::string::npos && region.name == "section@" + wanted.substr(slash + 1);
}

// What the analysis of every section shares.
struct ImbalanceContext {
  const Profile& profile;
  const ImbalanceOptions& options;
  DiagnosisOptions diagnosis;
  std::map<uint64_t, uint64_t> decisions;  // Profile::block_decisions()
  std::array<double, 3> penalties;         // miss_penalties()
  SourceLines sources;
};

// Fills the section's threads, busy times, lost time and mean imbalance;
// returns each instance with its imbalance.
std::vector<std::pair<double, const SectionInstanceInfo*>> measure_busy_times(
    SectionImbalance& section, const std::vector<SectionInstanceInfo>& instances,
    BusyMeasure measure) {
  std::set<uint32_t> thread_ids;
  for (const SectionInstanceInfo& instance : instances)
    for (const InstanceThreadBusy& t : instance.threads) thread_ids.insert(t.thread);
  section.threads.assign(thread_ids.begin(), thread_ids.end());
  section.busy.assign(section.threads.size(), 0.0);
  std::vector<std::pair<double, const SectionInstanceInfo*>> weighted;
  double imbalance_sum = 0;
  for (const SectionInstanceInfo& instance : instances) {
    std::vector<double> busy;
    for (const InstanceThreadBusy& t : instance.threads) {
      busy.push_back(busy_of(t, measure));
      const size_t at = static_cast<size_t>(
          std::lower_bound(section.threads.begin(), section.threads.end(), t.thread) -
          section.threads.begin());
      section.busy[at] += busy.back();
    }
    const double imbalance = idle_fraction(busy);
    const double longest = *std::max_element(busy.begin(), busy.end());
    for (double b : busy) section.lost += longest - b;
    section.largest_team = std::max(section.largest_team, busy.size());
    imbalance_sum += imbalance;
    weighted.emplace_back(imbalance, &instance);
  }
  section.imbalance = imbalance_sum / static_cast<double>(instances.size());
  double busy_total = 0;
  for (double b : section.busy) busy_total += b;
  if (section.lost + busy_total > 0)
    section.idle_share = section.lost / (section.lost + busy_total);
  return weighted;
}

// The diagnoses of the most imbalanced instances (they carry the
// aggregation's weight), each with its imbalance; counts them in
// section.analyzed_instances. Only instances whose memory instructions were
// counted are diagnosed (an unmeasured one has no per-instruction events),
// each weighted by the instances it stands for, so that the ones measured
// because they came first do not outweigh the sample (sampled section
// instances, docs/metrics.md).
std::vector<std::pair<double, InstanceDiagnosis>> diagnose_instances(
    ImbalanceContext& context, SectionImbalance& section,
    std::vector<std::pair<double, const SectionInstanceInfo*>> weighted) {
  std::erase_if(weighted, [](const auto& w) { return !w.second->measured(); });
  section.measured_instances = weighted.size();
  std::stable_sort(weighted.begin(), weighted.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  if (weighted.size() > context.options.max_instances)
    weighted.resize(context.options.max_instances);
  std::vector<std::pair<double, InstanceDiagnosis>> diagnoses;
  for (const auto& [imbalance, instance] : weighted) {
    if (imbalance <= 0) continue;
    InstanceDiagnosis d = diagnose_instance(
        instance_data(context.profile, *instance, context.options.measure, context.penalties),
        context.diagnosis);
    if (!d.analyzable) continue;
    ++section.analyzed_instances;
    diagnoses.emplace_back(imbalance * instance->memory_weight, std::move(d));
  }
  return diagnoses;
}

// A cause at its instruction: a control-flow cause at its block's decision.
ImbalanceCauseLine cause_line(ImbalanceContext& context, const Cause& cause) {
  ImbalanceCauseLine line;
  line.score = cause.score;
  if (cause.kind == CauseKind::ControlFlow) {
    line.kind = "control-flow";
    auto decision = context.decisions.find(cause.pc);
    line.pc = decision != context.decisions.end() ? decision->second : cause.pc;
  } else {
    line.kind = "cache-miss";
    line.pc = cause.pc;
    line.level = level_name(cause.level);
  }
  line.position = context.profile.source_position(line.pc).value_or(SourcePosition{});
  if (!line.position.file.empty())
    line.code = context.sources.line(line.position.file, line.position.line);
  return line;
}

// Causes at one source line are one finding, scored by the sum of its
// instructions' scores (unrolled copies of a load, the blocks of one
// condition). A cause without a source line (the section's entry as leader,
// code without line information) is nobody's to act on: it is counted in
// `section.unlocated_causes`, not ranked. By score, descending.
std::vector<ImbalanceCauseLine> causes_by_line(ImbalanceContext& context,
                                               const std::vector<Cause>& causes,
                                               SectionImbalance& section) {
  using LineKey = std::tuple<std::string, std::string, uint32_t, std::string>;
  std::map<LineKey, ImbalanceCauseLine> lines;
  std::map<LineKey, std::map<uint64_t, double>> score_per_pc;
  for (const Cause& cause : causes) {
    const ImbalanceCauseLine line = cause_line(context, cause);
    if (line.position.file.empty() || line.position.line == 0) {
      ++section.unlocated_causes;
      continue;
    }
    const LineKey key{line.kind, line.position.file, line.position.line,
                      line.position.file.empty() ? fmt::format("{:x}", line.pc) : std::string()};
    score_per_pc[key][line.pc] += line.score;
    // The line is shown with its strongest instruction's pc and level.
    auto [it, fresh] = lines.try_emplace(key, line);
    if (!fresh && line.score > it->second.score) it->second = line;
  }
  for (auto& [key, line] : lines) {
    line.score = 0;
    for (const auto& [pc, score] : score_per_pc[key]) line.score += score;
  }
  std::vector<ImbalanceCauseLine> out;
  for (auto& [key, line] : lines) out.push_back(std::move(line));
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.score > b.score; });
  return out;
}

SectionImbalance analyze_section(ImbalanceContext& context, const RegionInfo& region,
                                 const std::vector<SectionInstanceInfo>& instances) {
  SectionImbalance section;
  section.region = region;
  section.instances = instances.size();
  const std::vector<std::pair<double, InstanceDiagnosis>> diagnoses = diagnose_instances(
      context, section, measure_busy_times(section, instances, context.options.measure));
  section.causes = causes_by_line(context, combine_instances(diagnoses), section);
  return section;
}

}  // namespace

std::string section_location(const RegionInfo& region) {
  const std::string prefix = "section@";
  return region.name.rfind(prefix, 0) == 0 ? region.name.substr(prefix.size()) : region.name;
}

std::string cause_location(const ImbalanceCauseLine& cause) {
  return code_location(cause.position, cause.pc);
}

const char* busy_measure_name(BusyMeasure measure) {
  switch (measure) {
    case BusyMeasure::Instructions:
      return "instructions";
    case BusyMeasure::Wall:
      return "wall";
    case BusyMeasure::ModeledCycles:
      break;
  }
  return "cycles";
}

std::vector<SectionImbalance> analyze_imbalance(const Profile& profile,
                                                const ImbalanceOptions& options) {
  refuse_lost_data(profile, "imbalance");
  if (!profile.has_analysis(AnalysisId::Imbalance))
    throw FindingError(profile.path() +
                       " has no imbalance data: record with --analyses including imbalance");
  std::map<int64_t, std::vector<SectionInstanceInfo>> by_region;
  for (SectionInstanceInfo& instance : section_instances(profile))
    by_region[instance.region_id].push_back(std::move(instance));

  ImbalanceContext context{profile, options, {}, block_decisions(profile), miss_penalties(profile),
                           {}};
  context.diagnosis.cluster_threshold = options.cluster_threshold;
  std::vector<SectionImbalance> sections;
  for (const auto& [region_id, instances] : by_region) {
    const std::optional<RegionInfo> found = profile.region_by_id(region_id);
    if (!found)
      throw FindingError(
          fmt::format("{} is a damaged weft profile: section_instances names region {}, which is "
                      "not in regions",
                      profile.path(), region_id));
    const RegionInfo& region = *found;
    if (options.section && !section_matches(region, *options.section)) continue;
    sections.push_back(analyze_section(context, region, instances));
  }
  if (options.section && sections.empty())
    throw FindingError(fmt::format("unknown section '{}' (see `weft imbalance {}` for the list)",
                                   *options.section, profile.path()));
  std::stable_sort(sections.begin(), sections.end(),
                   [](const auto& a, const auto& b) { return a.lost > b.lost; });
  return sections;
}

ImbalanceFindings find_imbalance(const Profile& profile, const ImbalanceOptions& options) {
  ImbalanceFindings findings;
  findings.profile = profile_facts(profile);
  findings.measure = options.measure;
  findings.sections = analyze_imbalance(profile, options);
  return findings;
}

}  // namespace weft
