// The reuse analysis in a capture: the reuse-distance analyzer, its settings
// (granule, sampling budget), a state per thread, and its counts.
#include "analyzers/reuse/reuse_records.h"
#include "sources/capture/analysis_capture.h"

namespace weft {

namespace {

bool configure(CaptureConfig& config, const AnalysisSetting& setting, const char*,
               uint64_t number) {
  if (setting.key == "reuse_granule")
    config.reuse.granularity_log2 = static_cast<unsigned>(__builtin_ctzll(number));
  else
    config.reuse.sample_granules = number;
  return true;
}

bool create(CaptureAnalyzers& a, const CaptureConfig& config) {
  ReuseConfig reuse = config.reuse;
  reuse.max_threads = config.max_threads;
  a.reuse = make_reserved<ReuseDistanceAnalyzer>(reuse);
  return a.reuse != nullptr;
}

void attach(CaptureAnalyzers& a, ThreadContext& thread) {
  thread.reuse.store(a.reuse->attach(thread.tid));
}

void detach(ThreadContext& thread) { thread.reuse.store(nullptr); }

uint64_t dropped(const CaptureAnalyzers& a) { return a.reuse->dropped(); }

void values(const CaptureAnalyzers& a, ValueLines& out) {
  out.number("reuse_granule", uint64_t{1} << a.reuse->config().granularity_log2);
  out.number("reuse_sample_granules", a.reuse->config().sample_granules);
  out.number("reuse_sample_shift", a.reuse->max_sample_shift());
}

void write_sections(CaptureSession& session, RawWriter& out) {
  const ReuseDistanceAnalyzer* reuse = session.analyzers().reuse;
  write_records(out, kReuseBins, [&](auto&& emit) { reuse->for_each_count(emit); });
}

}  // namespace

// Freed memory keeps its owner and its place in the traces: a block handed
// out again is still the memory the caches may hold (docs/metrics.md,
// "Freed memory").
const AnalysisCapture reuse_capture = {
    configure, create, attach, detach, dropped, values, write_sections, nullptr,
};

}  // namespace weft
