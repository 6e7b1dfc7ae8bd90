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

// raw, rar and inval are stored matrices; crr = rar / (raw + borrowed)
// element-wise (crr_matrix, docs/metrics.md "CRR"; 0 where that is 0).
enum class CommKind { Raw, Rar, Inval, Crr };

const char* comm_kind_name(CommKind kind);  // "raw", "rar", "inval", "crr"

struct CommOptions {
  std::optional<std::string> region = std::nullopt;  // see Profile::select_regions; none = all
  CommKind kind = CommKind::Raw;
};

// A sum over a set of cells. For crr, totals of a ratio are ratios of sums:
// `crr` = Σrar / Σ(raw + borrowed) over the cells (crr_ratio), `counts` =
// Σ(raw + borrowed).
struct CommTotal {
  uint64_t counts = 0;
  double crr = 0;  // crr only
};

struct CommFindings {
  ProfileFacts profile;
  std::optional<std::string> region;  // the --region string
  CommKind kind = CommKind::Raw;
  // raw, rar or inval; for crr its denominator, raw + borrowed: the true
  // communications of the data the selection read (crr_denominator)
  CommunicationMatrix counts;
  CrrMatrix crr;  // crr_matrix(raw, rar, borrowed), for crr only
  // For crr: false when the profile cannot tell where the data a region
  // re-read was first read (crr_borrowed), so a region's crr is rar / raw.
  bool borrowed_known = true;
  std::vector<CommTotal> row_totals;     // per writer
  std::vector<CommTotal> column_totals;  // per reader
  CommTotal total;
};

// Throws ProfileError for an unknown region or an unreadable profile.
CommFindings find_comm(const Profile& profile, const CommOptions& options);

}  // namespace weft
