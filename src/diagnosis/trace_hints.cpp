#include "diagnosis/trace_hints.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>
#include <queue>
#include <unordered_map>
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
  return stride_pattern(std::vector<const TracedInstruction*>{&instruction}, line_size);
}

StridePattern stride_pattern(const std::vector<const TracedInstruction*>& streams,
                             unsigned line_size) {
  StrideWalker walker{line_size, {}, 0, {}};
  uint32_t access_size = 0;
  for (const TracedInstruction* stream : streams) {
    walker.walk(stream->trace.elements, 1);
    access_size = std::max(access_size, stream->access_size);
  }
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
  const uint64_t size = std::max<uint64_t>(access_size, 1);
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
      // Only a load issued after the store can wait for it: a load placed
      // before the store in the loop's code (a lower address) reads its
      // position k before the store writes its own, so the window starts
      // at the next iteration's load (`b[i] = f(a[i])` with the arrays
      // 4 KiB apart shares the low bits within one iteration only).
      const size_t after = load.pc < store.pc ? 1 : 0;
      size_t hits = 0;
      bool first = true;
      int64_t distance = 0;
      for (size_t k = 0; k < n; ++k) {
        if (hits + (n - k) < needed) break;  // cannot reach half any more
        const uint64_t a = store_addresses[k];
        const size_t end = std::min<size_t>(load_addresses.size(), k + after + size_t{window});
        for (size_t j = k + after; j < end; ++j) {
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

namespace {

// Whether no value under `nodes` depends on the index of the loop `depth`
// levels below the top-level element.
bool independent_of(const std::vector<TraceNode>& nodes, size_t depth) {
  for (const TraceNode& node : nodes) {
    if (node.kind == TraceNode::Kind::Loop) {
      if (!independent_of(node.body, depth)) return false;
    } else if (depth < node.coefficients.size() && node.coefficients[depth] != 0) {
      return false;
    }
  }
  return true;
}

// Whether `inner`, an element of a top-level loop's body (its values carry
// that loop's coefficient first, 0 here), is the top-level element `top`.
bool same_without_outer(const TraceNode& inner, const TraceNode& top) {
  if (inner.kind != top.kind) return false;
  if (inner.kind == TraceNode::Kind::Loop) {
    if (inner.count != top.count || inner.body.size() != top.body.size()) return false;
    for (size_t i = 0; i < inner.body.size(); ++i)
      if (!same_without_outer(inner.body[i], top.body[i])) return false;
    return true;
  }
  if (inner.base != top.base || inner.coefficients.size() != top.coefficients.size() + 1)
    return false;
  return std::equal(top.coefficients.begin(), top.coefficients.end(),
                    inner.coefficients.begin() + 1);
}

uint64_t nodes_length(const std::vector<TraceNode>& nodes) {
  uint64_t length = 0;
  for (const TraceNode& node : nodes)
    length = saturating_add(length, node.kind == TraceNode::Kind::Loop
                                        ? saturating_mul(node.count, nodes_length(node.body))
                                        : 1);
  return length;
}

uint64_t gcd(uint64_t a, uint64_t b) {
  while (b != 0) a = std::exchange(b, a % b);
  return a;
}

// Prefix sums over positions 0..n-1 (Fenwick tree).
class PositionCounts {
 public:
  explicit PositionCounts(size_t n) : tree_(n + 1, 0) {}
  void add(size_t position, int32_t delta) {
    for (size_t i = position + 1; i < tree_.size(); i += i & (~i + 1)) tree_[i] += delta;
  }
  // The sum over positions [0, end).
  int64_t before(size_t end) const {
    int64_t sum = 0;
    for (size_t i = end; i > 0; i -= i & (~i + 1)) sum += tree_[i];
    return sum;
  }

 private:
  std::vector<int32_t> tree_;
};

}  // namespace

Repetition leading_repetition(const LoopTrace& trace) {
  Repetition none{1, trace_length(trace)};
  if (trace.elements.empty()) return none;
  const TraceNode& outermost = trace.elements.front();
  if (outermost.kind != TraceNode::Kind::Loop || !independent_of(outermost.body, 0)) return none;
  // The other top-level elements: the start of one more iteration.
  if (trace.elements.size() > outermost.body.size()) return none;
  for (size_t i = 1; i < trace.elements.size(); ++i)
    if (!same_without_outer(outermost.body[i - 1], trace.elements[i])) return none;
  Repetition r{outermost.count, 0};
  const TraceNode* loop = &outermost;
  for (size_t depth = 1;
       loop->body.size() == 1 && loop->body.front().kind == TraceNode::Kind::Loop &&
       independent_of(loop->body.front().body, depth);
       ++depth) {
    loop = &loop->body.front();
    r.count = saturating_mul(r.count, loop->count);
  }
  r.unit = nodes_length(loop->body);
  return r;
}

NestReuse nest_reuse(const std::vector<const TracedInstruction*>& nest,
                     const std::vector<bool>& in_group, unsigned line_size, uint64_t capacity_lines,
                     uint64_t limit) {
  NestReuse out;
  const size_t n = nest.size();
  std::vector<Repetition> repetitions(n);
  uint64_t executions = 0;
  for (size_t i = 0; i < n; ++i) {
    repetitions[i] = leading_repetition(nest[i]->trace);
    if (repetitions[i].unit != 0) executions = gcd(executions, repetitions[i].count);
  }
  out.executions = std::max<uint64_t>(executions, 1);
  // The first execution of each stream, cut in proportion beyond `limit`.
  std::vector<uint64_t> length(n);
  uint64_t total = 0;
  for (size_t i = 0; i < n; ++i) {
    length[i] = saturating_mul(repetitions[i].count / out.executions, repetitions[i].unit);
    total = saturating_add(total, length[i]);
  }
  if (total > limit) {
    out.truncated = true;
    for (uint64_t& l : length)
      l = static_cast<uint64_t>(static_cast<long double>(l) * static_cast<long double>(limit) /
                                static_cast<long double>(total));
  }
  std::vector<std::vector<uint64_t>> addresses(n);
  std::vector<bool> measured(n, false);
  size_t positions = 0;
  for (size_t i = 0; i < n; ++i) {
    addresses[i] = expand_loop_trace(nest[i]->trace, length[i]);
    positions += addresses[i].size();
    // A load of one address throughout (a scalar, a constant) is no data.
    const std::vector<uint64_t>& a = addresses[i];
    measured[i] = in_group[i] && !a.empty() &&
                  std::any_of(a.begin(), a.end(), [&](uint64_t x) { return x != a.front(); });
  }
  // Interleaved in proportion: stream i's j-th of m_i addresses at
  // (2j + 1) / (2 m_i); ties to the earlier stream.
  auto later = [&](const std::pair<size_t, size_t>& a, const std::pair<size_t, size_t>& b) {
    const uint64_t ta = (2 * a.second + 1) * addresses[b.first].size();
    const uint64_t tb = (2 * b.second + 1) * addresses[a.first].size();
    return ta != tb ? ta > tb : a.first > b.first;
  };
  std::priority_queue<std::pair<size_t, size_t>, std::vector<std::pair<size_t, size_t>>,
                      decltype(later)>
      next(later);
  for (size_t i = 0; i < n; ++i)
    if (!addresses[i].empty()) next.emplace(i, 0);

  const uint64_t line = std::max(line_size, 1u);
  PositionCounts latest(positions);                // 1 at each line's latest position
  std::unordered_map<uint64_t, size_t> line_seen;  // line -> its latest position
  struct Loaded {
    size_t latest = 0;  // the group's latest load of the address
    uint64_t count = 0;
  };
  std::unordered_map<uint64_t, Loaded> loaded;  // by address
  for (size_t p = 0; !next.empty(); ++p) {
    const auto [stream, j] = next.top();
    next.pop();
    if (j + 1 < addresses[stream].size()) next.emplace(stream, j + 1);
    const uint64_t address = addresses[stream][j];
    if (measured[stream]) {
      ++out.loads;
      auto [previous, first] = loaded.try_emplace(address, Loaded{p, 0});
      ++previous->second.count;
      if (!first) {
        ++out.reuses;
        const size_t q = previous->second.latest;
        const uint64_t distance =
            p > q + 1 ? static_cast<uint64_t>(latest.before(p) - latest.before(q + 1)) : 0;
        if (distance < capacity_lines) {
          ++out.held;
          out.span = std::max(out.span, distance);
        }
        previous->second.latest = p;
      }
    }
    auto [seen, fresh] = line_seen.try_emplace(address / line, p);
    if (!fresh) {
      latest.add(seen->second, -1);
      seen->second = p;
    }
    latest.add(p, 1);
  }
  out.distinct = loaded.size();
  // The fewest addresses that take half of the loads.
  std::vector<uint64_t> counts;
  counts.reserve(loaded.size());
  for (const auto& [address, l] : loaded) counts.push_back(l.count);
  std::sort(counts.begin(), counts.end(), std::greater<>());
  for (uint64_t c : counts) {
    if (2 * out.hot_loads >= out.loads) break;
    ++out.hot_addresses;
    out.hot_loads += c;
  }
  if (out.loads > 0)
    out.degree = static_cast<double>(out.loads) / static_cast<double>(out.loads - out.held);
  return out;
}

}  // namespace weft
