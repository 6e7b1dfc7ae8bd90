#include "static/control_flow_graph.h"

#include <algorithm>
#include <functional>
#include <map>

namespace weft {
namespace {

constexpr uint32_t kUnvisited = UINT32_MAX;

// Successor lists without duplicates or out-of-range nodes.
Successors clean(const Successors& successors) {
  const uint32_t n = static_cast<uint32_t>(successors.size());
  Successors result(n);
  for (uint32_t node = 0; node < n; ++node) {
    for (uint32_t next : successors[node]) {
      if (next < n) result[node].push_back(next);
    }
    std::sort(result[node].begin(), result[node].end());
    result[node].erase(std::unique(result[node].begin(), result[node].end()), result[node].end());
  }
  return result;
}

// Reverse post-order of the nodes reachable from entry (iterative DFS).
std::vector<uint32_t> reverse_post_order(const Successors& successors, uint32_t entry) {
  std::vector<uint32_t> post_order;
  if (entry >= successors.size()) return post_order;
  std::vector<bool> seen(successors.size(), false);
  std::vector<std::pair<uint32_t, size_t>> stack;  // (node, next successor to visit)
  stack.emplace_back(entry, 0);
  seen[entry] = true;
  while (!stack.empty()) {
    auto& [node, next] = stack.back();
    if (next < successors[node].size()) {
      uint32_t child = successors[node][next++];
      if (!seen[child]) {
        seen[child] = true;
        stack.emplace_back(child, 0);
      }
    } else {
      post_order.push_back(node);
      stack.pop_back();
    }
  }
  std::reverse(post_order.begin(), post_order.end());
  return post_order;
}

std::vector<int32_t> dominators_of_clean(const Successors& successors, uint32_t entry) {
  const uint32_t n = static_cast<uint32_t>(successors.size());
  std::vector<int32_t> idom(n, kNoDominator);
  std::vector<uint32_t> order = reverse_post_order(successors, entry);
  if (order.empty()) return idom;

  std::vector<uint32_t> rpo_index(n, kUnvisited);
  for (uint32_t i = 0; i < order.size(); ++i) rpo_index[order[i]] = i;
  Successors predecessors(n);
  for (uint32_t node : order) {
    for (uint32_t next : successors[node]) predecessors[next].push_back(node);
  }

  auto intersect = [&](uint32_t a, uint32_t b) {
    while (a != b) {
      while (rpo_index[a] > rpo_index[b]) a = static_cast<uint32_t>(idom[a]);
      while (rpo_index[b] > rpo_index[a]) b = static_cast<uint32_t>(idom[b]);
    }
    return a;
  };

  idom[entry] = static_cast<int32_t>(entry);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 1; i < order.size(); ++i) {
      uint32_t node = order[i];
      int32_t new_idom = kNoDominator;
      for (uint32_t pred : predecessors[node]) {
        if (idom[pred] == kNoDominator) continue;  // not processed yet
        new_idom = new_idom == kNoDominator
                       ? static_cast<int32_t>(pred)
                       : static_cast<int32_t>(intersect(pred, static_cast<uint32_t>(new_idom)));
      }
      if (idom[node] != new_idom) {
        idom[node] = new_idom;
        changed = true;
      }
    }
  }
  return idom;
}

}  // namespace

std::vector<int32_t> immediate_dominators(const Successors& successors, uint32_t entry) {
  return dominators_of_clean(clean(successors), entry);
}

bool dominates(const std::vector<int32_t>& idom, uint32_t a, uint32_t b) {
  if (a >= idom.size() || b >= idom.size() || idom[b] == kNoDominator) return false;
  for (uint32_t node = b;;) {
    if (node == a) return true;
    uint32_t up = static_cast<uint32_t>(idom[node]);
    if (up == node) return false;  // reached the entry
    node = up;
  }
}

