#include "diagnosis/hardware_events.h"

#include <Eigen/Dense>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>

namespace weft {
namespace {

// A residual this small against the centered counts is rounding noise.
constexpr double kResidualTolerance = 1e-9;
// A centered vector this small against the raw counts is a constant.
constexpr double kConstantTolerance = 1e-12;

void add_counts(Eigen::VectorXd& into, const std::vector<double>& counts, size_t threads,
                uint64_t pc) {
  if (counts.empty()) return;
  if (counts.size() != threads) {
    throw std::invalid_argument("instruction " + std::to_string(pc) + ": " +
                                std::to_string(counts.size()) + " counts for " +
                                std::to_string(threads) + " threads");
  }
  for (size_t t = 0; t < threads; ++t) {
    if (!std::isfinite(counts[t])) {
      throw std::invalid_argument("instruction " + std::to_string(pc) + ": non-finite count");
    }
    into[static_cast<Eigen::Index>(t)] += counts[t];
  }
}

}  // namespace

std::vector<HardwareEventResidual> hardware_event_residuals(
    const std::vector<InstructionEvents>& instructions, size_t threads, double explained_fraction) {
  const Eigen::Index n = static_cast<Eigen::Index>(threads);
  std::map<uint64_t, std::array<Eigen::VectorXd, 4>> by_pc;
  for (const auto& instruction : instructions) {
    auto [it, inserted] = by_pc.try_emplace(instruction.pc);
    if (inserted) {
      for (auto& level : it->second) level = Eigen::VectorXd::Zero(n);
    }
    for (size_t level = 0; level < 4; ++level) {
      add_counts(it->second[level], instruction.counts[level], threads, instruction.pc);
    }
  }

  std::vector<HardwareEventResidual> events;
  std::vector<Eigen::VectorXd> basis;  // orthonormal residuals of the levels seen so far
  for (const auto& [pc, levels] : by_pc) {
    basis.clear();
    for (size_t level = 0; level < 4; ++level) {
      const Eigen::VectorXd& raw = levels[level];
      const Eigen::VectorXd centered = raw.array() - raw.mean();
      const double centered_norm = centered.norm();
      if (!(centered_norm > kConstantTolerance * raw.norm()) || centered_norm == 0.0) continue;
      // Modified Gram–Schmidt against the superiors' orthonormal residuals.
      Eigen::VectorXd residual = centered;
      for (const auto& q : basis) residual -= q.dot(residual) * q;
      const double residual_norm = residual.norm();
      if (!(residual_norm > kResidualTolerance * centered_norm)) continue;
      if (level > 0 && residual_norm >= explained_fraction * centered_norm) {
        HardwareEventResidual event;
        event.pc = pc;
        event.level = static_cast<HardwareLevel>(level);
        event.residual.assign(residual.data(), residual.data() + residual.size());
        events.push_back(std::move(event));
      }
      basis.push_back(residual / residual_norm);
    }
  }
  return events;
}

}  // namespace weft
