// A communication analyzer feeding a CRD analyzer, with threads 0..N-1
// attached: the set-up of the unit tests that drive both by hand.
#pragma once

#include <array>
#include <cstdint>

#include "analyzers/communication/communication_analyzer.h"
#include "analyzers/crd/communication_reuse_distance.h"

namespace weft_test {

template <unsigned N>
struct CommunicationWithCrd {
  // cap: CRD granules per pair (0: none); granule of 64 bytes.
  explicit CommunicationWithCrd(uint64_t cap)
      : comm(weft::CommunicationConfig{64, N, true}), crd(weft::CrdConfig{N, cap}) {
    comm.connect(&crd, nullptr);
    for (unsigned t = 0; t < N; ++t) thread[t] = comm.attach(t);
  }
  weft::CommunicationAnalyzer comm;
  weft::CommunicationReuseDistance crd;
  std::array<weft::CommunicationAnalyzer::ThreadState*, N> thread{};
};

}  // namespace weft_test
