// The analyses weft can run, declared once: each one's name (for
// `--analyses`, the runtime's WEFT_ANALYSES and the profile's meta
// `analyses`), what it needs, its settings (a `weft record` option, the
// environment variable the in-program runtime reads it from, the profile
// meta key that keeps it), the counters it reports and the profile tables it
// writes. The command line, both event sources, the raw capture and the
// profile iterate this list; docs/architecture.md ("Adding an analysis")
// says what else a new analysis touches.
//
// Header-only and allocation-free: the in-program runtime uses it too.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string_view>

namespace weft {

// The analyses, in AnalysisId order, each as X(Id, symbol): `symbol` names
// its per-layer parts, defined in its own folder (src/analyzers/*/):
// `symbol_capture` (sources/capture/analysis_capture.h) and `symbol_tables`
// (profile/analysis_tables.h). Adding an analysis adds one line here and one
// descriptor to kAnalyses below.
#define WEFT_ANALYSIS_LIST(X)     \
  X(Communication, communication) \
  X(Crd, crd)                     \
  X(Imbalance, imbalance)         \
  X(FalseSharing, false_sharing)  \
  X(Traces, traces)               \
  X(PageUsage, page_usage)        \
  X(Reuse, reuse)

#define WEFT_ANALYSIS_ID(Id, symbol) Id,
enum class AnalysisId : uint8_t { WEFT_ANALYSIS_LIST(WEFT_ANALYSIS_ID) };
#undef WEFT_ANALYSIS_ID
#define WEFT_ANALYSIS_ONE(Id, symbol) +1
inline constexpr size_t kAnalysisCount = 0 WEFT_ANALYSIS_LIST(WEFT_ANALYSIS_ONE);
#undef WEFT_ANALYSIS_ONE

// How a setting's value is written (in the runtime's form: what the
// environment variable, the raw capture and the profile meta hold).
enum class SettingType : uint8_t {
  Unsigned,    // a whole number in [min, max]
  PowerOfTwo,  // a power of two in [min, max]
  ByteSize,    // a number of bytes, at least min (the option also takes 64K, 32M, 1G)
  Text,        // checked by the code that reads it (cache levels, miss penalties)
};

struct AnalysisSetting {
  std::string_view key;     // meta key, and RunCapture::analysis_values key
  std::string_view option;  // `weft record` option
  std::string_view env;     // the runtime's variable; empty: only `weft record` needs it
  std::string_view help;
  // As the option takes it (a size may have a unit); empty: weft record
  // computes it (the machine's caches).
  std::string_view default_value;
  SettingType type = SettingType::Unsigned;
  uint64_t min = 0;
  uint64_t max = UINT64_MAX;
  // The value `weft record --exact` gives a setting that trades exactness
  // for cost (a sampling rate); empty: --exact leaves it alone.
  std::string_view exact_value = {};
};

struct AnalysisDescriptor {
  AnalysisId id = AnalysisId::Communication;
  std::string_view name;
  std::string_view summary;
  std::span<const AnalysisId> requires_analyses;
  std::span<const AnalysisSetting> settings;
  // Meta keys of the counts the analysis reports about itself (pairs
  // capped, accesses not analyzed): written by the capture, kept in meta.
  std::span<const std::string_view> counters;
  // The profile tables it writes (all of them exist in every profile; they
  // are empty when the analysis did not run).
  std::span<const std::string_view> tables;
  // Whether `weft record` runs it without --analyses. The pages analysis
  // does not: it sends every access out of the inline fast path and matters
  // only on machines with several NUMA nodes (docs/commands.md).
  bool in_default = true;
};

// Sampled section instances (docs/metrics.md): an analysis sampling 1 in N
// does so over a loop's first kBaseRateBlocks * N executions; past them
// its blocks double each time the executions do. Shared by the capture
// (SampledSegments), the views' sampling notes and the settings' help
// ("128N-th" below).
inline constexpr uint64_t kBaseRateBlocks = 128;

// Stretches of long instances (docs/metrics.md): a thread's analyzed
// instance is analyzed whole for this many cycles of --crd-stretch-events
// communication reads before the CRD samples it in time. Shared by the CRD
// (CommunicationReuseDistance::kWholeCycles), its note and the help.
inline constexpr uint64_t kCrdWholeStretchCycles = 16;
// ... and past them counts 1 stretch of the cycle's 1/kCrdStretchRate in
// each cycle, each event standing for kCrdStretchRate.
inline constexpr uint32_t kCrdStretchRate = 8;
// The imbalance analysis' memory counts likewise, on the thread's basic
// blocks: whole for this many cycles of 2^18 blocks, then 1 eighth of each
// cycle counted 8 times (ImbalanceCounts::kWholeCycles, kStretchRate; the
// sampling note).
inline constexpr uint64_t kImbalanceWholeStretchCycles = 64;
inline constexpr uint32_t kImbalanceStretchRate = 8;

namespace analysis_catalog {

inline constexpr AnalysisId kNeedsCommunication[] = {AnalysisId::Communication};

inline constexpr AnalysisSetting kCrdSettings[] = {
    {"crd_max_granules", "--crd-max-granules", "WEFT_CRD_MAX_GRANULES",
     "distinct granules per thread pair whose CRD is measured (0: no cap)", "1048576",
     SettingType::Unsigned, 0, UINT64_MAX - 1},
    {"crd_sample_granules", "--crd-sample-granules", "WEFT_CRD_SAMPLE_GRANULES",
     "granules each reading thread traces before its CRD sampling rate halves "
     "(0: every granule, exact; --exact)",
     "16384", SettingType::Unsigned, 0, UINT64_MAX - 1, "0"},
    {"crd_instance_sampling", "--crd-instance-sampling", "WEFT_CRD_INSTANCE_SAMPLING",
     "in a long run, measure the CRD in 1 in N section instances (time steps; fewer past a "
     "loop's 128N-th), each event counting the instances it stands for (1: every instance; "
     "--exact; docs/metrics.md)",
     "8", SettingType::Unsigned, 1, 1024, "1"},
    {"crd_long_sample_granules", "--crd-long-sample-granules", "WEFT_CRD_LONG_SAMPLE_GRANULES",
     "with instance sampling: granules each reading thread's long-reuse sample traces in every "
     "instance before its rate halves (0: every granule; docs/metrics.md, \"Long reuses\")",
     "4096", SettingType::Unsigned, 0, UINT64_MAX - 1},
    {"crd_stretch_events", "--crd-stretch-events", "WEFT_CRD_STRETCH_EVENTS",
     "with instance sampling: past 64 times this many communication reads of one thread in one "
     "section instance, measure the CRD in 1 stretch of this many in 8, after a warm-up (0: every "
     "analyzed instance whole; --exact; docs/metrics.md, \"Stretches of long instances\")",
     "65536", SettingType::Unsigned, 0, uint64_t{1} << 40, "0"},
};
inline constexpr std::string_view kCrdCounters[] = {"crd_capped_pairs", "crd_sample_shift",
                                                    "crd_skipped_segments", "crd_long_sample_shift",
                                                    "crd_skipped_stretches"};
inline constexpr std::string_view kCommunicationTables[] = {"matrix_entries", "pc_communication"};
inline constexpr std::string_view kCrdTables[] = {"crd_distances", "crd_word_distances",
                                                  "crd_unmeasured", "region_footprints"};

inline constexpr AnalysisSetting kImbalanceSettings[] = {
    {"cache_levels", "--cache", "WEFT_CACHE_LEVELS",
     "simulated caches of the imbalance analysis, L1SIZE:WAYS,L2SIZE:WAYS,LLCSIZE:WAYS "
     "(default: this machine's credible caches, docs/metrics.md)",
     "", SettingType::Text},
    {"miss_penalties", "--miss-penalties", "",
     "cycles per L1, L2 and LLC miss in the modeled busy time", "12,40,200", SettingType::Text},
    {"imbalance_cache_sampling", "--imbalance-sampling", "WEFT_IMBALANCE_CACHE_SAMPLING",
     "simulate 1 in N sets of each cache of the imbalance analysis, each miss counting N "
     "(1: every set, the exact model; --exact; docs/metrics.md)",
     "8", SettingType::PowerOfTwo, 1, 64, "1"},
    {"imbalance_instance_sampling", "--imbalance-instance-sampling",
     "WEFT_IMBALANCE_INSTANCE_SAMPLING",
     "in a long run, count the memory instructions (executions, misses) of 1 in N section "
     "instances (fewer past a loop's 128N-th), control flow in all (1: every instance; --exact; "
     "docs/metrics.md)",
     "8", SettingType::Unsigned, 1, 1024, "1"},
    {"imbalance_stretch_blocks", "--imbalance-stretch-blocks", "WEFT_IMBALANCE_STRETCH_BLOCKS",
     "with instance sampling: past 64 times this many basic blocks of one thread in one section "
     "instance, count its memory instructions in one eighth of each cycle of this many blocks, "
     "after a warm-up of the caches (0: every instance whole; --exact; docs/metrics.md, "
     "\"Stretches of long instances\")",
     "262144", SettingType::Unsigned, 0, uint64_t{1} << 40, "0"},
};
inline constexpr std::string_view kImbalanceCounters[] = {
    "imbalance_repeated_segments", "imbalance_unmeasured_segments", "imbalance_stretched_segments"};
inline constexpr std::string_view kImbalanceTables[] = {
    "section_instances", "section_instance_threads", "instance_edges", "instance_instructions",
    "control_flow_blocks"};

inline constexpr AnalysisSetting kFalseSharingSettings[] = {
    {"line_size", "--line-size", "WEFT_LINE_SIZE",
     "cache line of the false-sharing analysis, bytes (power of two, 8..4096)", "64",
     SettingType::PowerOfTwo, 8, 4096},
    {"falseshare_sampling", "--falseshare-sampling", "WEFT_FALSESHARE_SAMPLING",
     "in a long run, analyze 1 in N section instances (time steps; fewer past a loop's "
     "128N-th), each event counting the instances it stands for (1: every instance; --exact; "
     "docs/metrics.md)",
     "8", SettingType::Unsigned, 1, 1024, "1"},
};
inline constexpr std::string_view kFalseSharingCounters[] = {"untracked_accesses",
                                                             "falseshare_skipped_segments"};
inline constexpr std::string_view kFalseSharingTables[] = {"line_sharing", "sharing_totals",
                                                           "data_objects"};

inline constexpr AnalysisSetting kTracesSettings[] = {
    {"trace_budget", "--trace-budget", "WEFT_TRACE_BYTES_PER_THREAD",
     "memory per thread for compressed traces (e.g. 64M); beyond it the traces keep their "
     "beginning and count the rest as lost",
     "8M", SettingType::ByteSize, 4096},
    {"trace_sampling", "--trace-sampling", "WEFT_TRACE_SAMPLING",
     "in a long run, trace 1 in N section instances (time steps; fewer past a loop's 128N-th), "
     "each whole, the same ones in every thread (1: every instance; --exact; docs/metrics.md)",
     "8", SettingType::Unsigned, 1, 1024, "1"},
};
inline constexpr std::string_view kTracesCounters[] = {"trace_skipped_segments"};
inline constexpr std::string_view kTracesTables[] = {"memory_traces"};

inline constexpr AnalysisSetting kReuseSettings[] = {
    {"reuse_granule", "--reuse-granule", "WEFT_REUSE_GRANULE",
     "bytes per granule of the reuse distances (a power of two)", "64", SettingType::PowerOfTwo, 4,
     4096},
    {"reuse_sample_granules", "--reuse-sample-granules", "WEFT_REUSE_SAMPLE_GRANULES",
     "distinct granules each thread traces before its reuse-distance sampling rate halves "
     "(0: every granule, exact; --exact)",
     "65536", SettingType::Unsigned, 0, UINT64_MAX - 1, "0"},
};
inline constexpr std::string_view kReuseCounters[] = {"reuse_sample_shift"};
inline constexpr std::string_view kReuseTables[] = {"reuse_histograms"};

inline constexpr std::string_view kPageUsageTables[] = {"page_first_writes", "page_accesses",
                                                        "page_objects"};

}  // namespace analysis_catalog

// The list, in AnalysisId order.
inline constexpr std::array<AnalysisDescriptor, kAnalysisCount> kAnalyses = {{
    {AnalysisId::Communication,
     "comm",
     "true communication (raw), communication reuse (rar) and invalidations per thread pair",
     {},
     {},
     {},
     analysis_catalog::kCommunicationTables},
    {AnalysisId::Crd, "crd", "communication reuse distance and the sharing footprint",
     analysis_catalog::kNeedsCommunication, analysis_catalog::kCrdSettings,
     analysis_catalog::kCrdCounters, analysis_catalog::kCrdTables},
    {AnalysisId::Imbalance,
     "imbalance",
     "control-flow edges and simulated cache misses per thread and parallel section",
     {},
     analysis_catalog::kImbalanceSettings,
     analysis_catalog::kImbalanceCounters,
     analysis_catalog::kImbalanceTables},
    {AnalysisId::FalseSharing,
     "falseshare",
     "cache lines threads share falsely, with their data objects and heap allocation sites",
     {},
     analysis_catalog::kFalseSharingSettings,
     analysis_catalog::kFalseSharingCounters,
     analysis_catalog::kFalseSharingTables},
    {AnalysisId::Traces,
     "traces",
     "compressed per-thread, per-instruction memory traces",
     {},
     analysis_catalog::kTracesSettings,
     analysis_catalog::kTracesCounters,
     analysis_catalog::kTracesTables},
    {AnalysisId::PageUsage,
     "pages",
     "per memory page its first writer and each thread's accesses, for data placement",
     {},
     {},
     {},
     analysis_catalog::kPageUsageTables,
     false},
    {AnalysisId::Reuse,
     "reuse",
     "per instruction and thread, the histogram of reuse distances, local and remote",
     {},
     analysis_catalog::kReuseSettings,
     analysis_catalog::kReuseCounters,
     analysis_catalog::kReuseTables,
     false},
}};

static_assert(
    [] {
      for (size_t i = 0; i < kAnalysisCount; ++i)
        if (static_cast<size_t>(kAnalyses[i].id) != i) return false;
      return true;
    }(),
    "kAnalyses must list the analyses in AnalysisId order");

constexpr const AnalysisDescriptor& descriptor(AnalysisId id) {
  return kAnalyses[static_cast<size_t>(id)];
}

// Null for an unknown name.
constexpr const AnalysisDescriptor* find_analysis(std::string_view name) {
  for (const AnalysisDescriptor& d : kAnalyses)
    if (d.name == name) return &d;
  return nullptr;
}

// The analysis that has the setting with meta key `key`, null when none.
constexpr const AnalysisDescriptor* setting_owner(std::string_view key) {
  for (const AnalysisDescriptor& d : kAnalyses)
    for (const AnalysisSetting& s : d.settings)
      if (s.key == key) return &d;
  return nullptr;
}

// The setting with meta key `key`, null when no analysis has it.
constexpr const AnalysisSetting* find_setting(std::string_view key) {
  for (const AnalysisDescriptor& d : kAnalyses)
    for (const AnalysisSetting& s : d.settings)
      if (s.key == key) return &s;
  return nullptr;
}

// The number a Unsigned, PowerOfTwo or ByteSize setting holds in its runtime
// form (decimal digits), checked against the setting's type and range; false
// when malformed, out of range or too large for 64 bits.
constexpr bool parse_setting_number(const AnalysisSetting& setting, std::string_view text,
                                    uint64_t& out) {
  if (text.empty() || setting.type == SettingType::Text) return false;
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (value > (UINT64_MAX - digit) / 10) return false;
    value = value * 10 + digit;
  }
  if (value < setting.min || value > setting.max) return false;
  if (setting.type == SettingType::PowerOfTwo && (value & (value - 1)) != 0) return false;
  out = value;
  return true;
}

