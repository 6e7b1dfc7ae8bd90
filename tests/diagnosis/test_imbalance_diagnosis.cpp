// Tests of src/diagnosis: the F distribution, the Gram–Schmidt step for
// hardware events, the clustering (against a naive UPGMA), leader nodes,
// the regression and the aggregation over instances.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <set>

#include "diagnosis/event_clustering.h"
#include "diagnosis/f_distribution.h"
#include "diagnosis/hardware_events.h"
#include "diagnosis/imbalance_diagnosis.h"

namespace weft {
namespace {

using Partition = std::vector<std::vector<size_t>>;

// ---------------------------------------------------------------- F test

TEST(FDistribution, TabulatedCriticalValues) {
  // 5% and 1% critical values from standard F tables.
  EXPECT_NEAR(f_distribution_sf(4.96, 1, 10), 0.05, 1e-3);
  EXPECT_NEAR(f_distribution_sf(3.49, 2, 20), 0.05, 1e-3);
  EXPECT_NEAR(f_distribution_sf(161.45, 1, 1), 0.05, 1e-3);
  EXPECT_NEAR(f_distribution_sf(3.33, 5, 10), 0.05, 1e-3);
  EXPECT_NEAR(f_distribution_sf(2.16, 10, 30), 0.05, 1e-3);
  EXPECT_NEAR(f_distribution_sf(10.04, 1, 10), 0.01, 1e-3);
  EXPECT_NEAR(f_distribution_sf(5.99, 1, 6), 0.05, 1e-3);
}

TEST(FDistribution, ClosedForms) {
  // F(2, d2): P(X > f) = (1 + 2 f / d2)^(-d2 / 2).
  for (double d2 : {1.0, 3.0, 7.0, 40.0}) {
    for (double f : {0.1, 1.0, 2.5, 30.0}) {
      EXPECT_NEAR(f_distribution_sf(f, 2, d2), std::pow(1 + 2 * f / d2, -d2 / 2), 1e-12)
          << "d2=" << d2 << " f=" << f;
    }
  }
  // F(d1, 2): P(X <= f) = (d1 f / (d1 f + 2))^(d1 / 2).
  for (double d1 : {1.0, 4.0, 9.0}) {
    for (double f : {0.3, 1.0, 12.0}) {
      EXPECT_NEAR(f_distribution_sf(f, d1, 2), 1 - std::pow(d1 * f / (d1 * f + 2), d1 / 2), 1e-12);
    }
  }
  // The incomplete beta values I_0.5(3.5, 3.5) = 0.5 and I_0.3(1, 1) = 0.3,
  // through P(X > f) = I_{d2 / (d2 + d1 f)}(d2 / 2, d1 / 2).
  EXPECT_NEAR(f_distribution_sf(1, 7, 7), 0.5, 1e-12);
  EXPECT_NEAR(f_distribution_sf(7.0 / 3.0, 2, 2), 0.3, 1e-12);
}

TEST(FDistribution, Limits) {
  EXPECT_EQ(f_distribution_sf(0, 1, 10), 1.0);
  EXPECT_EQ(f_distribution_sf(-1, 1, 10), 1.0);
  EXPECT_EQ(f_distribution_sf(INFINITY, 1, 10), 0.0);
  EXPECT_EQ(f_distribution_sf(NAN, 1, 10), 1.0);
  EXPECT_EQ(f_distribution_sf(3, 0, 10), 1.0);
  EXPECT_EQ(f_distribution_sf(3, 1, -2), 1.0);
  EXPECT_EQ(f_distribution_sf(3, NAN, 10), 1.0);
  EXPECT_EQ(f_distribution_sf(3, 1, INFINITY), 1.0);
  EXPECT_LT(f_distribution_sf(1e6, 1, 6), 1e-12);
}

// ---------------------------------------------------------- Gram–Schmidt

InstructionEvents instruction(uint64_t pc, std::vector<double> executions,
                              std::vector<double> l1 = {}, std::vector<double> l2 = {},
                              std::vector<double> llc = {}) {
  InstructionEvents events;
  events.pc = pc;
  events.counts = {std::move(executions), std::move(l1), std::move(l2), std::move(llc)};
  return events;
}

const std::vector<double> kExecutions = {10, 20, 30, 40, 50, 60, 70, 80};
// Centered and orthogonal to the centered executions.
const std::vector<double> kSkew = {1, -1, -1, 1, 1, -1, -1, 1};

std::vector<double> plus(const std::vector<double>& a, const std::vector<double>& b, double scale) {
  std::vector<double> sum(a.size());
  for (size_t i = 0; i < a.size(); ++i) sum[i] = a[i] + scale * b[i];
  return sum;
}

TEST(GramSchmidt, MissesProportionalToExecutionsAreExplained) {
  std::vector<double> affine(kExecutions.size());
  for (size_t i = 0; i < affine.size(); ++i) affine[i] = 0.25 * kExecutions[i] + 3;
  const auto events = hardware_event_residuals(
      {instruction(1, kExecutions, kExecutions), instruction(2, kExecutions, affine)}, 8, 0.05);
  EXPECT_TRUE(events.empty());
}

TEST(GramSchmidt, OwnSkewSurvivesAsTheResidual) {
  // The skew keeps 40% of the centered L1 counts' norm.
  const auto events = hardware_event_residuals(
      {instruction(7, kExecutions, plus(kExecutions, kSkew, 10.0))}, 8, 0.05);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].pc, 7u);
  EXPECT_EQ(events[0].level, HardwareLevel::L1Miss);
  ASSERT_EQ(events[0].residual.size(), 8u);
  for (size_t t = 0; t < 8; ++t) EXPECT_NEAR(events[0].residual[t], 10 * kSkew[t], 1e-9) << t;
}

