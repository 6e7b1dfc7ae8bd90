// One communication matrix of a profile, for the whole program or a
// region, with its row, column and grand totals.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "findings/locality.h"
#include "findings/profile_facts.h"
#include "profile/profile.h"

namespace weft {

// raw, rar and inval are stored matrices; crr = rar / raw element-wise
// (0 where raw is 0).
enum class CommKind { Raw, Rar, Inval, Crr };

const char* comm_kind_name(CommKind kind);  // "raw", "rar", "inval", "crr"

struct CommOptions {
  std::optional<std::string> region = std::nullopt;  // see Profile::select_regions; none = all
  CommKind kind = CommKind::Raw;
};

// A sum over a set of cells. For crr, totals of a ratio are ratios of sums:
// `crr` = Σrar / Σraw over the cells (crr_ratio), `counts` = Σraw.
struct CommTotal {
  uint64_t counts = 0;
  double crr = 0;  // crr only
};

struct CommFindings {
  ProfileFacts profile;
  std::optional<std::string> region;  // the --region string
  CommKind kind = CommKind::Raw;
  CommunicationMatrix counts;            // raw, rar or inval; raw for crr
  CrrMatrix crr;                         // crr_matrix(raw, rar), for crr only
  std::vector<CommTotal> row_totals;     // per writer
  std::vector<CommTotal> column_totals;  // per reader
  CommTotal total;
};

// Throws ProfileError for an unknown region or an unreadable profile.
CommFindings find_comm(const Profile& profile, const CommOptions& options);

}  // namespace weft
