#include "diagnosis/trace_hints.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <map>
#include <utility>

namespace weft {
namespace {

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();

uint64_t saturating_mul(uint64_t a, uint64_t b) {
  if (a != 0 && b > kMax / a) return kMax;
  return a * b;
}

uint64_t saturating_add(uint64_t a, uint64_t b) { return b > kMax - a ? kMax : a + b; }

uint64_t magnitude(int64_t v) {
  return v < 0 ? uint64_t{0} - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
}

// The order of preference between strides of equal weight: smaller |stride|,
// then positive.
bool stride_preferred(int64_t a, int64_t b) {
  if (magnitude(a) != magnitude(b)) return magnitude(a) < magnitude(b);
  return a > b;
}

struct StrideTally {
  uint64_t weight = 0;
  std::map<int64_t, uint64_t> outer;  // small enclosing stride -> weight
};

struct StrideWalker {
  unsigned line_size;
  std::map<int64_t, StrideTally> by_stride;
  uint64_t total = 0;
  std::vector<uint64_t> counts;  // enclosing loops, outermost first

  void walk(const std::vector<TraceNode>& nodes, uint64_t multiplier) {
    for (const TraceNode& node : nodes) {
      if (node.kind == TraceNode::Kind::Loop) {
        counts.push_back(node.count);
        walk(node.body, saturating_mul(multiplier, node.count));
        counts.pop_back();
        continue;
      }
      total = saturating_add(total, multiplier);
      auto coefficient = [&](size_t k) {
        return k < node.coefficients.size() ? node.coefficients[k] : int64_t{0};
      };
      size_t inner = counts.size();
      while (inner > 0 && counts[inner - 1] < 2) --inner;
      if (inner == 0) continue;  // not under an iterating loop: no stride
      const int64_t stride = coefficient(inner - 1);
      StrideTally& tally = by_stride[stride];
      tally.weight = saturating_add(tally.weight, multiplier);
      // The smallest non-zero stride of an enclosing iterating loop, when
      // smaller than a line and than the inner stride (ties: the innermost).
      bool found = false;
      int64_t best = 0;
      for (size_t k = inner - 1; k-- > 0;) {
        if (counts[k] < 2) continue;
        const int64_t c = coefficient(k);
        if (c == 0 || magnitude(c) >= line_size || magnitude(c) >= magnitude(stride)) continue;
        if (!found || magnitude(c) < magnitude(best)) best = c, found = true;
      }
      if (found) tally.outer[best] = saturating_add(tally.outer[best], multiplier);
    }
  }
};

}  // namespace

const char* stride_class_name(StrideClass kind) {
  switch (kind) {
    case StrideClass::Zero:
      return "zero";
    case StrideClass::Unit:
      return "unit";
    case StrideClass::NonUnit:
      return "non-unit";
    case StrideClass::Large:
      return "large";
    case StrideClass::Irregular:
      return "irregular";
  }
  return "irregular";
}

StridePattern stride_pattern(const TracedInstruction& instruction, unsigned line_size) {
  StrideWalker walker{line_size, {}, 0, {}};
  walker.walk(instruction.trace.elements, 1);
  StridePattern result;
  result.addresses = walker.total;
  const std::pair<const int64_t, StrideTally>* best = nullptr;
  for (const auto& entry : walker.by_stride) {
    if (best == nullptr || entry.second.weight > best->second.weight ||
        (entry.second.weight == best->second.weight &&
         stride_preferred(entry.first, best->first))) {
      best = &entry;
    }
  }
  if (best == nullptr || walker.total == 0) return result;
  result.stride = best->first;
  result.coverage = static_cast<double>(best->second.weight) / static_cast<double>(walker.total);
  if (result.coverage < 0.5) return result;  // Irregular
  const uint64_t size = std::max<uint64_t>(instruction.access_size, 1);
  const uint64_t m = magnitude(result.stride);
  if (m == 0) {
    result.kind = StrideClass::Zero;
  } else if (m <= size) {
    result.kind = StrideClass::Unit;
  } else if (m < line_size) {
    result.kind = StrideClass::NonUnit;
  } else {
    result.kind = StrideClass::Large;
  }
  if (result.kind == StrideClass::Large) {
    uint64_t outer_total = 0;
    const std::pair<const int64_t, uint64_t>* outer = nullptr;
    for (const auto& entry : best->second.outer) {
      outer_total = saturating_add(outer_total, entry.second);
      if (outer == nullptr || entry.second > outer->second ||
          (entry.second == outer->second && stride_preferred(entry.first, outer->first))) {
        outer = &entry;
      }
    }
    // outer_total * 2 >= weight, without overflow.
    if (outer != nullptr && outer_total >= best->second.weight - best->second.weight / 2) {
      result.column_wise = true;
      result.outer_stride = outer->first;
    }
  }
  return result;
}

std::vector<AliasingPair> find_4k_aliasing(const std::vector<TracedInstruction>& instructions,
                                           unsigned window) {
  constexpr uint64_t kPositions = 65536;
  std::vector<std::vector<uint64_t>> streams(instructions.size());
  for (size_t i = 0; i < instructions.size(); ++i) {
    if (instructions[i].reads || instructions[i].writes) {
      streams[i] = expand_loop_trace(instructions[i].trace, kPositions + window);
    }
  }
  std::vector<AliasingPair> result;
  for (size_t s = 0; s < instructions.size(); ++s) {
    const TracedInstruction& store = instructions[s];
    if (!store.writes) continue;
    const std::vector<uint64_t>& store_addresses = streams[s];
    const size_t n = std::min<size_t>(store_addresses.size(), kPositions);
    if (n == 0) continue;
    const size_t needed = n - n / 2;  // ceil(n / 2)
    for (size_t l = 0; l < instructions.size(); ++l) {
      const TracedInstruction& load = instructions[l];
      if (!load.reads || load.pc == store.pc || load.thread != store.thread) continue;
      const std::vector<uint64_t>& load_addresses = streams[l];
      size_t hits = 0;
      bool first = true;
      int64_t distance = 0;
      for (size_t k = 0; k < n; ++k) {
        if (hits + (n - k) < needed) break;  // cannot reach half any more
        const uint64_t a = store_addresses[k];
        const size_t end = std::min<size_t>(load_addresses.size(), k + size_t{window});
        for (size_t j = k; j < end; ++j) {
          const uint64_t b = load_addresses[j];
          if (a != b && ((a ^ b) & 0xfff) == 0) {
            if (first) distance = static_cast<int64_t>(b - a), first = false;
            ++hits;
            break;
          }
        }
      }
      if (hits >= needed) {
        AliasingPair pair;
        pair.thread = store.thread;
        pair.store_pc = store.pc;
        pair.load_pc = load.pc;
        pair.fraction = static_cast<double>(hits) / static_cast<double>(n);
        pair.distance = distance;
        pair.compared = n;
        result.push_back(pair);
      }
    }
  }
  std::sort(result.begin(), result.end(), [](const AliasingPair& a, const AliasingPair& b) {
    if (a.fraction != b.fraction) return a.fraction > b.fraction;
    if (a.thread != b.thread) return a.thread < b.thread;
    if (a.store_pc != b.store_pc) return a.store_pc < b.store_pc;
    return a.load_pc < b.load_pc;
  });
  return result;
}

ReuseDegree reuse_degree(const TracedInstruction& instruction, uint64_t limit) {
  ReuseDegree result;
  std::vector<uint64_t> addresses =
      expand_loop_trace(instruction.trace, limit == kMax ? kMax : limit + 1);
  if (addresses.size() > limit) {
    result.truncated = true;
    addresses.resize(limit);
  }
  result.addresses = addresses.size();
  std::sort(addresses.begin(), addresses.end());
  result.distinct =
      static_cast<uint64_t>(std::unique(addresses.begin(), addresses.end()) - addresses.begin());
  if (result.distinct > 0) {
    result.degree = static_cast<double>(result.addresses) / static_cast<double>(result.distinct);
  }
  return result;
}

}  // namespace weft