TEST(GramSchmidt, SmallOwnPartIsDroppedBelowTheExplainedFraction) {
  // |0.2 skew| / |centered L1| is about 0.009: explained by the executions.
  const auto events = hardware_event_residuals(
      {instruction(7, kExecutions, plus(kExecutions, kSkew, 0.2))}, 8, 0.05);
  EXPECT_TRUE(events.empty());
  // With no fraction required, it survives.
  EXPECT_EQ(
      hardware_event_residuals({instruction(7, kExecutions, plus(kExecutions, kSkew, 0.2))}, 8, 0.0)
          .size(),
      1u);
}

TEST(GramSchmidt, LowerLevelsAreFreedFromAllSuperiors) {
  const std::vector<double> other = {1, 1, -1, -1, -1, -1, 1, 1};  // orthogonal to both
  const std::vector<double> l1 = plus(kExecutions, kSkew, 10.0);
  // L2 = L1 exactly: explained. LLC = 2 L1 + 30 other: the `other` part stays.
  const auto events = hardware_event_residuals(
      {instruction(5, kExecutions, l1, l1, plus(plus(l1, l1, 1.0), other, 30.0))}, 8, 0.05);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].level, HardwareLevel::L1Miss);
  EXPECT_EQ(events[1].level, HardwareLevel::LlcMiss);
  for (size_t t = 0; t < 8; ++t) EXPECT_NEAR(events[1].residual[t], 30 * other[t], 1e-9);
}

TEST(GramSchmidt, MissingExecutionsAndConstantLevels) {
  // No executions: the L1 counts are their own residual (centered).
  // Constant L2: no event.
  const auto events = hardware_event_residuals(
      {instruction(9, {}, kExecutions, std::vector<double>(8, 4.0))}, 8, 0.05);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].level, HardwareLevel::L1Miss);
  EXPECT_NEAR(events[0].residual[0], -35, 1e-9);
  EXPECT_THROW(hardware_event_residuals({instruction(9, {1, 2, 3})}, 8, 0.05),
               std::invalid_argument);
}

// ------------------------------------------------------------ clustering

Partition sorted_partition(Partition p) {
  for (auto& c : p) std::sort(c.begin(), c.end());
  std::sort(p.begin(), p.end());
  return p;
}

double pearson(const Eigen::RowVectorXd& a, const Eigen::RowVectorXd& b) {
  const Eigen::RowVectorXd ca = a.array() - a.mean();
  const Eigen::RowVectorXd cb = b.array() - b.mean();
  const double d = ca.norm() * cb.norm();
  return d == 0 ? 0 : ca.dot(cb) / d;
}

