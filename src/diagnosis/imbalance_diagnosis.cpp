#include "diagnosis/imbalance_diagnosis.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>

#include "diagnosis/event_clustering.h"
#include "diagnosis/f_distribution.h"
#include "diagnosis/hardware_events.h"
#include "static/control_flow_graph.h"

namespace weft {
namespace {

using Eigen::Index;
using Eigen::VectorXd;

// A centered vector this small against the raw values is a constant.
constexpr double kConstantTolerance = 1e-12;
// A candidate predictor keeping less than this squared norm (of 1) once the
// selected ones are projected out is collinear with them.
constexpr double kCollinear = 1e-10;
// A residual sum of squares this small (against a total of 1) is a perfect fit.
constexpr double kPerfectFit = 1e-10;
// Gains of forward-selection candidates closer than this are ties.
constexpr double kTie = 1e-12;

// Throws unless `values` has one finite value per thread (or is empty when
// allowed); describe() names the vector, built only for the message.
template <typename Describe>
void check_counts(const std::vector<double>& values, size_t threads, bool allow_empty,
                  Describe describe) {
  if (values.empty() && allow_empty) return;
  if (values.size() != threads) {
    throw std::invalid_argument(describe() + ": " + std::to_string(values.size()) + " values for " +
                                std::to_string(threads) + " threads");
  }
  for (double v : values) {
    if (!std::isfinite(v)) throw std::invalid_argument(describe() + ": non-finite value");
  }
}

// Centered and scaled to norm 1; all zeros when (near) constant. Scaling by
// sqrt(n) gives the z-score, which the regression does not need: standardized
// coefficients are the same for both scalings.
VectorXd unit_centered(const VectorXd& values) {
  VectorXd centered = values.array() - values.mean();
  const double norm = centered.norm();
  if (!(norm > kConstantTolerance * values.norm()) || norm == 0.0)
    return VectorXd::Zero(values.size());
  return centered / norm;
}

bool is_zero(const VectorXd& v) { return !(v.squaredNorm() > 0.0); }

// One event of the clustering: a control-flow edge or a hardware event.
struct Event {
  bool control_flow = false;
  size_t index = 0;  // into Cfg::edges or into the hardware residuals
};

// The instance's control-flow graph, built from all its edges.
struct Cfg {
  struct Edge {
    uint64_t from = 0;
    uint64_t to = 0;
    uint32_t from_node = 0;
    uint32_t to_node = 0;
    VectorXd counts;
    double time_correlation = 0;  // 0 when the counts are constant
    bool back = false;
  };
  std::vector<uint64_t> pcs;  // node -> pc, ascending; node 0 is pc 0 (the entry)
  std::vector<Edge> edges;    // ordered by (from, to)
  std::vector<std::vector<size_t>> in_edges;
  std::vector<std::vector<size_t>> out_edges;  // ascending `to`
};

Cfg build_cfg(const SectionInstanceData& data, const VectorXd& time_unit) {
  const Index n = static_cast<Index>(data.threads);
  std::map<std::pair<uint64_t, uint64_t>, VectorXd> merged;
  for (const auto& edge : data.edges) {
    auto [it, inserted] = merged.try_emplace({edge.from, edge.to});
    if (inserted) it->second = VectorXd::Zero(n);
    for (size_t t = 0; t < edge.counts.size(); ++t)
      it->second[static_cast<Index>(t)] += edge.counts[t];
  }

  Cfg cfg;
  cfg.pcs.push_back(0);
  for (const auto& [key, counts] : merged) {
    cfg.pcs.push_back(key.first);
    cfg.pcs.push_back(key.second);
  }
  std::sort(cfg.pcs.begin(), cfg.pcs.end());
  cfg.pcs.erase(std::unique(cfg.pcs.begin(), cfg.pcs.end()), cfg.pcs.end());
  auto node_of = [&](uint64_t pc) {
    return static_cast<uint32_t>(std::lower_bound(cfg.pcs.begin(), cfg.pcs.end(), pc) -
                                 cfg.pcs.begin());
  };

  Successors successors(cfg.pcs.size());
  cfg.in_edges.resize(cfg.pcs.size());
  cfg.out_edges.resize(cfg.pcs.size());
  for (auto& [key, counts] : merged) {
    Cfg::Edge edge;
    edge.from = key.first;
    edge.to = key.second;
    edge.from_node = node_of(key.first);
    edge.to_node = node_of(key.second);
    edge.time_correlation = unit_centered(counts).dot(time_unit);
    edge.counts = std::move(counts);
    successors[edge.from_node].push_back(edge.to_node);
    cfg.in_edges[edge.to_node].push_back(cfg.edges.size());
    cfg.out_edges[edge.from_node].push_back(cfg.edges.size());
    cfg.edges.push_back(std::move(edge));
  }
  // Back edges u -> h: h dominates u. Dominance is read off a depth-first
  // numbering of the dominator tree (h dominates u iff u's interval lies in
  // h's), in constant time per edge whatever the depth of the tree.
  const std::vector<int32_t> idom = immediate_dominators(successors, 0);
  const size_t nodes = cfg.pcs.size();
  std::vector<std::vector<uint32_t>> children(nodes);
  for (size_t v = 1; v < nodes; ++v) {
    if (idom[v] != kNoDominator)
      children[static_cast<size_t>(idom[v])].push_back(static_cast<uint32_t>(v));
  }
  std::vector<uint32_t> enter(nodes, 0), leave(nodes, 0);
  uint32_t clock = 0;
  std::vector<std::pair<uint32_t, size_t>> stack = {{0, 0}};  // node, next child
  enter[0] = clock++;
  while (!stack.empty()) {
    auto& [node, next] = stack.back();
    if (next < children[node].size()) {
      const uint32_t child = children[node][next++];
      enter[child] = clock++;
      stack.emplace_back(child, 0);
    } else {
      leave[node] = clock++;
      stack.pop_back();
    }
  }
  for (auto& edge : cfg.edges) {
    const uint32_t h = edge.to_node, u = edge.from_node;
    edge.back = idom[h] != kNoDominator && idom[u] != kNoDominator && enter[h] <= enter[u] &&
                leave[u] <= leave[h];
  }
  return cfg;
}

struct NodeScore {
  double score = 0;
  uint64_t edge_to = 0;
  double spread = 0;  // of the best out-edge's counts over threads (max - min)
};

// LIME's leader score: the best correlation with time among the node's
// out-edges minus the best among its in-edges, back edges left out of the
// in-edges (a loop header's back edge carries the loop's own correlation);
// 0 when there is no such in-edge. edge_to: the best out-edge's target.
NodeScore node_score(const Cfg& cfg, uint32_t node) {
  NodeScore result;
  double best_out = 0;
  bool any_out = false;
  for (size_t e : cfg.out_edges[node]) {
    const auto& edge = cfg.edges[e];
    if (!any_out || edge.time_correlation > best_out) {
      best_out = edge.time_correlation;
      result.edge_to = edge.to;
      result.spread = edge.counts.size() ? edge.counts.maxCoeff() - edge.counts.minCoeff() : 0;
      any_out = true;
    }
  }
  double best_in = 0;
  bool any_in = false;
  for (size_t e : cfg.in_edges[node]) {
    const auto& edge = cfg.edges[e];
    if (edge.back) continue;
    if (!any_in || edge.time_correlation > best_in) {
      best_in = edge.time_correlation;
      any_in = true;
    }
  }
  result.score = best_out - best_in;
  return result;
}

// The leader nodes of a control-flow cluster: nodes of the cluster (the
// sources of its edges) whose in-edges, back edges excepted, all come from
// outside the cluster. A cluster without one (a cycle with no entry) gets
// its best-scoring node.
std::vector<uint32_t> leaders(const Cfg& cfg, const std::vector<size_t>& cluster_edges) {
  std::vector<uint32_t> nodes;
  for (size_t e : cluster_edges) nodes.push_back(cfg.edges[e].from_node);
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  auto in_cluster = [&](uint32_t node) {
    return std::binary_search(nodes.begin(), nodes.end(), node);
  };

  std::vector<uint32_t> result;
  for (uint32_t node : nodes) {
    const bool entered_from_outside = std::none_of(
        cfg.in_edges[node].begin(), cfg.in_edges[node].end(),
        [&](size_t e) { return !cfg.edges[e].back && in_cluster(cfg.edges[e].from_node); });
    if (entered_from_outside) result.push_back(node);
  }
  if (result.empty() && !nodes.empty()) {
    uint32_t best = nodes.front();
    double best_score = node_score(cfg, best).score;
    for (uint32_t node : nodes) {
      const double score = node_score(cfg, node).score;
      if (score > best_score) {
        best = node;
        best_score = score;
      }
    }
    result.push_back(best);
  }
  return result;
}

struct Regression {
  std::vector<size_t> selected;  // cluster indices, in the order of selection
  std::vector<double> beta;      // standardized coefficient per selected cluster
  // Per selected cluster: the fraction of the variance of time it explained
  // when it entered the model (its sequential R^2 gain; they add up to the
  // model's R^2, so each is in [0, 1]), and whether it grows with time (its
  // correlation with time is positive).
  std::vector<double> gain;
  std::vector<bool> grows_with_time;
  double r_squared = 0;
};

// Forward selection of the predictors (columns of `x`, each centered with
// norm 1, or all zeros) explaining y (centered, norm 1), with a partial
// F-test per step; standardized coefficients of the final model.
Regression forward_selection(const Eigen::MatrixXd& x, const VectorXd& y, double significance) {
  const Index n = y.size();
  Regression result;
  // Every vector is centered, hence orthogonal to the intercept column, so
  // the intercept needs no projection. `candidates` holds each unused
  // predictor minus its projection onto the selected ones (kept up to date
  // one Gram–Schmidt step per selection), `residual` the part of y the
  // model does not explain.
  Eigen::MatrixXd candidates = x;
  std::vector<bool> used(static_cast<size_t>(x.cols()), false);
  for (Index c = 0; c < x.cols(); ++c) used[static_cast<size_t>(c)] = is_zero(x.col(c));
  const Eigen::RowVectorXd alignment = y.transpose() * x;
  VectorXd residual = y;
  double rss = residual.squaredNorm();
  while (true) {
    const Index k = static_cast<Index>(result.selected.size()) + 1;  // predictors after adding
    const Index dof = n - k - 1;
    if (dof <= 0) break;
    const Eigen::RowVectorXd along = residual.transpose() * candidates;
    const Eigen::RowVectorXd norm2 = candidates.colwise().squaredNorm();
    Index best = -1;
    double best_gain = 0;
    for (Index c = 0; c < x.cols(); ++c) {
      if (used[static_cast<size_t>(c)] || !(norm2[c] > kCollinear)) continue;
      const double gain = along[c] * along[c] / norm2[c];
      // Ties (e.g. a branch's taken and not-taken counts, perfectly
      // anti-correlated) go to the predictor that grows with time.
      const bool better = best < 0 || gain > best_gain + kTie ||
                          (gain >= best_gain - kTie && alignment[c] > alignment[best] + kTie);
      if (better) {
        best = c;
        best_gain = gain;
      }
    }
    if (best < 0) break;
    const double rss_new = std::max(0.0, rss - best_gain);
    const bool perfect = rss_new <= kPerfectFit;
    if (!perfect) {
      const double f = best_gain / (rss_new / static_cast<double>(dof));
      if (!(f_distribution_sf(f, 1.0, static_cast<double>(dof)) < significance)) break;
    }
    used[static_cast<size_t>(best)] = true;
    result.selected.push_back(static_cast<size_t>(best));
    // y has norm 1: the RSS it removes is its share of the variance.
    result.gain.push_back(std::clamp(best_gain, 0.0, 1.0));
    result.grows_with_time.push_back(alignment[best] > kTie);
    if (perfect) break;
    const VectorXd direction = candidates.col(best) / std::sqrt(norm2[best]);
    residual -= residual.dot(direction) * direction;
    rss = residual.squaredNorm();
    const Eigen::RowVectorXd overlap = direction.transpose() * candidates;
    candidates.noalias() -= direction * overlap;
  }
  if (result.selected.empty()) return result;

  // Final least-squares fit with an intercept on the standardized variables.
  const Index k = static_cast<Index>(result.selected.size());
  Eigen::MatrixXd design(n, k + 1);
  design.col(0).setOnes();
  for (Index j = 0; j < k; ++j)
    design.col(j + 1) = x.col(static_cast<Index>(result.selected[static_cast<size_t>(j)]));
  const VectorXd coefficients = design.colPivHouseholderQr().solve(y);
  const double fit_rss = (y - design * coefficients).squaredNorm();
  const double total = y.squaredNorm();
  result.r_squared = std::clamp(1.0 - fit_rss / total, 0.0, 1.0);
  for (Index j = 0; j < k; ++j) {
    const double b = coefficients[j + 1];
    result.beta.push_back(std::isfinite(b) ? b : 0.0);
  }
  return result;
}

bool cause_before(const Cause& a, const Cause& b) {
  if (a.score != b.score) return a.score > b.score;
  return std::tie(a.pc, a.kind, a.level, a.edge_to) < std::tie(b.pc, b.kind, b.level, b.edge_to);
}

// Throws unless the time and every edge's counts have one finite value per
// thread (an edge's counts may be empty).
void check_instance(const SectionInstanceData& data) {
  check_counts(data.time, data.threads, false, [] { return std::string("time"); });
  for (const auto& edge : data.edges) {
    check_counts(edge.counts, data.threads, true, [&] {
      return "edge " + std::to_string(edge.from) + "->" + std::to_string(edge.to);
    });
  }
}

// The events to cluster: the non-constant edges, then the hardware residuals.
// Edges from the entry (node 0) are left out: they say where a thread began
// or resumed counting (after its own release of a barrier, or after a
// wait), which no branch of the section decides; the straggler that
// releases a spin barrier resumes elsewhere than the waiters, and that edge
// would rival its cause.
std::vector<Event> instance_events(const Cfg& cfg,
                                   const std::vector<HardwareEventResidual>& hardware) {
  std::vector<Event> events;
  for (size_t e = 0; e < cfg.edges.size(); ++e) {
    if (cfg.edges[e].from_node != 0 && !is_zero(unit_centered(cfg.edges[e].counts)))
      events.push_back({true, e});
  }
  for (size_t h = 0; h < hardware.size(); ++h) events.push_back({false, h});
  return events;
}

// One row per event: its per-thread counts (or residual).
Eigen::MatrixXd event_rows(const std::vector<Event>& events, const Cfg& cfg,
                           const std::vector<HardwareEventResidual>& hardware, Index threads) {
  Eigen::MatrixXd rows(static_cast<Index>(events.size()), threads);
  for (size_t i = 0; i < events.size(); ++i) {
    const Index row = static_cast<Index>(i);
    if (events[i].control_flow) {
      rows.row(row) = cfg.edges[events[i].index].counts.transpose();
    } else {
      const auto& residual = hardware[events[i].index].residual;
      rows.row(row) = Eigen::Map<const Eigen::RowVectorXd>(residual.data(), threads);
    }
  }
  return rows;
}

// One column per cluster: the mean z-score of its members, standardized again.
Eigen::MatrixXd cluster_representatives(const Eigen::MatrixXd& rows,
                                        const std::vector<std::vector<size_t>>& clusters) {
  const Index n = rows.cols();
  const Eigen::MatrixXd unit = centered_unit_rows(rows);
  Eigen::MatrixXd representatives(n, static_cast<Index>(clusters.size()));
  for (size_t c = 0; c < clusters.size(); ++c) {
    VectorXd sum = VectorXd::Zero(n);
    for (size_t member : clusters[c]) sum += unit.row(static_cast<Index>(member)).transpose();
    representatives.col(static_cast<Index>(c)) = unit_centered(sum);
  }
  return representatives;
}

// The causes found so far: one per (kind, pc, level), the best-scoring one
// when several clusters give the same.
class CauseSet {
 public:
  void offer(const Cause& cause) {
    auto [it, inserted] = causes_.try_emplace({cause.kind, cause.pc, cause.level}, cause);
    if (!inserted && cause_before(cause, it->second)) it->second = cause;
  }