namespace {

// Per node, its predecessors that are reachable from the entry.
Successors reachable_predecessors(const Successors& successors, const std::vector<int32_t>& idom) {
  Successors predecessors(successors.size());
  for (uint32_t node = 0; node < successors.size(); ++node) {
    if (idom[node] == kNoDominator) continue;
    for (uint32_t next : successors[node]) predecessors[next].push_back(node);
  }
  return predecessors;
}

// The back edges u -> h (h dominates u) as (latch, header) pairs, and the
// latches grouped by header (a std::map keeps headers in node order).
std::map<uint32_t, std::vector<uint32_t>> find_back_edges(
    const Successors& successors, const std::vector<int32_t>& idom,
    std::vector<std::pair<uint32_t, uint32_t>>& back_edges) {
  std::map<uint32_t, std::vector<uint32_t>> latches_of;
  for (uint32_t node = 0; node < successors.size(); ++node) {
    if (idom[node] == kNoDominator) continue;
    for (uint32_t next : successors[node]) {
      if (dominates(idom, next, node)) {
        back_edges.emplace_back(node, next);
        latches_of[next].push_back(node);
      }
    }
  }
  std::sort(back_edges.begin(), back_edges.end());
  return latches_of;
}

// Marks in `in_body` (all false on entry) the header and every node that
// reaches a latch without passing through the header.
void mark_loop_body(uint32_t header, const std::vector<uint32_t>& latches,
                    const Successors& predecessors, std::vector<bool>& in_body) {
  in_body[header] = true;
  std::vector<uint32_t> work;
  for (uint32_t latch : latches) {
    if (!in_body[latch]) {
      in_body[latch] = true;
      work.push_back(latch);
    }
  }
  while (!work.empty()) {
    uint32_t node = work.back();
    work.pop_back();
    for (uint32_t pred : predecessors[node]) {
      if (!in_body[pred]) {
        in_body[pred] = true;
        work.push_back(pred);
      }
    }
  }
}

// One natural loop per header, in header order: walk backwards from the
// latches to the header.
std::vector<NaturalLoop> natural_loops(std::map<uint32_t, std::vector<uint32_t>>& latches_of,
                                       const Successors& predecessors) {
  const uint32_t n = static_cast<uint32_t>(predecessors.size());
  std::vector<NaturalLoop> loops;
  std::vector<bool> in_body(n, false);
  for (auto& [header, latches] : latches_of) {
    NaturalLoop loop;
    loop.header = header;
    std::sort(latches.begin(), latches.end());
    loop.latches = latches;
    std::fill(in_body.begin(), in_body.end(), false);
    mark_loop_body(header, latches, predecessors, in_body);
    for (uint32_t node = 0; node < n; ++node) {
      if (in_body[node]) loop.body.push_back(node);
    }
    loops.push_back(std::move(loop));
  }
  return loops;
}

// Nesting: the parent of a loop is the smallest other loop containing its
// header (-1 when none does).
std::vector<int32_t> loop_parents(const std::vector<NaturalLoop>& loops) {
  auto contains = [](const NaturalLoop& loop, uint32_t node) {
    return std::binary_search(loop.body.begin(), loop.body.end(), node);
  };
  std::vector<int32_t> parent(loops.size(), -1);
  for (size_t i = 0; i < loops.size(); ++i) {
    for (size_t j = 0; j < loops.size(); ++j) {
      if (i == j || !contains(loops[j], loops[i].header)) continue;
      if (parent[i] < 0 ||
          loops[j].body.size() < loops[static_cast<size_t>(parent[i])].body.size()) {
        parent[i] = static_cast<int32_t>(j);
      }
    }
  }
  return parent;
}

// Moves the loops into the forest in a pre-order of their nesting (loops,
// and thus children, are in header order), with their parent, depth and
// the innermost loop of each node.
void add_in_pre_order(std::vector<NaturalLoop>& loops, const std::vector<int32_t>& parent,
                      LoopForest& forest) {
  std::vector<std::vector<size_t>> children(loops.size());
  std::vector<size_t> roots;
  for (size_t i = 0; i < loops.size(); ++i) {
    if (parent[i] < 0) {
      roots.push_back(i);
    } else {
      children[static_cast<size_t>(parent[i])].push_back(i);
    }
  }
  std::function<void(size_t, int32_t, uint32_t)> visit = [&](size_t old_index, int32_t new_parent,
                                                             uint32_t depth) {
    NaturalLoop loop = std::move(loops[old_index]);
    loop.parent = new_parent;
    loop.depth = depth;
    int32_t new_index = static_cast<int32_t>(forest.loops.size());
    for (uint32_t node : loop.body) forest.innermost[node] = new_index;
    forest.loops.push_back(std::move(loop));
    for (size_t child : children[old_index]) visit(child, new_index, depth + 1);
  };
  for (size_t root : roots) visit(root, -1, 1);
}

}  // namespace

LoopForest find_loops(const Successors& raw_successors, uint32_t entry) {
  const Successors successors = clean(raw_successors);
  LoopForest forest;
  forest.idom = dominators_of_clean(successors, entry);
  forest.innermost.assign(successors.size(), -1);
  const Successors predecessors = reachable_predecessors(successors, forest.idom);
  auto latches_of = find_back_edges(successors, forest.idom, forest.back_edges);
  std::vector<NaturalLoop> loops = natural_loops(latches_of, predecessors);
  add_in_pre_order(loops, loop_parents(loops), forest);
  return forest;
}

}  // namespace weft