// The textbook algorithm: all pairwise correlations; bulk pairs joined
// first (transitively); then, repeatedly, the pair of clusters with the
// largest mean pairwise correlation is merged while that mean is >= the
// threshold.
Partition naive_upgma(const Eigen::MatrixXd& rows, double threshold, double bulk) {
  const size_t n = static_cast<size_t>(rows.rows());
  std::vector<std::vector<double>> corr(n, std::vector<double>(n));
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < n; ++j) {
      corr[i][j] =
          pearson(rows.row(static_cast<Eigen::Index>(i)), rows.row(static_cast<Eigen::Index>(j)));
    }
  }
  std::vector<size_t> label(n);
  std::iota(label.begin(), label.end(), 0);
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = i + 1; j < n; ++j) {
      if (corr[i][j] < bulk || label[i] == label[j]) continue;
      const size_t from = label[j];
      for (auto& l : label) {
        if (l == from) l = label[i];
      }
    }
  }
  Partition clusters;
  for (size_t i = 0; i < n; ++i) {
    auto it = std::find_if(clusters.begin(), clusters.end(),
                           [&](const auto& c) { return label[c.front()] == label[i]; });
    if (it == clusters.end()) {
      clusters.push_back({i});
    } else {
      it->push_back(i);
    }
  }
  while (clusters.size() > 1) {
    double best = -2;
    size_t ba = 0, bb = 0;
    for (size_t a = 0; a < clusters.size(); ++a) {
      for (size_t b = a + 1; b < clusters.size(); ++b) {
        double sum = 0;
        for (size_t x : clusters[a]) {
          for (size_t y : clusters[b]) sum += corr[x][y];
        }
        const double linkage = sum / static_cast<double>(clusters[a].size() * clusters[b].size());
        if (linkage > best) {
          best = linkage;
          ba = a;
          bb = b;
        }
      }
    }
    if (best < threshold) break;
    clusters[ba].insert(clusters[ba].end(), clusters[bb].begin(), clusters[bb].end());
    clusters.erase(clusters.begin() + static_cast<std::ptrdiff_t>(bb));
  }
  return sorted_partition(clusters);
}

TEST(Clustering, DesignedGroups) {
  constexpr int kThreads = 16;
  std::mt19937_64 rng(7);
  std::normal_distribution<double> noise(0, 1);
  Eigen::RowVectorXd trend(kThreads), wave(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    trend[t] = t;
    wave[t] = (t % 4 < 2) ? 10 : -10;
  }
  // Kinds interleaved: A = trend (scaled, shifted, small noise), B = -trend,
  // C = wave, D = independent noise.
  const char kinds[] = "ABCDAABCBDACDBAC";
  Eigen::MatrixXd rows(16, kThreads);
  for (int i = 0; i < 16; ++i) {
    Eigen::RowVectorXd row(kThreads);
    for (int t = 0; t < kThreads; ++t) row[t] = 0.05 * noise(rng);
    switch (kinds[i]) {
      case 'A':
        row += (1 + i) * trend + Eigen::RowVectorXd::Constant(kThreads, 100.0 * i);
        break;
      case 'B':
        row -= 0.5 * trend;
        break;
      case 'C':
        row += wave;
        break;
      default:
        for (int t = 0; t < kThreads; ++t) row[t] = noise(rng);
    }
    rows.row(i) = row;
  }
  Partition expected;
  for (char kind : {'A', 'B', 'C'}) {
    std::vector<size_t> group;
    for (size_t i = 0; i < 16; ++i) {
      if (kinds[i] == kind) group.push_back(i);
    }
    expected.push_back(group);
  }
  for (size_t i = 0; i < 16; ++i) {
    if (kinds[i] == 'D') expected.push_back({i});
  }
  for (double bulk : {0.99, 2.0}) {
    const Partition got = cluster_events(rows, 0.9, bulk);
    EXPECT_EQ(sorted_partition(got), sorted_partition(expected)) << "bulk " << bulk;
    // Output order: clusters by smallest member, members ascending.
    for (size_t c = 0; c + 1 < got.size(); ++c) EXPECT_LT(got[c].front(), got[c + 1].front());
  }
}

TEST(Clustering, ConstantRowsStaySingletons) {
  Eigen::MatrixXd rows(3, 4);
  rows << 1, 1, 1, 1, 2, 2, 2, 2, 0, 0, 0, 0;
  EXPECT_EQ(cluster_events(rows, -1.0, 2.0), (Partition{{0}, {1}, {2}}));
  EXPECT_TRUE(cluster_events(Eigen::MatrixXd(0, 4), 0.9, 0.99).empty());
}

