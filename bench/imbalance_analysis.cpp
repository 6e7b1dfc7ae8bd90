// Cost of the load-imbalance diagnosis (src/diagnosis) on a synthetic
// section instance of the size LIME reports for its largest sections:
// 64 threads and 10,000 events (8,000 control-flow edges in 1,000 loops,
// 2,000 instructions with L1, L2 and LLC misses), a mix of thread-skewed
// groups and noise, fixed seed.
//
//   build/bin/weft_bench_imbalance [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <random>

#include "diagnosis/event_clustering.h"
#include "diagnosis/imbalance_diagnosis.h"

namespace {

constexpr size_t kThreads = 64;
constexpr size_t kLoops = 1000;  // 8 edges and 2 instructions each
constexpr size_t kSkewGroups = 8;

weft::SectionInstanceData synthetic_instance() {
  std::mt19937_64 rng(20110521);
  std::uniform_real_distribution<double> uniform(0, 1);
  std::normal_distribution<double> normal(0, 1);

  // Per-thread skew factors shared by groups of loops.
  std::vector<std::vector<double>> skew(kSkewGroups, std::vector<double>(kThreads));
  for (auto& group : skew) {
    for (double& s : group) s = 0.5 + uniform(rng);
  }

  weft::SectionInstanceData data;
  data.threads = kThreads;
  data.time.assign(kThreads, 1e6);
  auto add_edge = [&](uint64_t from, uint64_t to, const std::vector<double>& counts) {
    data.edges.push_back({from, to, counts});
  };
  auto add_instruction = [&](uint64_t pc, const std::vector<double>& executions) {
    weft::InstructionEvents events;
    events.pc = pc;
    events.counts[0] = executions;
    const double rate = 0.02 + 0.2 * uniform(rng);
    const size_t group = static_cast<size_t>(uniform(rng) * kSkewGroups);
    const bool skewed_misses = uniform(rng) < 0.2;
    for (size_t level = 1; level < 4; ++level) {
      const std::vector<double>& above = events.counts[level - 1];
      std::vector<double> misses(kThreads);
      for (size_t t = 0; t < kThreads; ++t) {
        const double factor = skewed_misses ? skew[group][t] : 1.0;
        misses[t] = std::max(0.0, std::round(above[t] * rate * factor + 3 * normal(rng)));
        data.time[t] += misses[t] * 10.0 * static_cast<double>(level);
      }
      events.counts[level] = misses;
    }
    data.instructions.push_back(std::move(events));
  };

  uint64_t previous_exit = 0;
  for (size_t m = 0; m < kLoops; ++m) {
    const uint64_t base = 0x400000 + 0x100 * m;
    const uint64_t header = base, test = base + 0x10, work = base + 0x20, work2 = base + 0x30,
                   latch = base + 0x40, exit = base + 0x50;
    // Iterations: the same in every thread, skewed by a group, or noisy.
    const double kind = uniform(rng);
    const size_t group = static_cast<size_t>(uniform(rng) * kSkewGroups);
    const double mean_iterations = 50 + 500 * uniform(rng);
    const double taken_fraction = uniform(rng);
    const bool skewed_branch = uniform(rng) < 0.3;
    std::vector<double> iterations(kThreads), taken(kThreads), not_taken(kThreads);
    for (size_t t = 0; t < kThreads; ++t) {
      double n = mean_iterations;
      if (kind < 0.3) {
        n = std::round(mean_iterations * skew[group][t]);
      } else if (kind < 0.6) {
        n = std::round(mean_iterations * (0.8 + 0.4 * uniform(rng)));
      }
      const double p = skewed_branch
                           ? std::min(1.0, taken_fraction * skew[(group + 1) % kSkewGroups][t])
                           : taken_fraction;
      iterations[t] = n;
      taken[t] = std::round(n * p);
      not_taken[t] = n - taken[t];
      data.time[t] += 20 * n + 100 * taken[t];
    }
    const std::vector<double> once(kThreads, 1.0);
    add_edge(previous_exit, header, once);
    add_edge(header, test, iterations);
    add_edge(test, work, taken);
    add_edge(work, work2, taken);
    add_edge(work2, latch, taken);
    add_edge(test, latch, not_taken);
    add_edge(latch, header, iterations);
    add_edge(header, exit, once);
    add_instruction(test + 4, iterations);
    add_instruction(work + 4, taken);
    previous_exit = exit;
  }
  for (double& t : data.time) t *= 1 + 0.01 * normal(rng);
  return data;
}

// 10,000 clustering rows from the synthetic instance: the 8,000 edges' counts
// and the 2,000 instructions' L1 misses (raw, without the Gram–Schmidt step).
Eigen::MatrixXd synthetic_rows(const weft::SectionInstanceData& data) {
  const Eigen::Index events =
      static_cast<Eigen::Index>(data.edges.size() + data.instructions.size());
  Eigen::MatrixXd rows(events, static_cast<Eigen::Index>(kThreads));
  Eigen::Index r = 0;
  for (const auto& edge : data.edges) {
    rows.row(r++) = Eigen::Map<const Eigen::RowVectorXd>(edge.counts.data(), kThreads);
  }
  for (const auto& instruction : data.instructions) {
    rows.row(r++) = Eigen::Map<const Eigen::RowVectorXd>(instruction.counts[1].data(), kThreads);
  }
  return rows;
}

void BM_DiagnoseInstance(benchmark::State& state) {
  const weft::SectionInstanceData data = synthetic_instance();
  weft::InstanceDiagnosis diagnosis;
  for (auto _ : state) {
    diagnosis = weft::diagnose_instance(data);
    benchmark::DoNotOptimize(diagnosis);
  }
  state.counters["events"] = static_cast<double>(diagnosis.events);
  state.counters["clusters"] = static_cast<double>(diagnosis.clusters);
  state.counters["selected"] = static_cast<double>(diagnosis.selected_clusters);
  state.counters["causes"] = static_cast<double>(diagnosis.causes.size());
  state.counters["r2"] = diagnosis.r_squared;
}
BENCHMARK(BM_DiagnoseInstance)->Unit(benchmark::kMillisecond);

void BM_ClusterEvents(benchmark::State& state) {
  const Eigen::MatrixXd rows = synthetic_rows(synthetic_instance());
  size_t clusters = 0;
  for (auto _ : state) {
    const auto result = weft::cluster_events(rows, 0.9, 0.99);
    clusters = result.size();
    benchmark::DoNotOptimize(clusters);
  }
  state.counters["events"] = static_cast<double>(rows.rows());
  state.counters["clusters"] = static_cast<double>(clusters);
}
BENCHMARK(BM_ClusterEvents)->Unit(benchmark::kMillisecond);

}  // namespace
