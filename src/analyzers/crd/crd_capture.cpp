// The crd analysis in a capture: the reuse-distance analyzer and the sharing
// footprint, both fed by the communication analyzer (which attaches each
// reader's state: nothing per thread here).
#include "analyzers/crd/crd_records.h"
#include "sources/capture/analysis_capture.h"

namespace weft {

namespace {

bool configure(CaptureConfig& config, const AnalysisSetting& setting, const char*,
               uint64_t number) {
  if (setting.key == "crd_sample_granules")
    config.crd.sample_granules = number;
  else if (setting.key == "crd_instance_sampling")
    config.crd.segment_sampling = static_cast<uint32_t>(number);
  else if (setting.key == "crd_long_sample_granules")
    config.crd.long_sample_granules = number;
  else if (setting.key == "crd_stretch_events")
    config.crd.stretch_events = number;
  else
    config.crd.max_granules_per_pair = number;
  return true;
}

bool create(CaptureAnalyzers& a, const CaptureConfig& config) {
  CrdConfig crd = config.crd;
  crd.max_threads = config.max_threads;
  a.distances = make_reserved<CommunicationReuseDistance>(crd);
  a.footprint =
      make_reserved<SharingFootprint>(static_cast<unsigned>(__builtin_ctz(config.granularity)));
  if (a.distances && a.footprint) return true;
  a.distances = nullptr;
  a.footprint = nullptr;
  return false;
}

uint64_t dropped(const CaptureAnalyzers& a) { return a.distances->dropped(); }

void values(const CaptureAnalyzers& a, ValueLines& out) {
  out.number("crd_max_granules", a.distances->config().max_granules_per_pair);
  out.number("crd_sample_granules", a.distances->config().sample_granules);
  out.number("crd_capped_pairs", a.distances->capped_pairs());
  out.number("crd_sample_shift", a.distances->max_sample_shift());
  out.number("crd_instance_sampling", a.distances->config().segment_sampling);
  out.number("crd_skipped_segments", a.distances->skipped_segments());
  out.number("crd_long_sample_granules", a.distances->config().long_sample_granules);
  out.number("crd_long_sample_shift", a.distances->max_long_shift());
  out.number("crd_stretch_events", a.distances->config().stretch_events);
  out.number("crd_skipped_stretches", a.distances->skipped_stretches());
}

void write_sections(CaptureSession& session, RawWriter& out) {
  const CaptureAnalyzers& a = session.analyzers();
  write_records(out, kCrdDistances, [&](auto&& emit) {
    a.distances->for_each_distance([&](const CommunicationReuseDistance::Record& r) {
      emit(PcDistanceCount{r.pc, r.reader, r.writer, r.distance, r.count});
    });
  });
  write_records(out, kCrdReuseSets, [&](auto&& emit) { a.distances->for_each_reuse_set(emit); });
  // One walk of the shadow; write_records reads the totals twice.
  PagedHashTable<SharingFootprint::Totals> totals;
  a.footprint->collect(totals);
  write_records(out, kCrdFootprints, [&](auto&& emit) {
    totals.for_each([&](const SharingFootprint::Totals& t) {
      const SharingFootprint::Record r = t.record();
      emit(PcFootprint{r.pc, r.thread, 0, r.private_granules, r.shared_granules});
    });
  });
}

// The reuse distances stay: a freed line reused is still the line the cache
// may hold (docs/metrics.md, "Freed memory").
void release(CaptureAnalyzers& a, uint64_t begin, uint64_t end) {
  a.footprint->release(begin, end);
}

}  // namespace

const AnalysisCapture crd_capture = {
    configure, create, nullptr, nullptr, dropped, values, write_sections, release,
};

}  // namespace weft