// Events built from a few latent factors with noise levels straddling the
// threshold, so that many clusters hold pairs below it (average-linkage
// chains), plus pure noise.
Eigen::MatrixXd factor_events(size_t events, int threads, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0, 1);
  std::uniform_real_distribution<double> uniform(0, 1);
  constexpr int kFactors = 12;
  Eigen::MatrixXd factors(kFactors, threads);
  for (int f = 0; f < kFactors; ++f) {
    for (int t = 0; t < threads; ++t) factors(f, t) = normal(rng);
  }
  Eigen::MatrixXd rows(static_cast<Eigen::Index>(events), threads);
  for (size_t i = 0; i < events; ++i) {
    const auto r = static_cast<Eigen::Index>(i);
    const double kind = uniform(rng);
    for (int t = 0; t < threads; ++t) rows(r, t) = normal(rng);
    if (kind < 0.85) {
      // factor + noise with noise sd 0.05..0.45 of the factor's
      const int f = static_cast<int>(uniform(rng) * kFactors);
      const double sd = 0.05 + 0.4 * uniform(rng);
      rows.row(r) = (3 + 2 * uniform(rng)) * (factors.row(f) + sd * rows.row(r)) +
                    Eigen::RowVectorXd::Constant(threads, 50 * uniform(rng));
    }
  }
  return rows;
}

bool has_pair_below(const Partition& partition, const Eigen::MatrixXd& rows, double threshold) {
  for (const auto& c : partition) {
    for (size_t a : c) {
      for (size_t b : c) {
        if (a < b && pearson(rows.row(static_cast<Eigen::Index>(a)),
                             rows.row(static_cast<Eigen::Index>(b))) < threshold) {
          return true;
        }
      }
    }
  }
  return false;
}

TEST(Clustering, BlockedMatchesNaiveUpgma) {
  for (uint64_t seed : {1, 2, 3}) {
    const Eigen::MatrixXd rows = factor_events(300, 12, seed);
    for (double bulk : {2.0, 0.99}) {
      const Partition expected = naive_upgma(rows, 0.9, bulk);
      // Several clusters, some merged only through average linkage.
      EXPECT_GT(expected.size(), 12u);
      EXPECT_LT(expected.size(), 200u);
      EXPECT_TRUE(has_pair_below(expected, rows, 0.9)) << "seed " << seed;
      for (Eigen::Index block : {1024, 64, 37}) {
        EXPECT_EQ(sorted_partition(cluster_events(rows, 0.9, bulk, block)), expected)
            << "seed " << seed << " bulk " << bulk << " block " << block;
      }
    }
  }
}

TEST(Clustering, DuplicatedEventsMatchNaiveUpgma) {
  // Scaled and shifted copies (correlation 1) of some rows, as edges of the
  // same basic block or loop have.
  const Eigen::MatrixXd base = factor_events(150, 8, 4);
  Eigen::MatrixXd rows(250, 8);
  rows.topRows(150) = base;
  for (Eigen::Index i = 0; i < 100; ++i) {
    rows.row(150 + i) = (2.0 + static_cast<double>(i % 5)) * base.row((i * 7) % 150) +
                        Eigen::RowVectorXd::Constant(8, static_cast<double>(i));
  }
  for (double bulk : {2.0, 0.99}) {
    EXPECT_EQ(sorted_partition(cluster_events(rows, 0.9, bulk, 50)), naive_upgma(rows, 0.9, bulk))
        << "bulk " << bulk;
  }
  // A threshold above 1 merges nothing, not even identical rows.
  EXPECT_EQ(cluster_events(rows, 1.5, 2.0).size(), 250u);
}

TEST(Clustering, CandidateGraphComponentsDoNotOverMerge) {
  // A chain a-b-c where a-b and b-c are above the threshold but a-c is far
  // below: average linkage merges a pair and then stops.
  Eigen::MatrixXd rows(3, 3);
  const double angle = 25.0 * M_PI / 180;  // corr(a,b) = cos 25° ≈ 0.906
  // Centered orthonormal basis of the 3-thread space.
  const Eigen::RowVector3d u(1 / std::sqrt(2.0), -1 / std::sqrt(2.0), 0);
  const Eigen::RowVector3d v(1 / std::sqrt(6.0), 1 / std::sqrt(6.0), -2 / std::sqrt(6.0));
  rows.row(0) = u;
  rows.row(1) = std::cos(angle) * u + std::sin(angle) * v;
  rows.row(2) = std::cos(2.05 * angle) * u + std::sin(2.05 * angle) * v;
  EXPECT_EQ(sorted_partition(cluster_events(rows, 0.9, 2.0)), naive_upgma(rows, 0.9, 2.0));
  EXPECT_EQ(cluster_events(rows, 0.9, 2.0).size(), 2u);
}

// ------------------------------------------------------------- diagnosis

