// What each analysis adds to a profile, declared once per analysis in its own
// folder (src/analyzers/NAME/NAME_tables.cpp defines `NAME_tables`, NAME as
// in WEFT_ANALYSIS_LIST): the SQL of its tables, and how its records in the
// RunCapture become rows. Its readers (for the findings) are declared in
// NAME_tables.h next to it, on Profile::read.
//
// The profile builder creates every analysis' tables in every profile (an
// analysis that did not run leaves them empty), prepares each analysis that
// ran, names the regions of all the pcs and sections they name, then has
// each write its rows.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "common/analyses.h"
#include "common/run_capture.h"
#include "profile/profile_writer.h"
#include "profile/run_regions.h"
#include "profile/sqlite_db.h"
#include "static/binary_structure.h"
#include "static/symbolizer.h"

namespace weft {

// What the builder gives every analysis.
struct ProfileBuild {
  const RunCapture& capture;
  const RunInfo& info;
  Symbolizer& symbolizer;
  BinaryStructureCache& structures;
};

// An analysis' rows of one profile, derived from the capture before the
// regions are named (prepare), written once they are.
class AnalysisRows {
 public:
  virtual ~AnalysisRows() = default;
  // The pcs its rows name: each gets a code location and a region.
  virtual void add_pcs(std::set<uint64_t>& pcs) const = 0;
  // The sections its rows name, as (thread, closing site) pairs as the
  // capture records them: each gets a section region.
  virtual void add_sections(std::set<std::pair<uint32_t, uint64_t>>& /*sections*/) const {}
  virtual void write(const sqlite::Database& db, const RunRegions& regions) const = 0;
};

struct AnalysisTables {
  // CREATE TABLE / CREATE INDEX statements of its tables (its descriptor's
  // `tables`, docs/profile-format.md).
  const char* schema_sql;
  std::unique_ptr<AnalysisRows> (*prepare)(const ProfileBuild& build);
};

#define WEFT_DECLARE_ANALYSIS_TABLES(Id, symbol) extern const AnalysisTables symbol##_tables;
WEFT_ANALYSIS_LIST(WEFT_DECLARE_ANALYSIS_TABLES)
#undef WEFT_DECLARE_ANALYSIS_TABLES

const AnalysisTables& tables_of(AnalysisId id);

// NULL for 0 and for "", as the tables store unknown values.
template <class T>
std::optional<T> unless_zero(T value) {
  return value == 0 ? std::nullopt : std::optional<T>(value);
}
inline std::optional<std::string> unless_empty(const std::string& text) {
  return text.empty() ? std::nullopt : std::optional<std::string>(text);
}

}  // namespace weft
