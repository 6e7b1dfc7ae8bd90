// PcPeerCounters: per-thread communication counts keyed by (instruction,
// peer thread). Owned by one thread, so updates need no atomics.
#pragma once

#include <cstdint>

#include "analyzers/state/paged_hash_table.h"

namespace weft {

// What one count is: a true communication (raw), a communication reuse
// (rar), or an invalidation.
enum class CommunicationEvent { Raw, Rar, Inval };

struct PcPeerCounts {
  uint64_t key = 0;  // (pc << 16) | peer; 0 = empty slot
  uint64_t raw = 0;
  uint64_t rar = 0;
  uint64_t inval = 0;

  static uint64_t make_key(uint64_t pc, uint32_t peer) { return (pc << 16) | peer; }
  void count(CommunicationEvent what) {
    if (what == CommunicationEvent::Raw)
      ++raw;
    else if (what == CommunicationEvent::Rar)
      ++rar;
    else
      ++inval;
  }
  uint64_t pc() const { return key >> 16; }
  uint32_t peer() const { return static_cast<uint32_t>(key & 0xffff); }
};

using PcPeerCounters = PagedHashTable<PcPeerCounts>;

}  // namespace weft
