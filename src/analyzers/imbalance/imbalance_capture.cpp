// The imbalance analysis in a capture: block and access counts per thread
// segment through the simulated caches. The session closes segments at
// synchronization records (CaptureSession::count_segments).
#include "analyzers/imbalance/imbalance_records.h"
#include "sources/capture/analysis_capture.h"

namespace weft {

namespace {

// cache_levels, imbalance_cache_sampling, imbalance_instance_sampling and
// imbalance_stretch_blocks;
// miss_penalties is weft record's
// alone (the runtime ignores it).
bool configure(CaptureConfig& config, const AnalysisSetting& setting, const char* value,
               uint64_t number) {
  if (setting.key == "cache_levels") return parse_cache_levels(value, config.imbalance.cache);
  if (setting.key == "imbalance_cache_sampling")
    config.imbalance.cache_sampling = static_cast<uint32_t>(number);
  if (setting.key == "imbalance_instance_sampling")
    config.imbalance.segment_sampling = static_cast<uint32_t>(number);
  if (setting.key == "imbalance_stretch_blocks") config.imbalance.stretch_blocks = number;
  return true;
}

bool create(CaptureAnalyzers& a, const CaptureConfig& config) {
  ImbalanceConfig imbalance = config.imbalance;
  imbalance.max_threads = config.max_threads;
  a.imbalance = make_reserved<ImbalanceCounts>(imbalance);
  return a.imbalance != nullptr;
}

void attach(CaptureAnalyzers& a, ThreadContext& thread) {
  ImbalanceCounts::ThreadState* state = a.imbalance->attach(thread.tid);
  thread.imbalance.store(state);
  thread.call_frames.store(state);
}

void detach(ThreadContext& thread) {
  thread.imbalance.store(nullptr);
  thread.call_frames.store(nullptr);
}

uint64_t dropped(const CaptureAnalyzers& a) { return a.imbalance->dropped(); }

void values(const CaptureAnalyzers& a, ValueLines& out) {
  char levels[128];
  format_cache_levels(a.imbalance->config().cache, levels, sizeof levels);
  out.text("cache_levels", levels);
  out.number("imbalance_cache_sampling", a.imbalance->cache_sampling());
  out.number("imbalance_repeated_segments", a.imbalance->repeated_segments());
  out.number("imbalance_instance_sampling", a.imbalance->config().segment_sampling);
  out.number("imbalance_unmeasured_segments", a.imbalance->unmeasured_segments());
  out.number("imbalance_stretched_segments", a.imbalance->stretched_segments());
  const ImbalanceConfig& config = a.imbalance->config();
  out.number("imbalance_stretch_blocks", config.segment_sampling > 1 ? config.stretch_blocks : 0);
}

void write_sections(CaptureSession& session, RawWriter& out) {
  ImbalanceCounts* imbalance = session.analyzers().imbalance;
  write_records(out, kSegmentEdges, [&](auto&& emit) { imbalance->for_each_edge(emit); });
  write_records(out, kSegmentInstructions,
                [&](auto&& emit) { imbalance->for_each_instruction(emit); });
  write_records(out, kSegmentRepeats, [&](auto&& emit) { imbalance->for_each_repeat(emit); });
  write_records(out, kSegmentMemoryWeights,
                [&](auto&& emit) { imbalance->for_each_memory_weight(emit); });
}

}  // namespace

const AnalysisCapture imbalance_capture = {
    configure, create, attach, detach, dropped, values, write_sections, nullptr,
};

}  // namespace weft
