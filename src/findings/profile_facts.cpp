#include "findings/profile_facts.h"

#include <algorithm>
#include <string>

#include "common/analyses.h"
#include "findings/finding_error.h"

namespace weft {

ProfileFacts profile_facts(const Profile& profile) {
  ProfileFacts facts;
  facts.path = profile.path();
  facts.complete = profile.complete();
  facts.incomplete_reason = profile.meta_value("incomplete_reason");
  facts.granularity = profile.meta_value("granularity");
  facts.threads = profile.thread_count();
  facts.barrier_instances = profile.meta_unsigned("barrier_instances");
  facts.crd_sample_shift = static_cast<unsigned>(
      std::min<uint64_t>(63, profile.meta_unsigned("crd_sample_shift").value_or(0)));
  facts.crd_sample_granules = profile.meta_unsigned("crd_sample_granules").value_or(0);
  facts.crd_skipped_segments = profile.meta_unsigned("crd_skipped_segments").value_or(0);
  facts.crd_instance_sampling = profile.meta_unsigned("crd_instance_sampling").value_or(1);
  facts.crd_long_sample_shift = static_cast<unsigned>(
      std::min<uint64_t>(63, profile.meta_unsigned("crd_long_sample_shift").value_or(0)));
  facts.crd_skipped_stretches = profile.meta_unsigned("crd_skipped_stretches").value_or(0);
  facts.crd_stretch_events = profile.meta_unsigned("crd_stretch_events").value_or(0);
  if (facts.crd_skipped_stretches != 0) facts.crd_stretch_sample_rate = 1.0 / kCrdStretchRate;
  facts.falseshare_skipped_segments =
      profile.meta_unsigned("falseshare_skipped_segments").value_or(0);
  facts.falseshare_sampling = profile.meta_unsigned("falseshare_sampling").value_or(1);
  facts.trace_skipped_segments = profile.meta_unsigned("trace_skipped_segments").value_or(0);
  facts.trace_sampling = profile.meta_unsigned("trace_sampling").value_or(1);
  facts.imbalance_unmeasured_segments =
      profile.meta_unsigned("imbalance_unmeasured_segments").value_or(0);
  facts.imbalance_instance_sampling =
      profile.meta_unsigned("imbalance_instance_sampling").value_or(1);
  facts.imbalance_stretched_segments =
      profile.meta_unsigned("imbalance_stretched_segments").value_or(0);
  facts.imbalance_stretch_blocks = profile.meta_unsigned("imbalance_stretch_blocks").value_or(0);
  if (facts.imbalance_stretched_segments != 0)
    facts.imbalance_stretch_sample_rate = 1.0 / kImbalanceStretchRate;
  return facts;
}

std::string crd_sampling_note(const ProfileFacts& facts) {
  std::string which;
  // The long-reuse sample's granules (docs/metrics.md, "Long reuses").
  const std::string long_sample =
      facts.crd_long_sample_shift == 0
          ? std::string("on every granule")
          : "on a hashed sample of granules (rates down to 1/" +
                std::to_string(uint64_t{1} << facts.crd_long_sample_shift) + ")";
  if (facts.crd_sample_shift != 0)
    which = "past " + std::to_string(facts.crd_sample_granules) +
            " granules a reading thread traced a hashed sample of them (SHARDS), at rates down "
            "to 1/" +
            std::to_string(uint64_t{1} << facts.crd_sample_shift) +
            "; distances under 64 are exact, the rest and their counts are estimates";
  if (facts.crd_skipped_segments != 0) {
    if (!which.empty()) which += "; ";
    which += "a long run: past each loop's first executions, the CRD was measured in 1 in " +
             std::to_string(facts.crd_instance_sampling) +
             " section instances, each event counting " +
             std::to_string(facts.crd_instance_sampling) + " (1 in " +
             std::to_string(2 * facts.crd_instance_sampling) + " past a loop's " +
             std::to_string(kBaseRateBlocks * facts.crd_instance_sampling) +
             "th execution, half as many each time its executions double, each event counting "
             "the instances it stands for); a reuse of data last read before the loop's "
             "previous execution was measured in every instance, " +
             long_sample;
  }
  if (facts.crd_skipped_stretches != 0) {
    if (!which.empty()) which += "; ";
    which += "inside section instances longer than " +
             std::to_string(kCrdWholeStretchCycles * facts.crd_stretch_events) +
             " communication reads of one thread, the CRD was measured in 1 stretch in " +
             std::to_string(kCrdStretchRate) + ", each event counting " +
             std::to_string(kCrdStretchRate) + " (" + std::to_string(facts.crd_skipped_stretches) +
             " stretches skipped)";
    if (facts.crd_skipped_segments == 0)
      which +=
          "; a reuse of data last read before the stretch's warm-up was measured in every "
          "stretch, " +
          long_sample;
  }
  if (which.empty()) return "";
  return "CRD sampled: " + which + " (`weft record --exact` measures every event)";
}

std::string instance_sampling_note(const ProfileFacts& facts) {
  std::string which;
  auto add = [&](uint64_t skipped, uint64_t rate, const char* what) {
    if (skipped == 0) return;
    if (!which.empty()) which += "; ";
    which += std::string(what) + " 1 in " + std::to_string(rate);
  };
  add(facts.falseshare_skipped_segments, facts.falseshare_sampling,
      "false sharing (its counts are estimates)");
  add(facts.trace_skipped_segments, facts.trace_sampling, "traces");
  add(facts.imbalance_unmeasured_segments, facts.imbalance_instance_sampling,
      "the imbalance analysis' memory counts (the other instances' misses are estimated)");
  const std::string stretches =
      facts.imbalance_stretched_segments == 0
          ? ""
          : "; inside " + std::to_string(facts.imbalance_stretched_segments) +
                " thread segments longer than " +
                std::to_string(kImbalanceWholeStretchCycles * facts.imbalance_stretch_blocks) +
                " basic blocks, the imbalance analysis counted memory in 1 stretch in " +
                std::to_string(kImbalanceStretchRate) + ", each execution and miss " + "counting " +
                std::to_string(kImbalanceStretchRate);
  if (which.empty())
    return stretches.empty() ? ""
                             : "a long section instance" + stretches +
                                   " (`weft record --exact` counts every one)";
  return "a long run: past each loop's first executions, section instances analyzed by " + which +
         " (half as many each time a loop's executions double past " +
         std::to_string(kBaseRateBlocks) +
         " times the rate; `weft record --exact` analyzes every one)";
}

void refuse_lost_data(const Profile& profile, std::string_view analysis) {
  if (profile.complete() || !profile.meta_value("analyses").empty()) return;
  const std::string reason = profile.meta_value("incomplete_reason");
  throw FindingError(profile.path() + " is an incomplete profile whose data was lost (" +
                     (reason.empty() ? "no reason recorded" : reason) + "): it holds no " +
                     std::string(analysis) + " data");
}

}  // namespace weft
