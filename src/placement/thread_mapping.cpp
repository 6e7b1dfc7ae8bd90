#include "placement/thread_mapping.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace weft {
namespace {

constexpr size_t kNone = ~size_t{0};

double volume_between(const ThreadVolumes& volume, size_t a, size_t b) {
  return a < volume.size() && b < volume[a].size() ? volume[a][b] : 0.0;
}

// The slots of `slots` split into the domains of the level just below
// `level`: slots whose PUs share that level go together, in slot order.
std::vector<std::vector<size_t>> split(const std::vector<size_t>& slots,
                                       const std::vector<size_t>& slot_pu,
                                       const PuDistances& machine, SharedLevel within) {
  std::vector<std::vector<size_t>> classes;
  for (size_t s : slots) {
    auto it = std::find_if(classes.begin(), classes.end(), [&](const std::vector<size_t>& c) {
      return machine.level(slot_pu[c.front()], slot_pu[s]) <= within;
    });
    if (it == classes.end())
      classes.push_back({s});
    else
      it->push_back(s);
  }
  return classes;
}

bool on_one_pu(const std::vector<size_t>& slots, const std::vector<size_t>& slot_pu) {
  return std::all_of(slots.begin(), slots.end(),
                     [&](size_t s) { return slot_pu[s] == slot_pu[slots.front()]; });
}

SharedLevel below(SharedLevel level) {
  return static_cast<SharedLevel>(static_cast<int>(level) - 1);
}

// Scatter order: the domains' own orders interleaved, at every level.
std::vector<size_t> spread_order(const std::vector<size_t>& slots,
                                 const std::vector<size_t>& slot_pu, const PuDistances& machine,
                                 SharedLevel level) {
  if (level == SharedLevel::SamePu || on_one_pu(slots, slot_pu)) return slots;
  const auto classes = split(slots, slot_pu, machine, below(level));
  if (classes.size() == 1) return spread_order(slots, slot_pu, machine, below(level));
  std::vector<std::vector<size_t>> orders;
  for (const auto& c : classes) orders.push_back(spread_order(c, slot_pu, machine, below(level)));
  std::vector<size_t> out;
  for (size_t k = 0; out.size() < slots.size(); ++k)
    for (const auto& o : orders)
      if (k < o.size()) out.push_back(o[k]);
  return out;
}

// Volume between `thread` and the members of `group`.
double volume_to(const ThreadVolumes& volume, size_t thread, const std::vector<size_t>& group) {
  double sum = 0;
  for (size_t other : group)
    if (other != thread) sum += volume_between(volume, thread, other);
  return sum;
}

// `threads` split into groups of the given sizes, keeping the most volume
// inside the groups: each grown from the heaviest remaining thread by the
// thread closest to it, then single swaps between groups while one cuts
// less.
std::vector<std::vector<size_t>> group_threads(const ThreadVolumes& volume,
                                               const std::vector<size_t>& threads,
                                               const std::vector<size_t>& sizes) {
  std::vector<std::vector<size_t>> groups(sizes.size());
  std::vector<size_t> left = threads;
  for (size_t g = 0; g < sizes.size(); ++g) {
    while (groups[g].size() < sizes[g] && !left.empty()) {
      size_t best = 0;
      double best_volume = -std::numeric_limits<double>::infinity();
      for (size_t k = 0; k < left.size(); ++k) {
        // The seed: the thread with the most volume to those left; then the
        // one whose joining keeps the most inside: its volume to the group
        // less its volume to the threads left (a square of a grid, not a
        // row, when both touch the group as much).
        const double v = groups[g].empty() ? volume_to(volume, left[k], left)
                                           : volume_to(volume, left[k], groups[g]) -
                                                 volume_to(volume, left[k], left);
        if (v > best_volume) {
          best_volume = v;
          best = k;
        }
      }
      groups[g].push_back(left[best]);
      left.erase(left.begin() + static_cast<std::ptrdiff_t>(best));
    }
  }
  for (bool improved = true; improved;) {
    improved = false;
    for (size_t x = 0; x < groups.size() && !improved; ++x) {
      for (size_t y = x + 1; y < groups.size() && !improved; ++y) {
        for (size_t& a : groups[x]) {
          for (size_t& b : groups[y]) {
            // Moving a to y and b to x: the volume that stops crossing less
            // the volume that starts to.
            const double gain = volume_to(volume, a, groups[y]) - volume_to(volume, a, groups[x]) +
                                volume_to(volume, b, groups[x]) - volume_to(volume, b, groups[y]) -
                                2 * volume_between(volume, a, b);
            if (gain > 1e-9) {
              std::swap(a, b);
              improved = true;
              break;
            }
          }
          if (improved) break;
        }
      }
    }
  }
  return groups;
}

// Places `threads` on `slots` (at least as many), level by level.
void place_hierarchically(const ThreadVolumes& volume, const std::vector<size_t>& threads,
                          const std::vector<size_t>& slots, const std::vector<size_t>& slot_pu,
                          const PuDistances& machine, SharedLevel level,
                          std::vector<size_t>& thread_slot) {
  if (threads.empty()) return;
  if (level == SharedLevel::SamePu || on_one_pu(slots, slot_pu)) {
    for (size_t k = 0; k < threads.size(); ++k) thread_slot[threads[k]] = slots[k];
    return;
  }
  const auto classes = split(slots, slot_pu, machine, below(level));
  if (classes.size() == 1) {
    place_hierarchically(volume, threads, slots, slot_pu, machine, below(level), thread_slot);
    return;
  }
  // As few domains as hold the threads: the largest first.
  std::vector<size_t> order(classes.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return classes[a].size() > classes[b].size(); });
  std::vector<size_t> sizes(classes.size(), 0);
  size_t remaining = threads.size();
  for (size_t c : order) {
    sizes[c] = std::min(classes[c].size(), remaining);
    remaining -= sizes[c];
  }
  const auto groups = group_threads(volume, threads, sizes);
  for (size_t c = 0; c < classes.size(); ++c)
    place_hierarchically(volume, groups[c], classes[c], slot_pu, machine, below(level),
                         thread_slot);
}

