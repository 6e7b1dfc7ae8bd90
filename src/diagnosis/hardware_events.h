// Step 1 of the diagnosis for hardware events: each miss level keeps only
// the part of its per-thread variation that its superior levels (executions,
// then L1, then L2 misses of the same instruction) do not explain.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "diagnosis/imbalance_diagnosis.h"

namespace weft {

struct HardwareEventResidual {
  uint64_t pc = 0;
  HardwareLevel level = HardwareLevel::L1Miss;  // never Executions
  std::vector<double> residual;                 // per thread, centered
};

// For each instruction, the centered counts of the levels Executions, L1,
// L2, LLC are orthogonalized in that order (Gram–Schmidt): a level's
// residual is its centered counts minus their projection onto the span of
// the residuals of the levels above it. A miss level becomes an event when
// its residual is not (near) zero and keeps at least `explained_fraction`
// of the norm of its centered counts. Instructions listed more than once
// have their counts added. Result ordered by (pc, level).
//
// Throws std::invalid_argument when a count vector is neither empty nor of
// size `threads`, or holds a non-finite value.
std::vector<HardwareEventResidual> hardware_event_residuals(
    const std::vector<InstructionEvents>& instructions, size_t threads, double explained_fraction);

}  // namespace weft