ControlFlowEdge edge(uint64_t from, uint64_t to, std::vector<double> counts) {
  return ControlFlowEdge{from, to, std::move(counts)};
}

std::vector<double> constant(size_t n, double value) { return std::vector<double>(n, value); }

// `for (i ...) if (owner(i) == me) work(i);` in 8 threads. Blocks: A loop
// header, B the ownership test, C the work, D after the loop.
constexpr uint64_t kA = 0x400100, kB = 0x400110, kC = 0x400120, kD = 0x400130;
const std::vector<double> kOwned = {5, 20, 8, 30, 12, 25, 3, 17};

SectionInstanceData owner_loop() {
  SectionInstanceData data;
  data.threads = 8;
  const double iterations = 100;
  std::vector<double> skipped(8), time(8);
  for (size_t t = 0; t < 8; ++t) {
    skipped[t] = iterations - kOwned[t];
    time[t] = 1000 + 37 * kOwned[t];
  }
  data.time = time;
  data.edges = {edge(0, kA, constant(8, 1)), edge(kA, kB, constant(8, iterations)),
                edge(kB, kC, kOwned),        edge(kB, kA, skipped),
                edge(kC, kA, kOwned),        edge(kA, kD, constant(8, 1))};
  return data;
}

TEST(Diagnosis, OwnerTestIsTheLeader) {
  const InstanceDiagnosis d = diagnose_instance(owner_loop());
  ASSERT_TRUE(d.analyzable);
  EXPECT_EQ(d.events, 3u);    // B->C, B->A, C->A vary
  EXPECT_EQ(d.clusters, 2u);  // {B->C, C->A} and {B->A}
  EXPECT_EQ(d.selected_clusters, 1u);
  EXPECT_NEAR(d.r_squared, 1.0, 1e-9);
  ASSERT_FALSE(d.causes.empty());
  const Cause& top = d.causes.front();
  EXPECT_EQ(top.kind, CauseKind::ControlFlow);
  EXPECT_EQ(top.pc, kB);
  EXPECT_EQ(top.edge_to, kC);
  EXPECT_GT(top.score, 0.0);
  EXPECT_NEAR(top.beta, 1.0, 1e-9);
  // Out-edge B->C correlates 1 with time, the in-edge A->B is constant.
  EXPECT_NEAR(top.leader_score, 1.0, 1e-9);
  EXPECT_NEAR(top.score, 1.0, 1e-9);
}

// A pipelined sweep in 4 threads (examples/ssor_pipeline_flags_pthreads.c):
// thread 2 corrects 96 more rows, and its neighbour-flag test S happens to
// run once more. Both branches correlate 1 with time and fall in one
// cluster; the score follows the size of what each decides.
TEST(Diagnosis, LeadersShareByTheSpreadOfTheirBranch) {
  constexpr uint64_t kS = 0x400080;
  SectionInstanceData data;
  data.threads = 4;
  const std::vector<double> corrected = {32, 32, 128, 32};
  std::vector<double> plain(4), time(4);
  for (size_t t = 0; t < 4; ++t) {
    plain[t] = 512 - corrected[t];
    time[t] = 1000 + 37 * corrected[t];
  }
  data.time = time;
  data.edges = {edge(0, kS, constant(4, 1)),  edge(kS, kS, {0, 0, 1, 0}),
                edge(kS, kA, constant(4, 1)), edge(kA, kB, constant(4, 512)),
                edge(kB, kC, corrected),      edge(kB, kA, plain),
                edge(kC, kA, corrected),      edge(kA, kD, constant(4, 1))};
  const InstanceDiagnosis d = diagnose_instance(data);
  ASSERT_EQ(d.causes.size(), 2u);
  EXPECT_EQ(d.causes[0].pc, kB);
  EXPECT_NEAR(d.causes[0].share, 96.0 / 97.0, 1e-9);
  EXPECT_EQ(d.causes[1].pc, kS);
  EXPECT_NEAR(d.causes[1].share, 1.0 / 97.0, 1e-9);
  EXPECT_NEAR(d.causes[0].score + d.causes[1].score, 1.0, 1e-9);
}