// COMPLACE's Algorithm 2 on slots.
std::vector<size_t> place_greedily(const ThreadVolumes& volume, size_t threads,
                                   const std::vector<size_t>& slot_pu, const PuDistances& machine) {
  std::vector<size_t> thread_slot(threads, kNone);
  std::vector<bool> slot_used(slot_pu.size(), false);
  auto total = [&](size_t t) {
    double sum = 0;
    for (size_t u = 0; u < threads; ++u)
      if (u != t) sum += volume_between(volume, t, u);
    return sum;
  };
  auto nearest_free = [&](size_t from) {
    size_t best = kNone;
    for (size_t s = 0; s < slot_pu.size(); ++s) {
      if (slot_used[s]) continue;
      if (best == kNone || machine.distance(slot_pu[from], slot_pu[s]) <
                               machine.distance(slot_pu[from], slot_pu[best]))
        best = s;
    }
    return best;
  };
  for (size_t mapped = 0; mapped < threads;) {
    // A new component: the heaviest unmapped thread on the first free slot.
    size_t seed = kNone;
    for (size_t t = 0; t < threads; ++t)
      if (thread_slot[t] == kNone && (seed == kNone || total(t) > total(seed))) seed = t;
    const size_t first = static_cast<size_t>(std::find(slot_used.begin(), slot_used.end(), false) -
                                             slot_used.begin());
    thread_slot[seed] = first;
    slot_used[first] = true;
    ++mapped;
    for (;;) {
      size_t from = kNone, to = kNone;
      double heaviest = 0;
      for (size_t m = 0; m < threads; ++m) {
        if (thread_slot[m] == kNone) continue;
        for (size_t u = 0; u < threads; ++u) {
          if (thread_slot[u] != kNone) continue;
          if (const double v = volume_between(volume, m, u); v > heaviest) {
            heaviest = v;
            from = m;
            to = u;
          }
        }
      }
      if (to == kNone) break;
      const size_t slot = nearest_free(thread_slot[from]);
      thread_slot[to] = slot;
      slot_used[slot] = true;
      ++mapped;
    }
  }
  return thread_slot;
}

