// What the false-sharing analysis hands from the capture to the profile
// builder: the falsely shared lines with the bytes each side touched, the
// unsynchronised writes (possible data races), the true/false transfer
// totals per thread pair, and the heap blocks the program allocated (to
// name the data object behind a line).
#pragma once

#include <cstdint>

#include "common/run_capture.h"

namespace weft {

// `false_events` times, thread `thread` obtained line `line_address` (last
// written by `writer`) at instruction `pc` while the bytes it accessed there
// (`thread_bytes`, bit b = byte b of the line) did not overlap the bytes the
// writer had written (`writer_bytes`). Bytes are the union over those events.
// `thread_written`: the bytes the thread wrote at those events or with the
// copy it obtained there (FalseSharingDetector).
struct LineSharingRecord {
  uint64_t line_address = 0;
  uint64_t pc = 0;
  uint32_t thread = 0;
  uint32_t writer = 0;
  uint64_t false_events = 0;
  uint64_t thread_bytes = 0;
  uint64_t writer_bytes = 0;
  uint64_t thread_written = 0;
};

// `events` times, thread `thread` wrote at instruction `pc` bytes of line
// `line_address` that `writer` had written (their overlap: `bytes`, the
// union over those writes) with no lock held and no synchronization
// between the two writes (FalseSharingDetector: a possible data race).
struct UnsyncWriteRecord {
  uint64_t line_address = 0;
  uint64_t pc = 0;
  uint32_t thread = 0;
  uint32_t writer = 0;
  uint64_t events = 0;
  uint64_t bytes = 0;
};

// All line transfers from `writer` to `thread`: true sharing (byte ranges
// overlapped) and false sharing (disjoint).
struct SharingPairTotals {
  uint32_t thread = 0;
  uint32_t writer = 0;
  uint64_t true_events = 0;
  uint64_t false_events = 0;
};

// The heap blocks the program allocated (AllocationRecord, common/run_capture.h).
inline constexpr RecordSection<LineSharingRecord> kLineSharing{
    analysis_section_tag(AnalysisId::FalseSharing, 1)};
inline constexpr RecordSection<SharingPairTotals> kSharingTotals{
    analysis_section_tag(AnalysisId::FalseSharing, 2)};
inline constexpr RecordSection<AllocationRecord> kAllocations{
    analysis_section_tag(AnalysisId::FalseSharing, 3)};
inline constexpr RecordSection<UnsyncWriteRecord> kUnsyncWrites{
    analysis_section_tag(AnalysisId::FalseSharing, 4)};

}  // namespace weft
