#include "diagnosis/event_clustering.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <utility>

namespace weft {
namespace {

// Relative size below which a centered row counts as constant.
constexpr double kConstantTolerance = 1e-12;
// Rows whose centered unit vectors agree after rounding to multiples of
// 1 / kKeyScale are the same vector (correlation 1 up to rounding).
constexpr double kKeyScale = 0x1p30;
// Identical rows are merged up front unless the threshold is above this.
constexpr double kIdenticalCorrelation = 1.0 - 1e-6;
// Single-precision correlations of unit vectors are off by well under this
// (a few 1e-6 for thousands of threads); pairs screened within it of the
// threshold are recomputed in double precision.
constexpr double kScreenMargin = 1e-3;

class UnionFind {
 public:
  explicit UnionFind(size_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0); }

  size_t find(size_t x) {
    while (parent_[x] != x) {
      parent_[x] = parent_[parent_[x]];
      x = parent_[x];
    }
    return x;
  }

  // The smaller root becomes the root of the union.
  void unite(size_t a, size_t b) {
    a = find(a);
    b = find(b);
    if (a == b) return;
    if (b < a) std::swap(a, b);
    parent_[b] = a;
  }

 private:
  std::vector<size_t> parent_;
};

// Groups the indices 0..n-1 by their union-find root; groups ordered by
// their smallest member, members ascending.
std::vector<std::vector<size_t>> groups_of(UnionFind& sets, size_t n) {
  std::vector<std::vector<size_t>> groups;
  std::vector<size_t> group_of_root(n, SIZE_MAX);
  for (size_t i = 0; i < n; ++i) {
    const size_t root = sets.find(i);
    if (group_of_root[root] == SIZE_MAX) {
      group_of_root[root] = groups.size();
      groups.emplace_back();
    }
    groups[group_of_root[root]].push_back(i);
  }
  return groups;
}

// UPGMA state inside one connected component of the candidate graph: the
// current clusters (members are event indices), a cached proximity matrix
// between them (updated with the Lance–Williams formula for average
// linkage) and, per cluster, its most similar other cluster.
class AverageLinkage {
 public:
  // `initial` are the component's clusters after bulk merging.
  AverageLinkage(const Eigen::MatrixXd& unit, std::vector<std::vector<size_t>> initial)
      : k_(static_cast<Eigen::Index>(initial.size())),
        members_(std::move(initial)),
        size_(static_cast<size_t>(k_)),
        active_(static_cast<size_t>(k_), true),
        best_(static_cast<size_t>(k_), -1) {
    const Eigen::Index threads = unit.cols();
    // Average linkage of A and B = (sum of A's rows) . (sum of B's rows) / (|A| |B|).
    Eigen::MatrixXd sums = Eigen::MatrixXd::Zero(k_, threads);
    for (Eigen::Index c = 0; c < k_; ++c) {
      for (size_t member : members_[static_cast<size_t>(c)]) {
        sums.row(c) += unit.row(static_cast<Eigen::Index>(member));
      }
      size_[static_cast<size_t>(c)] = static_cast<double>(members_[static_cast<size_t>(c)].size());
    }
    proximity_ = sums * sums.transpose();
    for (Eigen::Index a = 0; a < k_; ++a) {
      for (Eigen::Index b = 0; b < k_; ++b) {
        proximity_(a, b) /= size_[static_cast<size_t>(a)] * size_[static_cast<size_t>(b)];
      }
    }
    for (Eigen::Index a = 0; a < k_; ++a) refresh_best(a);
  }

  // Merges the most similar pair while its linkage is >= threshold.
  void merge_while_linked(double threshold) {
    while (true) {
      const auto [a, value] = most_linked();
      if (a < 0 || !(value >= threshold)) break;
      merge_with_best(a);
    }
  }

  // The clusters left, in index order.
  std::vector<std::vector<size_t>> take_clusters() && {
    std::vector<std::vector<size_t>> clusters;
    for (Eigen::Index c = 0; c < k_; ++c) {
      if (active_[static_cast<size_t>(c)])
        clusters.push_back(std::move(members_[static_cast<size_t>(c)]));
    }
    return clusters;
  }

 private:
  // Most similar active other cluster of a (the smallest index on ties).
  void refresh_best(Eigen::Index a) {
    Eigen::Index arg = -1;
    double value = 0;
    for (Eigen::Index b = 0; b < k_; ++b) {
      if (b == a || !active_[static_cast<size_t>(b)]) continue;
      if (arg < 0 || proximity_(a, b) > value) {
        arg = b;
        value = proximity_(a, b);
      }
    }
    best_[static_cast<size_t>(a)] = arg;
  }

  // The cluster of the pair with the largest linkage (the smallest first
  // index on ties) and that linkage; -1 when no pair is left.
  std::pair<Eigen::Index, double> most_linked() const {
    Eigen::Index a = -1;
    double value = 0;
    for (Eigen::Index c = 0; c < k_; ++c) {
      const Eigen::Index partner = best_[static_cast<size_t>(c)];
      if (!active_[static_cast<size_t>(c)] || partner < 0) continue;
      if (a < 0 || proximity_(c, partner) > value) {
        a = c;
        value = proximity_(c, partner);
      }
    }
    return {a, value};
  }