double hop_bytes(const ThreadVolumes& volume, const PuDistances& machine,
                 const std::vector<size_t>& thread_slot, const std::vector<size_t>& slot_pu) {
  double sum = 0;
  for (size_t a = 0; a < thread_slot.size(); ++a)
    for (size_t b = a + 1; b < thread_slot.size(); ++b)
      sum += volume_between(volume, a, b) *
             machine.distance(slot_pu[thread_slot[a]], slot_pu[thread_slot[b]]);
  return sum;
}

// Swaps of two slots' contents (a thread and a thread, or a thread and a
// free slot) while one lowers the hop-bytes; the first found each time.
void refine(const ThreadVolumes& volume, const PuDistances& machine,
            const std::vector<size_t>& slot_pu, std::vector<size_t>& thread_slot) {
  std::vector<size_t> slot_thread(slot_pu.size(), kNone);
  for (size_t t = 0; t < thread_slot.size(); ++t) slot_thread[thread_slot[t]] = t;
  // The change in hop-bytes if thread t moved from its slot to slot s,
  // the thread at s (if any) taking t's slot.
  auto contribution = [&](size_t t, size_t pu, size_t skip) {
    double sum = 0;
    for (size_t u = 0; u < thread_slot.size(); ++u)
      if (u != t && u != skip)
        sum += volume_between(volume, t, u) * machine.distance(pu, slot_pu[thread_slot[u]]);
    return sum;
  };
  for (int pass = 0; pass < 1000; ++pass) {
    bool improved = false;
    for (size_t s = 0; s < slot_pu.size() && !improved; ++s) {
      for (size_t r = s + 1; r < slot_pu.size() && !improved; ++r) {
        const size_t a = slot_thread[s], b = slot_thread[r];
        if (a == kNone && b == kNone) continue;
        if (slot_pu[s] == slot_pu[r]) continue;
        double delta = 0;
        if (a != kNone) delta += contribution(a, slot_pu[r], b) - contribution(a, slot_pu[s], b);
        if (b != kNone) delta += contribution(b, slot_pu[s], a) - contribution(b, slot_pu[r], a);
        if (delta < -1e-9) {
          std::swap(slot_thread[s], slot_thread[r]);
          if (a != kNone) thread_slot[a] = r;
          if (b != kNone) thread_slot[b] = s;
          improved = true;
        }
      }
    }
    if (!improved) break;
  }
}

}  // namespace

const char* mapping_algorithm_name(MappingAlgorithm algorithm) {
  switch (algorithm) {
    case MappingAlgorithm::Greedy:
      return "greedy";
    case MappingAlgorithm::Hierarchical:
      return "hierarchical";
    case MappingAlgorithm::Packed:
      return "packed";
    case MappingAlgorithm::Scatter:
      return "scatter";
  }
  return "packed";
}

std::optional<MappingAlgorithm> parse_mapping_algorithm(std::string_view name) {
  for (MappingAlgorithm a : kMappingAlgorithms)
    if (name == mapping_algorithm_name(a)) return a;
  return std::nullopt;
}

double MappingCost::total() const {
  double sum = 0;
  for (double t : traffic) sum += t;
  return sum;
}

MappingCost mapping_cost(const ThreadVolumes& volume, const PuDistances& machine,
                         const ThreadMapping& mapping) {
  MappingCost cost;
  for (size_t a = 0; a < mapping.pu.size(); ++a) {
    for (size_t b = a + 1; b < mapping.pu.size(); ++b) {
      const double v = volume_between(volume, a, b);
      if (v == 0) continue;
      cost.hop_bytes += v * machine.distance(mapping.pu[a], mapping.pu[b]);
      cost.traffic[static_cast<size_t>(machine.level(mapping.pu[a], mapping.pu[b]))] += v;
    }
  }
  return cost;
}