  // Best first.
  std::vector<Cause> sorted() const {
    std::vector<Cause> result;
    for (const auto& [key, cause] : causes_) result.push_back(cause);
    std::sort(result.begin(), result.end(), cause_before);
    return result;
  }

 private:
  std::map<std::tuple<CauseKind, uint64_t, HardwareLevel>, Cause> causes_;
};

// A selected control-flow cluster's causes: its leader nodes whose leader
// score is positive (the correlation with time rises there), sharing the
// cluster's explained variance `gain` in proportion to their leader score
// times the spread over threads of the branch they take. Correlation alone
// ignores size: with a few threads, a spin test that runs once more in the
// slow thread correlates with time as well as the branch that gives it
// hundreds more iterations of work, and would take half the score.
void offer_control_flow_causes(const Cfg& cfg, const std::vector<size_t>& cluster_edges,
                               double gain, double beta, CauseSet& causes) {
  std::vector<std::pair<uint32_t, NodeScore>> scored;
  double total = 0;
  auto weight = [](const NodeScore& leader) { return leader.score * leader.spread; };
  for (uint32_t node : leaders(cfg, cluster_edges)) {
    const NodeScore leader = node_score(cfg, node);
    if (!(leader.score > 0) || !(leader.spread > 0)) continue;
    scored.emplace_back(node, leader);
    total += weight(leader);
  }
  for (const auto& [node, leader] : scored) {
    Cause cause;
    cause.kind = CauseKind::ControlFlow;
    cause.pc = cfg.pcs[node];
    cause.level = HardwareLevel::Executions;
    cause.share = weight(leader) / total;
    cause.score = gain * cause.share;
    cause.beta = beta;
    cause.leader_score = leader.score;
    cause.edge_to = leader.edge_to;
    causes.offer(cause);
  }
}

// A selected hardware cluster's causes: each member, with its share of the
// cluster's spread over threads.
void offer_cache_miss_causes(const Eigen::MatrixXd& rows, const std::vector<Event>& events,
                             const std::vector<HardwareEventResidual>& hardware,
                             const std::vector<size_t>& members, double gain, double beta,
                             CauseSet& causes) {
  auto spread = [&](size_t member) {
    const Eigen::RowVectorXd row = rows.row(static_cast<Index>(member));
    return (row.array() - row.mean()).matrix().norm();
  };
  double total_spread = 0;
  for (size_t member : members) total_spread += spread(member);
  for (size_t member : members) {
    const auto& event = hardware[events[member].index];
    Cause cause;
    cause.kind = CauseKind::CacheMiss;
    cause.pc = event.pc;
    cause.level = event.level;
    cause.share = total_spread > 0 ? spread(member) / total_spread
                                   : 1.0 / static_cast<double>(members.size());
    cause.score = gain * cause.share;
    cause.beta = beta;
    causes.offer(cause);
  }
}

}  // namespace

InstanceDiagnosis diagnose_instance(const SectionInstanceData& data,
                                    const DiagnosisOptions& options) {
  check_instance(data);
  const auto hardware =
      hardware_event_residuals(data.instructions, data.threads, options.explained_fraction);

  InstanceDiagnosis diagnosis;
  if (data.threads < 2) return diagnosis;
  const Index n = static_cast<Index>(data.threads);
  const VectorXd time = Eigen::Map<const VectorXd>(data.time.data(), n);
  const VectorXd time_unit = unit_centered(time);
  if (is_zero(time_unit)) return diagnosis;
  diagnosis.analyzable = true;

  // 1. Events.
  const Cfg cfg = build_cfg(data, time_unit);
  const std::vector<Event> events = instance_events(cfg, hardware);
  diagnosis.events = events.size();
  if (events.empty()) return diagnosis;
  const Eigen::MatrixXd rows = event_rows(events, cfg, hardware, n);

  // 2. Clustering.
  const auto clusters = cluster_events(rows, options.cluster_threshold, options.bulk_threshold);
  diagnosis.clusters = clusters.size();

  // 3. Representatives.
  const Eigen::MatrixXd representatives = cluster_representatives(rows, clusters);

  // 5. Regression.
  const Regression regression = forward_selection(representatives, time_unit, options.significance);
  diagnosis.selected_clusters = regression.selected.size();
  diagnosis.r_squared = regression.r_squared;

  // 4 and 6. Leaders of the selected control-flow clusters, and the causes.
  CauseSet causes;
  for (size_t s = 0; s < regression.selected.size(); ++s) {
    // A cluster that falls as time grows (what the fast threads do more)
    // explains variance but is no cause of the slow threads' extra time.
    if (!regression.grows_with_time[s]) continue;
    const auto& members = clusters[regression.selected[s]];
    const double gain = regression.gain[s];
    const double beta = regression.beta[s];
    std::vector<size_t> cluster_edges;
    for (size_t member : members) {
      if (events[member].control_flow) cluster_edges.push_back(events[member].index);
    }
    if (!cluster_edges.empty()) {
      offer_control_flow_causes(cfg, cluster_edges, gain, beta, causes);
    } else {
      offer_cache_miss_causes(rows, events, hardware, members, gain, beta, causes);
    }
  }
  diagnosis.causes = causes.sorted();
  return diagnosis;
}

std::vector<Cause> combine_instances(
    const std::vector<std::pair<double, InstanceDiagnosis>>& instances) {
  struct Sum {
    Cause cause;
    double heaviest = -1;  // weight of the instance edge_to was taken from
  };
  std::map<std::tuple<CauseKind, uint64_t, HardwareLevel>, Sum> sums;
  double total = 0;
  for (const auto& [raw_weight, diagnosis] : instances) {
    const double weight = std::isfinite(raw_weight) && raw_weight > 0 ? raw_weight : 0.0;
    total += weight;
    for (const auto& cause : diagnosis.causes) {
      auto [it, inserted] = sums.try_emplace({cause.kind, cause.pc, cause.level});
      Sum& sum = it->second;
      if (inserted) {
        sum.cause = cause;
        sum.cause.score = sum.cause.beta = sum.cause.leader_score = sum.cause.share = 0;
      }
      sum.cause.score += weight * cause.score;
      sum.cause.share += weight * cause.share;
      sum.cause.beta += weight * cause.beta;
      sum.cause.leader_score += weight * cause.leader_score;
      if (weight > sum.heaviest) {
        sum.heaviest = weight;
        sum.cause.edge_to = cause.edge_to;
      }
    }
  }
  std::vector<Cause> result;
  if (!(total > 0) || !std::isfinite(total)) return result;
  for (auto& [key, sum] : sums) {
    sum.cause.score /= total;
    sum.cause.beta /= total;
    sum.cause.leader_score /= total;
    sum.cause.share /= total;
    result.push_back(sum.cause);
  }
  std::sort(result.begin(), result.end(), cause_before);
  return result;
}

}  // namespace weft
