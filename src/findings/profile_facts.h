// What the renderings of every finding say about the profile it came from.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "profile/profile.h"

namespace weft {

struct ProfileFacts {
  std::string path;
  bool complete = true;
  std::string incomplete_reason;  // meta incomplete_reason
  std::string granularity;        // meta granularity as stored ("8"); "" when absent
  uint32_t threads = 0;           // Profile::thread_count
};

ProfileFacts profile_facts(const Profile& profile);

// A meta value that is a plain unsigned decimal; nullopt when absent or not one.
std::optional<uint64_t> meta_unsigned(const Profile& profile, const std::string& key);

}  // namespace weft