TEST(Diagnosis, LoopHeaderLeadsAVaryingLoop) {
  // Thread t runs N[t] iterations: the header A is the leader (its back
  // edge B->A comes from inside the cluster but does not count).
  SectionInstanceData data;
  data.threads = 8;
  const std::vector<double> n = {10, 40, 25, 60, 15, 35, 50, 20};
  data.time.resize(8);
  for (size_t t = 0; t < 8; ++t) data.time[t] = 2 * n[t] + 5 + 0.01 * static_cast<double>(t % 3);
  data.edges = {edge(0, kA, constant(8, 1)), edge(kA, kB, n), edge(kB, kA, n),
                edge(kA, kD, constant(8, 1))};
  const InstanceDiagnosis d = diagnose_instance(data);
  ASSERT_EQ(d.causes.size(), 1u);
  EXPECT_EQ(d.causes[0].kind, CauseKind::ControlFlow);
  EXPECT_EQ(d.causes[0].pc, kA);
  EXPECT_EQ(d.causes[0].edge_to, kB);
  EXPECT_GT(d.causes[0].leader_score, 0.99);
  EXPECT_GT(d.causes[0].score, 0.99);
}

TEST(Diagnosis, InnerLoopHeaderOfNestedLoops) {
  // for (o = 0; o < 10; ++o) for (i = 0; i < n[t]; ++i) work;
  // A outer header, B inner header, C inner body, D inner exit, E after.
  constexpr uint64_t kE = 0x400140;
  SectionInstanceData data;
  data.threads = 8;
  const std::vector<double> inner = {100, 400, 250, 600, 150, 350, 500, 200};  // over all o
  data.time.resize(8);
  for (size_t t = 0; t < 8; ++t) data.time[t] = 3 * inner[t] + 40;
  data.edges = {edge(0, kA, constant(8, 1)),   edge(kA, kB, constant(8, 10)),
                edge(kB, kC, inner),           edge(kC, kB, inner),
                edge(kB, kD, constant(8, 10)), edge(kD, kA, constant(8, 10)),
                edge(kA, kE, constant(8, 1))};
  const InstanceDiagnosis d = diagnose_instance(data);
  ASSERT_EQ(d.causes.size(), 1u);
  EXPECT_EQ(d.causes[0].pc, kB);
  EXPECT_EQ(d.causes[0].edge_to, kC);
  EXPECT_NEAR(d.causes[0].leader_score, 1.0, 1e-9);
}

TEST(Diagnosis, InputOrderDoesNotMatter) {
  SectionInstanceData data = owner_loop();
  const InstanceDiagnosis a = diagnose_instance(data);
  std::reverse(data.edges.begin(), data.edges.end());
  std::swap(data.edges[1], data.edges[4]);
  const InstanceDiagnosis b = diagnose_instance(data);
  ASSERT_EQ(a.causes.size(), b.causes.size());
  for (size_t i = 0; i < a.causes.size(); ++i) {
    EXPECT_EQ(a.causes[i].pc, b.causes[i].pc);
    EXPECT_EQ(a.causes[i].edge_to, b.causes[i].edge_to);
    EXPECT_EQ(a.causes[i].score, b.causes[i].score);
  }
}

TEST(Diagnosis, CacheMissesWithoutControlFlowDifferences) {
  SectionInstanceData data;
  data.threads = 8;
  const std::vector<double> misses = {100, 900, 300, 200, 700, 400, 800, 150};
  data.time.resize(8);
  for (size_t t = 0; t < 8; ++t) data.time[t] = 5000 + 3 * misses[t];
  data.edges = {edge(0, kA, constant(8, 1)), edge(kA, kB, constant(8, 1000)),
                edge(kB, kA, constant(8, 999)), edge(kB, kD, constant(8, 1))};
  const std::vector<double> noise = {3, 1, 4, 1, 5, 9, 2, 6};
  const std::vector<double> other = {7, 2, 1, 8, 2, 8, 1, 8};
  data.instructions = {instruction(0x400200, constant(8, 1000), noise),
                       instruction(0x400210, constant(8, 1000), misses),
                       instruction(0x400220, constant(8, 1000), constant(8, 10), other)};
  const InstanceDiagnosis d = diagnose_instance(data);
  ASSERT_TRUE(d.analyzable);
  EXPECT_EQ(d.events, 3u);
  ASSERT_FALSE(d.causes.empty());
  EXPECT_EQ(d.causes[0].kind, CauseKind::CacheMiss);
  EXPECT_EQ(d.causes[0].pc, 0x400210u);
  EXPECT_EQ(d.causes[0].level, HardwareLevel::L1Miss);
  EXPECT_NEAR(d.causes[0].score, 1.0, 1e-9);
  EXPECT_EQ(d.causes[0].share, 1.0);  // its cluster's only member
  EXPECT_EQ(d.causes.size(), 1u);
}

