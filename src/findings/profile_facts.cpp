#include "findings/profile_facts.h"

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
  return facts;
}

void refuse_lost_data(const Profile& profile, std::string_view analysis) {
  if (profile.complete() || !profile.meta_value("analyses").empty()) return;
  const std::string reason = profile.meta_value("incomplete_reason");
  throw FindingError(profile.path() + " is an incomplete profile whose data was lost (" +
                     (reason.empty() ? "no reason recorded" : reason) + "): it holds no " +
                     std::string(analysis) + " data");
}

}  // namespace weft
