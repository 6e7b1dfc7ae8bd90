// What the page-usage analysis hands from the capture to the profile
// builder: each page's first writer, and each thread's reads and writes per
// page (docs/metrics.md, "Data placement"). The heap blocks that name the
// data behind a page travel as the false-sharing analysis' kAllocations
// section, which this analysis writes when that one does not run.
#pragma once

#include <cstdint>

#include "common/run_capture.h"

namespace weft {

// Thread `thread` wrote page `page_address` (a multiple of kPageBytes) before
// any other thread did, at instruction `pc`: under Linux's first-touch policy
// the page's frame sits on that thread's NUMA node.
struct PageFirstWrite {
  uint64_t page_address = 0;
  uint64_t pc = 0;
  uint32_t thread = 0;
  uint32_t reserved = 0;
};

// Thread `thread` read page `page_address` `reads` times and wrote it
// `writes` times (memory accesses, one per instruction execution).
struct PageAccesses {
  uint64_t page_address = 0;
  uint32_t thread = 0;
  uint32_t reserved = 0;
  uint64_t reads = 0;
  uint64_t writes = 0;
};

inline constexpr uint64_t kPageBytes = 4096;

inline constexpr RecordSection<PageFirstWrite> kPageFirstWrites{
    analysis_section_tag(AnalysisId::PageUsage, 1)};
inline constexpr RecordSection<PageAccesses> kPageAccesses{
    analysis_section_tag(AnalysisId::PageUsage, 2)};

}  // namespace weft