TEST(Diagnosis, MissesThatFollowExecutionsBlameControlFlow) {
  // L1 misses = 2 x executions at a pc whose executions follow the skewed
  // branch: the misses are explained, only the control flow is reported.
  SectionInstanceData data = owner_loop();
  std::vector<double> twice(8);
  for (size_t t = 0; t < 8; ++t) twice[t] = 2 * kOwned[t];
  data.instructions = {instruction(kC + 4, kOwned, twice)};
  const InstanceDiagnosis d = diagnose_instance(data);
  EXPECT_EQ(d.events, 3u);
  ASSERT_FALSE(d.causes.empty());
  for (const Cause& c : d.causes) EXPECT_EQ(c.kind, CauseKind::ControlFlow);
}

TEST(Diagnosis, NotAnalyzable) {
  SectionInstanceData one;
  one.threads = 1;
  one.time = {5};
  one.edges = {edge(0, kA, {1})};
  const InstanceDiagnosis a = diagnose_instance(one);
  EXPECT_FALSE(a.analyzable);
  EXPECT_TRUE(a.causes.empty());

  SectionInstanceData flat = owner_loop();
  flat.time = constant(8, 42);
  const InstanceDiagnosis b = diagnose_instance(flat);
  EXPECT_FALSE(b.analyzable);
  EXPECT_TRUE(b.causes.empty());
  EXPECT_EQ(b.r_squared, 0.0);
}

TEST(Diagnosis, NothingVariesNoCausesNoNan) {
  SectionInstanceData data = owner_loop();
  data.edges = {edge(0, kA, constant(8, 1)), edge(kA, kD, {})};
  data.instructions = {instruction(kA, constant(8, 3), constant(8, 1))};
  const InstanceDiagnosis d = diagnose_instance(data);
  EXPECT_TRUE(d.analyzable);
  EXPECT_EQ(d.events, 0u);
  EXPECT_TRUE(d.causes.empty());
  EXPECT_EQ(d.r_squared, 0.0);
}

TEST(Diagnosis, RejectsMalformedInput) {
  SectionInstanceData data = owner_loop();
  data.time.pop_back();
  EXPECT_THROW(diagnose_instance(data), std::invalid_argument);
  data = owner_loop();
  data.edges[2].counts.push_back(1);
  EXPECT_THROW(diagnose_instance(data), std::invalid_argument);
  data = owner_loop();
  data.time[3] = NAN;
  EXPECT_THROW(diagnose_instance(data), std::invalid_argument);
}

TEST(Diagnosis, ManyPerfectlyCorrelatedEventsStayFinite) {
  // 8 threads, 2,000 events, most of them exact multiples of two patterns.
  SectionInstanceData data;
  data.threads = 8;
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(0, 1);
  const std::vector<double> p = {1, 4, 2, 8, 5, 7, 3, 6};
  const std::vector<double> q = {2, 2, 5, 5, 1, 1, 9, 9};
  for (size_t t = 0; t < 8; ++t) data.time.push_back(10 * p[t] + q[t]);
  for (uint64_t i = 0; i < 2000; ++i) {
    std::vector<double> counts(8);
    const double scale = 1 + static_cast<double>(i % 17);
    for (size_t t = 0; t < 8; ++t) {
      counts[t] = i % 3 == 0 ? scale * p[t] : i % 3 == 1 ? scale * q[t] : std::floor(100 * u(rng));
    }
    data.edges.push_back(edge(0x1000 + 16 * i, 0x1000 + 16 * (i + 1), counts));
  }
  const InstanceDiagnosis d = diagnose_instance(data);
  ASSERT_TRUE(d.analyzable);
  EXPECT_TRUE(std::isfinite(d.r_squared));
  for (const Cause& c : d.causes) {
    EXPECT_TRUE(std::isfinite(c.score));
    EXPECT_TRUE(std::isfinite(c.beta));
    EXPECT_TRUE(std::isfinite(c.leader_score));
  }
  EXPECT_LE(d.selected_clusters, 6u);
}

