// What each analysis does on the cold path of a capture, declared once per
// analysis in its own folder (src/analyzers/NAME/NAME_capture.cpp defines
// `NAME_capture`, NAME as in WEFT_ANALYSIS_LIST): read its settings, create
// its analyzers, attach and detach a thread, count what it dropped, save
// its settings, counters and record sections into the raw capture, and
// forget the state of released heap memory.
// CaptureSession calls these for the analyses of its run, in AnalysisId
// order; the per-access fan-out stays in CaptureSession::feed_access.
//
// Everything here runs in the in-program runtime too: no allocation but
// reserve_zeroed, no exceptions, plain write(2).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <string_view>

#include "analyzers/state/page_memory.h"
#include "sources/capture/capture_session.h"
#include "sources/capture/raw_capture_writer.h"

namespace weft {

// The "key=value\n" lines of an analysis' settings and counters (the raw
// capture's AnalysisValues section), in a fixed buffer.
class ValueLines {
 public:
  void text(std::string_view key, const char* value) {
    put(key);
    put("=");
    put(value);
    put("\n");
  }
  void number(std::string_view key, uint64_t value) {
    char digits[24];
    format_decimal(value, digits, sizeof digits);
    text(key, digits);
  }
  const char* data() const { return buffer_; }
  size_t size() const { return size_; }

 private:
  void put(std::string_view s) {
    const size_t n = s.size() < sizeof buffer_ - size_ ? s.size() : sizeof buffer_ - size_;
    std::memcpy(buffer_ + size_, s.data(), n);
    size_ += n;
  }
  char buffer_[2048];
  size_t size_ = 0;
};

struct AnalysisCapture {
  // Applies the analysis' setting `setting` from its runtime form (already
  // checked by parse_setting_number for numeric types); false when `value`
  // is malformed. Null: the analysis has no settings.
  bool (*configure)(CaptureConfig& config, const AnalysisSetting& setting, const char* value,
                    uint64_t number);
  // Creates its analyzers in `analyzers`; false (leaving them null) when the
  // memory cannot be reserved.
  bool (*create)(CaptureAnalyzers& analyzers, const CaptureConfig& config);
  // Gives a started thread its per-thread state; takes it away when the
  // capture stops counting. Null: nothing per thread.
  void (*attach)(CaptureAnalyzers& analyzers, ThreadContext& thread);
  void (*detach)(ThreadContext& thread);
  // Accesses or events it could not account.
  uint64_t (*dropped)(const CaptureAnalyzers& analyzers);
  // Its settings and counters, by meta key (its descriptor's). Null: none.
  void (*values)(const CaptureAnalyzers& analyzers, ValueLines& out);
  // Its record sections (its NAME_records.h).
  void (*write_sections)(CaptureSession& session, RawWriter& out);
  // Heap memory [begin, end) was released: forgets the per-granule state it
  // keeps there (docs/metrics.md, "Freed memory"). Null: it keeps none.
  void (*release)(CaptureAnalyzers& analyzers, uint64_t begin, uint64_t end);
};

#define WEFT_DECLARE_ANALYSIS_CAPTURE(Id, symbol) extern const AnalysisCapture symbol##_capture;
WEFT_ANALYSIS_LIST(WEFT_DECLARE_ANALYSIS_CAPTURE)
#undef WEFT_DECLARE_ANALYSIS_CAPTURE

// An object of type T in reserve_zeroed memory; null when none is left.
template <class T, class... Args>
T* make_reserved(Args&&... args) {
  void* mem = reserve_zeroed(sizeof(T));
  return mem ? new (mem) T(static_cast<Args&&>(args)...) : nullptr;
}

}  // namespace weft
