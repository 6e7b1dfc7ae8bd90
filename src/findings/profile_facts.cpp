#include "findings/profile_facts.h"

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

}  // namespace weft