  // Merges `first` and its most similar cluster into the smaller index of the two.
  void merge_with_best(Eigen::Index first) {
    Eigen::Index a = first;
    Eigen::Index b = best_[static_cast<size_t>(a)];
    if (b < a) std::swap(a, b);

    const double size_a = size_[static_cast<size_t>(a)];
    const double size_b = size_[static_cast<size_t>(b)];
    active_[static_cast<size_t>(b)] = false;
    for (Eigen::Index c = 0; c < k_; ++c) {
      if (c == a || !active_[static_cast<size_t>(c)]) continue;
      const double merged =
          (size_a * proximity_(a, c) + size_b * proximity_(b, c)) / (size_a + size_b);
      proximity_(a, c) = merged;
      proximity_(c, a) = merged;
    }
    size_[static_cast<size_t>(a)] = size_a + size_b;
    auto& into = members_[static_cast<size_t>(a)];
    auto& from = members_[static_cast<size_t>(b)];
    into.insert(into.end(), from.begin(), from.end());
    from.clear();
    update_best_after_merge(a, b);
  }

  // After b was merged into a: a's best is recomputed, and so is the best of
  // every cluster whose best was a or b; the others may now prefer a.
  void update_best_after_merge(Eigen::Index a, Eigen::Index b) {
    refresh_best(a);
    for (Eigen::Index c = 0; c < k_; ++c) {
      if (c == a || !active_[static_cast<size_t>(c)]) continue;
      const Eigen::Index partner = best_[static_cast<size_t>(c)];
      if (partner == a || partner == b) {
        refresh_best(c);
      } else if (proximity_(c, a) > proximity_(c, partner) ||
                 (proximity_(c, a) == proximity_(c, partner) && a < partner)) {
        best_[static_cast<size_t>(c)] = a;
      }
    }
  }

