#include "findings/profile_facts.h"

#include <charconv>

namespace weft {

ProfileFacts profile_facts(const Profile& profile) {
  ProfileFacts facts;
  facts.path = profile.path();
  facts.complete = profile.complete();
  facts.incomplete_reason = profile.meta_value("incomplete_reason");
  facts.granularity = profile.meta_value("granularity");
  facts.threads = profile.thread_count();
  facts.barrier_instances = meta_unsigned(profile, "barrier_instances");
  return facts;
}

std::optional<uint64_t> meta_unsigned(const Profile& profile, const std::string& key) {
  const std::string text = profile.meta_value(key);
  uint64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc() || ptr != end || text.empty()) return std::nullopt;
  return value;
}

}  // namespace weft