// Whatever the counts, every cause's score is in [0, 1] and an instance's
// scores add up to at most its model's R^2 (docs/metrics.md, "Cause
// score"): random branchy control flow, random misses, random times, with
// and without a relation between them.
TEST(Diagnosis, ScoresStayInTheUnitIntervalOnRandomInstances) {
  std::mt19937_64 rng(2026);
  std::uniform_real_distribution<double> u(0, 1);
  size_t instances_with_causes = 0;
  for (int trial = 0; trial < 300; ++trial) {
    SectionInstanceData data;
    data.threads = 2 + trial % 15;
    const size_t n = data.threads;
    std::vector<double> work(n);
    for (double& w : work) w = std::floor(1000 * u(rng));
    data.time.resize(n);
    for (size_t t = 0; t < n; ++t)
      data.time[t] = (trial % 3 == 0 ? 0 : 7 * work[t]) + std::floor(500 * u(rng));
    // A chain of blocks, each branching to a side block a random or a
    // work-driven number of times.
    const size_t blocks = 3 + trial % 9;
    for (size_t b = 0; b < blocks; ++b) {
      const uint64_t from = b == 0 ? 0 : 0x1000 + 0x40 * b;
      const uint64_t to = 0x1000 + 0x40 * (b + 1);
      std::vector<double> taken(n), side(n);
      for (size_t t = 0; t < n; ++t) {
        taken[t] = b % 2 ? work[t] : std::floor(100 * u(rng));
        side[t] = std::floor(50 * u(rng));
      }
      data.edges.push_back(edge(from, to, taken));
      if (from != 0) data.edges.push_back(edge(from, 0x9000 + 0x40 * b, side));
    }
    for (int i = 0; i < 1 + trial % 6; ++i) {
      std::vector<double> executions(n), misses(n);
      for (size_t t = 0; t < n; ++t) {
        executions[t] = 1000 + std::floor(100 * u(rng));
        misses[t] = i % 2 ? std::floor(executions[t] * u(rng)) : std::floor(work[t] / 4);
      }
      data.instructions.push_back(
          instruction(0x400000 + 16 * static_cast<uint64_t>(i), executions, misses));
    }
    const InstanceDiagnosis d = diagnose_instance(data);
    double sum = 0;
    for (const Cause& c : d.causes) {
      EXPECT_GE(c.score, 0.0) << "trial " << trial;
      EXPECT_LE(c.score, 1.0) << "trial " << trial;
      EXPECT_GE(c.share, 0.0) << "trial " << trial;
      EXPECT_LE(c.share, 1.0) << "trial " << trial;
      sum += c.score;
    }
    EXPECT_LE(sum, d.r_squared + 1e-9) << "trial " << trial;
    if (!d.causes.empty()) ++instances_with_causes;
  }
  // The property is not checked on empty results only.
  EXPECT_GT(instances_with_causes, 100u);
}

// ------------------------------------------------------------ aggregation

Cause cause(CauseKind kind, uint64_t pc, HardwareLevel level, double score) {
  Cause c;
  c.kind = kind;
  c.pc = pc;
  c.level = level;
  c.score = score;
  c.beta = score;
  return c;
}

TEST(Combine, WeightsByImbalance) {
  InstanceDiagnosis light, heavy;
  light.causes = {cause(CauseKind::ControlFlow, 0x10, HardwareLevel::Executions, 0.8),
                  cause(CauseKind::CacheMiss, 0x20, HardwareLevel::L1Miss, 0.5)};
  heavy.causes = {cause(CauseKind::CacheMiss, 0x20, HardwareLevel::L1Miss, 0.6),
                  cause(CauseKind::CacheMiss, 0x20, HardwareLevel::L2Miss, 0.3)};
  const auto combined = combine_instances({{0.1, light}, {0.9, heavy}});
  ASSERT_EQ(combined.size(), 3u);
  EXPECT_EQ(combined[0].pc, 0x20u);
  EXPECT_EQ(combined[0].level, HardwareLevel::L1Miss);
  EXPECT_NEAR(combined[0].score, 0.1 * 0.5 + 0.9 * 0.6, 1e-12);
  EXPECT_EQ(combined[1].level, HardwareLevel::L2Miss);
  EXPECT_NEAR(combined[1].score, 0.9 * 0.3, 1e-12);
  EXPECT_EQ(combined[2].kind, CauseKind::ControlFlow);
  EXPECT_NEAR(combined[2].score, 0.1 * 0.8, 1e-12);

  // Weights are relative: scaling them changes nothing.
  const auto scaled = combine_instances({{1.0, light}, {9.0, heavy}});
  for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(scaled[i].score, combined[i].score, 1e-12);
  EXPECT_TRUE(combine_instances({{0.0, light}}).empty());
  EXPECT_TRUE(combine_instances({}).empty());
}

}  // namespace
}  // namespace weft
