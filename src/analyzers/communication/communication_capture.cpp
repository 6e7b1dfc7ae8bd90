// The communication analysis in a capture: the analyzer and the per-section
// attribution it feeds; saves the per-instruction counts, and per section the
// counts and (with crd) the distances.
#include "analyzers/communication/communication_records.h"
#include "sources/capture/analysis_capture.h"

namespace weft {

namespace {

bool create(CaptureAnalyzers& a, const CaptureConfig& config) {
  CommunicationConfig comm;
  comm.granularity = config.granularity;
  comm.max_threads = config.max_threads;
  comm.count_invalidations = true;
  a.communication = make_reserved<CommunicationAnalyzer>(comm);
  a.sections = make_reserved<SectionAttribution>(config.max_threads);
  return a.communication && a.sections;
}

void attach(CaptureAnalyzers& a, ThreadContext& thread) {
  thread.comm.store(a.communication->attach(thread.tid));
}

void detach(ThreadContext& thread) {
  if (CommunicationAnalyzer::ThreadState* state = thread.comm.exchange(nullptr))
    CommunicationAnalyzer::retire(*state);
}

uint64_t dropped(const CaptureAnalyzers& a) {
  return a.communication->dropped() + a.sections->dropped();
}

void write_sections(CaptureSession& session, RawWriter& out) {
  // The memos' pending hits go to the communication, section and CRD counts
  // first (the communication analysis writes before every other).
  session.analyzers().communication->settle_all();
  const CaptureAnalyzers& a = session.analyzers();
  write_records(out, kCommunicationCounts,
                [&](auto&& emit) { a.communication->for_each_count(emit); });
  write_records(out, kSectionCommunication, [&](auto&& emit) {
    a.sections->for_each_count([&](uint32_t tid, const PcPeerCounts& c) {
      emit(PcCommunication{c.pc(), tid, c.peer(), c.raw, c.rar, c.inval});
    });
  });
  write_records(out, kSectionDistances, [&](auto&& emit) {
    a.sections->for_each_distance([&](uint32_t tid, const PcWriterDistanceCount& d) {
      emit(PcDistanceCount{d.key.pc_writer >> 16, tid,
                           static_cast<uint32_t>(d.key.pc_writer & 0xffff), d.key.distance,
                           d.count});
    });
  });
}

void release(CaptureAnalyzers& a, uint64_t begin, uint64_t end) {
  a.communication->forget(begin, end);
}

}  // namespace

const AnalysisCapture communication_capture = {
    nullptr, create, attach, detach, dropped, nullptr, write_sections, release,
};

}  // namespace weft