MappingCost expected_unpinned_cost(const ThreadVolumes& volume, const PuDistances& machine) {
  const size_t threads = volume.size();
  const std::vector<size_t> slots = placement_slots(machine, threads);
  const size_t n = slots.size();
  MappingCost cost;
  if (n < 2) return cost;
  // Each pair of threads on a uniformly random pair of distinct slots: the
  // share of those pairs at each level, and their mean distance.
  std::array<double, kSharedLevels> share{};
  double mean_distance = 0;
  const double pairs = static_cast<double>(n * (n - 1));
  for (size_t s = 0; s < n; ++s) {
    for (size_t t = 0; t < n; ++t) {
      if (s == t) continue;
      share[static_cast<size_t>(machine.level(slots[s], slots[t]))] += 1 / pairs;
      mean_distance += machine.distance(slots[s], slots[t]) / pairs;
    }
  }
  for (size_t a = 0; a < threads; ++a) {
    for (size_t b = a + 1; b < threads; ++b) {
      const double v = volume_between(volume, a, b);
      cost.hop_bytes += v * mean_distance;
      for (size_t l = 0; l < kSharedLevels; ++l) cost.traffic[l] += v * share[l];
    }
  }
  return cost;
}

std::vector<size_t> placement_slots(const PuDistances& machine, size_t threads) {
  std::vector<size_t> slots;
  const size_t n = machine.size();
  if (threads <= machine.cores()) {
    std::vector<bool> core_taken(machine.cores(), false);
    for (size_t p = 0; p < n; ++p) {
      if (core_taken[machine.core[p]]) continue;
      core_taken[machine.core[p]] = true;
      slots.push_back(p);
    }
    return slots;
  }
  // Every PU floor(threads / n) times, and the remainder one more each on
  // PUs spread over the machine, so that no PU takes two threads more than
  // another while a domain has room.
  const size_t per_pu = threads <= n ? 1 : threads / n;
  const size_t extra = threads <= n ? 0 : threads % n;
  std::vector<size_t> pus(n);
  std::iota(pus.begin(), pus.end(), 0);
  std::vector<size_t> copies(n, per_pu);
  if (extra > 0) {
    const std::vector<size_t> order = spread_order(pus, pus, machine, SharedLevel::Machine);
    for (size_t i = 0; i < extra; ++i) ++copies[order[i]];
  }
  for (size_t p = 0; p < n; ++p)
    for (size_t k = 0; k < copies[p]; ++k) slots.push_back(p);
  return slots;
}

ThreadMapping map_threads(MappingAlgorithm algorithm, const ThreadVolumes& volume,
                          const PuDistances& machine) {
  ThreadMapping mapping;
  mapping.algorithm = algorithm;
  const size_t threads = volume.size();
  if (threads == 0 || machine.size() == 0) return mapping;
  const std::vector<size_t> slot_pu = placement_slots(machine, threads);
  std::vector<size_t> all_slots(slot_pu.size());
  std::iota(all_slots.begin(), all_slots.end(), 0);
  std::vector<size_t> thread_slot(threads, kNone);
  switch (algorithm) {
    case MappingAlgorithm::Packed:
      std::iota(thread_slot.begin(), thread_slot.end(), 0);
      break;
    case MappingAlgorithm::Scatter: {
      const std::vector<size_t> order =
          spread_order(all_slots, slot_pu, machine, SharedLevel::Machine);
      for (size_t t = 0; t < threads; ++t) thread_slot[t] = order[t];
      break;
    }
    case MappingAlgorithm::Greedy:
      thread_slot = place_greedily(volume, threads, slot_pu, machine);
      break;
    case MappingAlgorithm::Hierarchical: {
      std::vector<size_t> all_threads(threads);
      std::iota(all_threads.begin(), all_threads.end(), 0);
      place_hierarchically(volume, all_threads, all_slots, slot_pu, machine, SharedLevel::Machine,
                           thread_slot);
      refine(volume, machine, slot_pu, thread_slot);
      std::vector<size_t> greedy = place_greedily(volume, threads, slot_pu, machine);
      refine(volume, machine, slot_pu, greedy);
      if (hop_bytes(volume, machine, greedy, slot_pu) <
          hop_bytes(volume, machine, thread_slot, slot_pu) - 1e-9)
        thread_slot = std::move(greedy);
      break;
    }
  }
  for (size_t t = 0; t < threads; ++t) mapping.pu.push_back(slot_pu[thread_slot[t]]);
  return mapping;
}

}  // namespace weft
