// What the renderings of every finding say about the profile it came from.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "profile/profile.h"

namespace weft {

struct ProfileFacts {
  std::string path;
  bool complete = true;
  std::string incomplete_reason;  // meta incomplete_reason
  std::string granularity;        // meta granularity as stored ("8"); "" when absent
  uint32_t threads = 0;           // Profile::thread_count
  // Section instances closed by a synchronization weft recognises (a
  // barrier, a parallel region, a condition-variable barrier, a marked
  // section), not by a thread's exit or join (meta barrier_instances);
  // nullopt for a profile that does not say.
  std::optional<uint64_t> barrier_instances;
  // The CRD's lowest sampling rate, as a shift (rate 2^-shift; meta
  // crd_sample_shift): 0 when every event was measured.
  unsigned crd_sample_shift = 0;
  uint64_t crd_sample_granules = 0;  // the budget per reading thread (meta)
  // Section instances the CRD did not see, and 1 in how many it measured
  // (docs/metrics.md, "Sampled section instances"); 0 skipped: every one.
  uint64_t crd_skipped_segments = 0;
  uint64_t crd_instance_sampling = 1;
  // The long-reuse sample's lowest rate, as a shift (crd_long_sample_shift).
  unsigned crd_long_sample_shift = 0;
  // Stretches of long instances the CRD skipped, and the stretch length
  // (crd_skipped_stretches, crd_stretch_events).
  uint64_t crd_skipped_stretches = 0;
  uint64_t crd_stretch_events = 0;
  // The share of a long instance's stretches the CRD counted: 1/8 when it
  // skipped some, else 1.
  double crd_stretch_sample_rate = 1.0;
  // Section instances the false-sharing analysis and the traces skipped
  // (docs/metrics.md, "Sampled section instances"), and 1 in how many they
  // analyzed past the first; 0 skipped: every instance was analyzed.
  uint64_t falseshare_skipped_segments = 0;
  uint64_t falseshare_sampling = 1;
  uint64_t trace_skipped_segments = 0;
  uint64_t trace_sampling = 1;
  // Segments whose memory instructions the imbalance analysis did not count.
  uint64_t imbalance_unmeasured_segments = 0;
  uint64_t imbalance_instance_sampling = 1;
  // Segments whose memory counts past their first 2^24 blocks were taken in
  // stretches, 1 in 8 (docs/metrics.md, "Stretches of long instances").
  uint64_t imbalance_stretched_segments = 0;
  uint64_t imbalance_stretch_blocks = 0;       // the cycle (0: segments whole)
  double imbalance_stretch_sample_rate = 1.0;  // 1/8 when a segment reached them, else 1
  // Several threads, and none of their sections closed at a barrier: the
  // program synchronizes in a way weft does not recognise (spin flags, a
  // hand-written barrier), so there is no section to analyze but the
  // create->join span.
  bool no_barrier_recognised() const {
    return threads >= 2 && barrier_instances && *barrier_instances == 0;
  }
};

ProfileFacts profile_facts(const Profile& profile);

// One sentence saying which analyses saw only a sample of the section
// instances (false sharing: its counts are estimates; traces: the loops'
// executions traced), and how to see every one; "" when none did.
std::string instance_sampling_note(const ProfileFacts& facts);

// One sentence saying that the CRD figures (distances, their counts, the
// CRR's borrowed epochs) are estimates from a sample, and how to measure
// them all; empty when every event was measured.
std::string crd_sampling_note(const ProfileFacts& facts);

// A profile whose run's data was lost (incomplete, and no analysis ran as
// far as it knows: the placeholder weft record writes when nothing could be
// saved) has no data of any analysis; a view that needs `analysis` calls
// this first, so it says so (FindingError) instead of "recorded without".
void refuse_lost_data(const Profile& profile, std::string_view analysis);

}  // namespace weft
