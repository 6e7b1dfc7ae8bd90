// `weft comm`: one communication matrix of a profile, for the whole program
// or a region, as an aligned table, CSV or JSON.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "profile/profile.h"
#include "views/view_format.h"

namespace weft {

// raw, rar and inval are stored matrices; crr = rar / raw element-wise
// (0 where raw is 0).
enum class CommKind { Raw, Rar, Inval, Crr };

const char* comm_kind_name(CommKind kind);  // "raw", "rar", "inval", "crr"
std::optional<CommKind> parse_comm_kind(std::string_view name);

struct CommOptions {
  std::optional<std::string> region = std::nullopt;  // see Profile::select_regions; none = all
  CommKind kind = CommKind::Raw;
  OutputFormat format = OutputFormat::Table;
};

// Throws ProfileError for an unknown region or an unreadable profile.
std::string render_comm(const Profile& profile, const CommOptions& options);

}  // namespace weft
