// The traces analysis in a capture: one compressed address stream per thread
// and memory instruction, saved as a byte section (streams vary in length).
#include "analyzers/traces/traces_records.h"
#include "sources/capture/analysis_capture.h"

namespace weft {

namespace {

bool configure(CaptureConfig& config, const AnalysisSetting& setting, const char*,
               uint64_t number) {
  if (setting.key == "trace_sampling")
    config.traces.segment_sampling = static_cast<uint32_t>(number);
  else
    config.traces.max_bytes_per_thread = number;  // trace_budget
  return true;
}

bool create(CaptureAnalyzers& a, const CaptureConfig& config) {
  MemoryTraceConfig traces = config.traces;
  traces.max_threads = config.max_threads;
  a.traces = make_reserved<MemoryTraceRecorder>(traces);
  return a.traces != nullptr;
}

void attach(CaptureAnalyzers& a, ThreadContext& thread) {
  thread.traces.store(a.traces->attach(thread.tid));
}

void detach(ThreadContext& thread) { thread.traces.store(nullptr); }

// A trace beyond its budget counts its accesses as lost, per stream.
uint64_t dropped(const CaptureAnalyzers&) { return 0; }

void values(const CaptureAnalyzers& a, ValueLines& out) {
  out.number("trace_budget", a.traces->config().max_bytes_per_thread);
  out.number("trace_sampling", a.traces->config().segment_sampling);
  out.number("trace_skipped_segments", a.traces->skipped_segments());
}

void write_sections(CaptureSession& session, RawWriter& out) {
  MemoryTraceRecorder* traces = session.analyzers().traces;
  traces->finish();
  write_text_section(out, kTraceStreams.tag, [&](auto&& write) {
    traces->for_each_stream([&](const TraceStreamHeader& h, const auto& body) {
      write(&h, sizeof h);
      body.write(write);
      body.write_segments(write);
    });
  });
}

}  // namespace

const AnalysisCapture traces_capture = {
    configure, create, attach, detach, dropped, values, write_sections, nullptr,
};

}  // namespace weft