  Eigen::Index k_;
  std::vector<std::vector<size_t>> members_;
  std::vector<double> size_;
  std::vector<bool> active_;
  std::vector<Eigen::Index> best_;
  Eigen::MatrixXd proximity_;
};

// Exact UPGMA inside one connected component of the candidate graph.
// `initial` are the component's clusters after bulk merging (members are
// event indices). Clusters are merged while the best average linkage is >=
// threshold.
std::vector<std::vector<size_t>> upgma_component(const Eigen::MatrixXd& unit,
                                                 std::vector<std::vector<size_t>> initial,
                                                 double threshold) {
  AverageLinkage linkage(unit, std::move(initial));
  linkage.merge_while_linked(threshold);
  return std::move(linkage).take_clusters();
}

// Merges the rows that are identical once centered and scaled (to ~1e-9)
// into `linked` and `bulk_sets`, unless the threshold is above a
// correlation of 1 up to rounding; returns one row per distinct non-constant
// vector, ascending.
std::vector<size_t> merge_identical_rows(const Eigen::MatrixXd& unit, double threshold,
                                         UnionFind& linked, UnionFind& bulk_sets) {
  const size_t n = static_cast<size_t>(unit.rows());
  std::vector<size_t> order;
  for (size_t i = 0; i < n; ++i) {
    if (!unit.row(static_cast<Eigen::Index>(i)).isZero(0.0)) order.push_back(i);
  }
  const Eigen::Index threads = unit.cols();
  std::vector<int64_t> keys(n * static_cast<size_t>(threads));
  for (size_t i : order) {
    for (Eigen::Index t = 0; t < threads; ++t) {
      keys[i * static_cast<size_t>(threads) + static_cast<size_t>(t)] =
          std::llround(unit(static_cast<Eigen::Index>(i), t) * kKeyScale);
    }
  }
  auto key = [&](size_t i) {
    return keys.begin() + static_cast<std::ptrdiff_t>(i * static_cast<size_t>(threads));
  };
  auto key_less = [&](size_t a, size_t b) {
    if (std::equal(key(a), key(a) + threads, key(b))) return a < b;
    return std::lexicographical_compare(key(a), key(a) + threads, key(b), key(b) + threads);
  };
  std::sort(order.begin(), order.end(), key_less);
  const bool merge_identical = threshold <= kIdenticalCorrelation;
  std::vector<size_t> distinct;
  for (size_t k = 0; k < order.size(); ++k) {
    const bool same = k > 0 && merge_identical &&
                      std::equal(key(order[k]), key(order[k]) + threads, key(order[k - 1]));
    if (same) {
      linked.unite(order[k - 1], order[k]);
      bulk_sets.unite(order[k - 1], order[k]);
    } else {
      distinct.push_back(order[k]);
    }
  }
  std::sort(distinct.begin(), distinct.end());
  return distinct;
}

// Candidate pairs among the `distinct` rows: correlation >= threshold. Only
// their connected components are kept (`linked`); pairs >= bulk are merged
// right away. The average linkage of two clusters is a mean of member
// correlations, so it can reach the threshold only if some member pair does:
// every merge stays inside a component, and components can be clustered
// independently. The products are screened in single precision, `block` x
// `block` at a time; pairs near or above the threshold are decided in double
// precision.
void link_correlated_pairs(const Eigen::MatrixXd& unit, const std::vector<size_t>& distinct,
                           double threshold, double bulk, Eigen::Index block, UnionFind& linked,
                           UnionFind& bulk_sets) {
  const Eigen::Index m = static_cast<Eigen::Index>(distinct.size());
  Eigen::MatrixXd exact(m, unit.cols());
  for (Eigen::Index i = 0; i < m; ++i)
    exact.row(i) = unit.row(static_cast<Eigen::Index>(distinct[static_cast<size_t>(i)]));
  const Eigen::MatrixXf screen = exact.cast<float>();
  const float screen_threshold = static_cast<float>(threshold - kScreenMargin);
  Eigen::MatrixXf tile;
  for (Eigen::Index bi = 0; bi < m; bi += block) {
    const Eigen::Index hi = std::min(block, m - bi);
    for (Eigen::Index bj = bi; bj < m; bj += block) {
      const Eigen::Index hj = std::min(block, m - bj);
      tile.noalias() = screen.middleRows(bi, hi) * screen.middleRows(bj, hj).transpose();
      for (Eigen::Index j = 0; j < hj; ++j) {
        const Eigen::Index i_end = bi == bj ? j : hi;  // diagonal block: i < j only
        for (Eigen::Index i = 0; i < i_end; ++i) {
          if (!(tile(i, j) >= screen_threshold)) continue;
          const double r = exact.row(bi + i).dot(exact.row(bj + j));
          if (r >= threshold) {
            const size_t a = distinct[static_cast<size_t>(bi + i)];
            const size_t b = distinct[static_cast<size_t>(bj + j)];
            linked.unite(a, b);
            if (r >= bulk) bulk_sets.unite(a, b);
          }
        }
      }
    }
  }
}

// UPGMA on the bulk groups of each component of `linked` (a lone group is
// a cluster as is); clusters sorted, ordered by their smallest member.
std::vector<std::vector<size_t>> cluster_components(const Eigen::MatrixXd& unit, UnionFind& linked,
                                                    UnionFind& bulk_sets, double threshold) {
  const size_t n = static_cast<size_t>(unit.rows());
  std::vector<std::vector<size_t>> clusters;
  const auto bulk_groups = groups_of(bulk_sets, n);
  // Bulk groups per component, in the order of their smallest member.
  std::vector<std::vector<std::vector<size_t>>> per_component(n);
  for (const auto& group : bulk_groups) {
    per_component[linked.find(group.front())].push_back(group);
  }
  for (auto& initial : per_component) {
    if (initial.empty()) continue;
    if (initial.size() == 1) {
      clusters.push_back(std::move(initial.front()));
      continue;
    }
    for (auto& cluster : upgma_component(unit, std::move(initial), threshold)) {
      clusters.push_back(std::move(cluster));
    }
  }
  for (auto& cluster : clusters) std::sort(cluster.begin(), cluster.end());
  std::sort(clusters.begin(), clusters.end(),
            [](const auto& x, const auto& y) { return x.front() < y.front(); });
  return clusters;
}

}  // namespace

Eigen::MatrixXd centered_unit_rows(const Eigen::MatrixXd& rows) {
  Eigen::MatrixXd unit = rows.colwise() - rows.rowwise().mean();
  for (Eigen::Index i = 0; i < unit.rows(); ++i) {
    const double norm = unit.row(i).norm();
    const double scale = rows.row(i).norm();
    if (!(norm > kConstantTolerance * scale) || norm == 0.0) {
      unit.row(i).setZero();
    } else {
      unit.row(i) /= norm;
    }
  }
  return unit;
}

std::vector<std::vector<size_t>> cluster_events(const Eigen::MatrixXd& rows, double threshold,
                                                double bulk_threshold, Eigen::Index block_rows) {
  const Eigen::Index block = std::max<Eigen::Index>(block_rows, 1);
  const size_t n = static_cast<size_t>(rows.rows());
  const double bulk = std::max(bulk_threshold, threshold);
  const Eigen::MatrixXd unit = centered_unit_rows(rows);

  UnionFind linked(n);     // connected components of the candidate pairs
  UnionFind bulk_sets(n);  // bulk merges
  // Identical rows correlate 1: they are merged first by bulk merging and by
  // UPGMA alike, so they are merged here and only one row per distinct
  // vector enters the pair search.
  const std::vector<size_t> distinct = merge_identical_rows(unit, threshold, linked, bulk_sets);
  link_correlated_pairs(unit, distinct, threshold, bulk, block, linked, bulk_sets);
  return cluster_components(unit, linked, bulk_sets, threshold);
}

}  // namespace weft