// A set of analyses (a bit per AnalysisId).
class AnalysisSet {
 public:
  constexpr AnalysisSet() = default;
  constexpr AnalysisSet(std::initializer_list<AnalysisId> ids) {
    for (AnalysisId id : ids) add(id);
  }
  static constexpr AnalysisSet all() {
    AnalysisSet s;
    for (const AnalysisDescriptor& d : kAnalyses) s.add(d.id);
    return s;
  }
  // What runs when nothing is asked (AnalysisDescriptor::in_default).
  static constexpr AnalysisSet defaults() {
    AnalysisSet s;
    for (const AnalysisDescriptor& d : kAnalyses)
      if (d.in_default) s.add(d.id);
    return s;
  }
  static constexpr AnalysisSet from_bits(uint32_t bits) {
    AnalysisSet s;
    s.bits_ = bits & all().bits_;
    return s;
  }

  constexpr bool has(AnalysisId id) const { return (bits_ >> static_cast<unsigned>(id)) & 1u; }
  constexpr void add(AnalysisId id) { bits_ |= 1u << static_cast<unsigned>(id); }
  constexpr void remove(AnalysisId id) { bits_ &= ~(1u << static_cast<unsigned>(id)); }
  constexpr uint32_t bits() const { return bits_; }
  constexpr bool operator==(const AnalysisSet&) const = default;

