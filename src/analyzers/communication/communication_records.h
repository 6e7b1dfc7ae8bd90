// What the communication analysis hands from the capture to the profile
// builder: per instruction and thread pair, the communication counted there,
// over the whole run and per parallel section.
#pragma once

#include <cstdint>

#include "analyzers/crd/crd_records.h"
#include "common/run_capture.h"

namespace weft {

// Per static instruction and thread pair, the communication counted there.
// raw (true communication) / rar (communication reuse): `thread` is the
// reader, `peer` the last writer. inval: `thread` is the writer, `peer` a
// thread whose copy the write invalidated.
struct PcCommunication {
  uint64_t pc = 0;
  uint32_t thread = 0;
  uint32_t peer = 0;
  uint64_t raw = 0;
  uint64_t rar = 0;
  uint64_t inval = 0;
};

// Counts per instruction over the run.
inline constexpr RecordSection<PcCommunication> kCommunicationCounts{
    analysis_section_tag(AnalysisId::Communication, 1)};
// Per parallel section: the same records with `pc` = the site that closed the
// section (kThreadExitSectionSite: the thread's exit, resolved to the join
// that waited for it; kUnknownSectionSite: a site without a pc).
inline constexpr RecordSection<PcCommunication> kSectionCommunication{
    analysis_section_tag(AnalysisId::Communication, 2)};
// The CRD of the section's events (empty without the crd analysis), `pc` as
// above.
inline constexpr RecordSection<PcDistanceCount> kSectionDistances{
    analysis_section_tag(AnalysisId::Communication, 3)};

}  // namespace weft
