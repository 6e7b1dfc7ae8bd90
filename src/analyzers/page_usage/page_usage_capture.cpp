// The page-usage analysis in a capture: each page's first writer and each
// thread's accesses per page, and the heap blocks that name the data on a
// page (saved here only when the false-sharing analysis, which saves them
// too, does not run).
#include "analyzers/false_sharing/false_sharing_records.h"
#include "analyzers/page_usage/page_usage_records.h"
#include "sources/capture/analysis_capture.h"

namespace weft {

namespace {

bool create(CaptureAnalyzers& a, const CaptureConfig& config) {
  a.page_usage = make_reserved<PageUsage>(PageUsageConfig{config.max_threads});
  return a.page_usage != nullptr;
}

void attach(CaptureAnalyzers& a, ThreadContext& thread) {
  thread.page_usage.store(a.page_usage->attach(thread.tid));
}

void detach(ThreadContext& thread) { thread.page_usage.store(nullptr); }

uint64_t dropped(const CaptureAnalyzers& a) { return a.page_usage->dropped(); }

void write_sections(CaptureSession& session, RawWriter& out) {
  const PageUsage* pages = session.analyzers().page_usage;
  write_records(out, kPageFirstWrites, [&](auto&& emit) { pages->for_each_first_write(emit); });
  write_records(out, kPageAccesses, [&](auto&& emit) { pages->for_each_page_count(emit); });
  if (session.analyzers().false_sharing) return;  // it saves the heap blocks
  write_records(out, kAllocations, [&](auto&& emit) { session.for_each_allocation(emit); });
}

}  // namespace

const AnalysisCapture page_usage_capture = {
    nullptr, create, attach, detach, dropped, nullptr, write_sections, nullptr,
};

}  // namespace weft