  // Adds what the members need (crd needs comm), and comm, which every run has.
  constexpr AnalysisSet with_requirements() const {
    AnalysisSet s = *this;
    s.add(AnalysisId::Communication);
    for (const AnalysisDescriptor& d : kAnalyses)
      if (has(d.id))
        for (AnalysisId needed : d.requires_analyses) s.add(needed);
    return s;
  }

  // Calls visit(descriptor) for each member, in AnalysisId order.
  template <class Visit>
  constexpr void for_each(Visit&& visit) const {
    for (const AnalysisDescriptor& d : kAnalyses)
      if (has(d.id)) visit(d);
  }

  // "comm,crd,falseshare": the members' names in AnalysisId order, the form
  // of --analyses, WEFT_ANALYSES and meta analyses. Writes at most `size`
  // bytes with the terminating NUL; returns the length it needed.
  size_t format(char* out, size_t size) const {
    size_t n = 0;
    for_each([&](const AnalysisDescriptor& d) {
      if (n != 0) put(out, size, n, ",");
      put(out, size, n, d.name);
    });
    if (size != 0) out[n < size ? n : size - 1] = '\0';
    return n;
  }

  // Parses a comma-separated list of names: false (and `unknown` set to the
  // first bad item) for an unknown or empty item.
  static bool parse(std::string_view list, AnalysisSet& out, std::string_view* unknown = nullptr) {
    AnalysisSet s;
    for (size_t start = 0;;) {
      const size_t comma = list.find(',', start);
      const std::string_view item = list.substr(
          start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
      const AnalysisDescriptor* d = find_analysis(item);
      if (!d) {
        if (unknown) *unknown = item;
        return false;
      }
      s.add(d->id);
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    out = s;
    return true;
  }

 private:
  static void put(char* out, size_t size, size_t& n, std::string_view text) {
    for (char c : text) {
      if (n + 1 < size) out[n] = c;
      ++n;
    }
  }
  uint32_t bits_ = 0;
};

}  // namespace weft
