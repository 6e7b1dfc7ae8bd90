// The false-sharing analysis in a capture: the line detector (false sharing
// and unsynchronised writes), and the heap blocks each thread allocated
// (CaptureSession::record_allocation), saved to name the data object behind a falsely shared line.
#include "analyzers/false_sharing/false_sharing_records.h"
#include "sources/capture/analysis_capture.h"

namespace weft {

namespace {

bool configure(CaptureConfig& config, const AnalysisSetting& setting, const char*,
               uint64_t number) {
  if (setting.key == "falseshare_sampling")
    config.false_sharing.segment_sampling = static_cast<uint32_t>(number);
  else
    config.false_sharing.line_size = static_cast<unsigned>(number);  // line_size
  return true;
}

bool create(CaptureAnalyzers& a, const CaptureConfig& config) {
  FalseSharingConfig false_sharing = config.false_sharing;
  false_sharing.max_threads = config.max_threads;
  a.false_sharing = make_reserved<FalseSharingDetector>(false_sharing);
  return a.false_sharing != nullptr;
}

void attach(CaptureAnalyzers& a, ThreadContext& thread) {
  thread.false_sharing.store(a.false_sharing->attach(thread.tid));
}

void detach(ThreadContext& thread) { thread.false_sharing.store(nullptr); }

uint64_t dropped(const CaptureAnalyzers& a) { return a.false_sharing->dropped(); }

void values(const CaptureAnalyzers& a, ValueLines& out) {
  out.number("line_size", a.false_sharing->config().line_size);
  out.number("falseshare_sampling", a.false_sharing->config().segment_sampling);
  out.number("falseshare_skipped_segments", a.false_sharing->skipped_segments());
  out.number("untracked_accesses", a.false_sharing->untracked_accesses());
}

void write_sections(CaptureSession& session, RawWriter& out) {
  FalseSharingDetector* detector = session.analyzers().false_sharing;
  write_records(out, kLineSharing, [&](auto&& emit) { detector->for_each_line_record(emit); });
  write_records(out, kUnsyncWrites, [&](auto&& emit) { detector->for_each_unsync_record(emit); });
  write_records(out, kSharingTotals, [&](auto&& emit) { detector->for_each_pair_total(emit); });
  write_records(out, kAllocations, [&](auto&& emit) { session.for_each_allocation(emit); });
}

void release(CaptureAnalyzers& a, uint64_t begin, uint64_t end) {
  a.false_sharing->forget(begin, end);
}

}  // namespace

const AnalysisCapture false_sharing_capture = {
    configure, create, attach, detach, dropped, values, write_sections, release,
};

}  // namespace weft
