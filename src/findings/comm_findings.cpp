#include "findings/comm_findings.h"

#include "analyzers/crd/crd_tables.h"

namespace weft {
namespace {

// Σ counts and Σ reuse over a set of cells, turned into a CommTotal.
struct CellSums {
  uint64_t counts = 0;
  uint64_t reuse = 0;

  void add(const CommFindings& f, const CommunicationMatrix& reuse_matrix, size_t writer,
           size_t reader) {
    counts += f.counts[writer][reader];
    if (f.kind == CommKind::Crr) reuse += reuse_matrix[writer][reader];
  }
  CommTotal total(CommKind kind) const {
    return {counts, kind == CommKind::Crr ? crr_ratio(reuse, counts) : 0.0};
  }
};

}  // namespace

const char* comm_kind_name(CommKind kind) {
  switch (kind) {
    case CommKind::Raw:
      return "raw";
    case CommKind::Rar:
      return "rar";
    case CommKind::Inval:
      return "inval";
    case CommKind::Crr:
      return "crr";
  }
  return "raw";
}

CommFindings find_comm(const Profile& profile, const CommOptions& options) {
  std::vector<int64_t> region_ids;
  if (options.region) {
    for (const RegionInfo& region : profile.select_regions(*options.region)) {
      region_ids.push_back(region.id);
    }
  }
  CommFindings findings;
  findings.region = options.region;
  findings.kind = options.kind;
  CommunicationMatrix reuse;  // rar, for crr only
  switch (options.kind) {
    case CommKind::Raw:
      findings.counts = profile.matrix(region_ids, MatrixKind::Raw);
      break;
    case CommKind::Rar:
      findings.counts = profile.matrix(region_ids, MatrixKind::Rar);
      break;
    case CommKind::Inval:
      findings.counts = profile.matrix(region_ids, MatrixKind::Inval);
      break;
    case CommKind::Crr: {
      const CommunicationMatrix raw = profile.matrix(region_ids, MatrixKind::Raw);
      const std::optional<CommunicationMatrix> borrowed = crr_borrowed(profile, region_ids);
      findings.borrowed_known = borrowed.has_value() || region_ids.empty();
      reuse = profile.matrix(region_ids, MatrixKind::Rar);
      findings.crr = crr_matrix(raw, reuse, borrowed.value_or(CommunicationMatrix{}));
      findings.counts = crr_denominator(raw, borrowed.value_or(CommunicationMatrix{}));
      break;
    }
  }
  findings.profile = profile_facts(profile);

  const size_t threads = findings.counts.size();
  CellSums all;
  for (size_t writer = 0; writer < threads; ++writer) {
    CellSums row;
    for (size_t reader = 0; reader < threads; ++reader) {
      row.add(findings, reuse, writer, reader);
      all.add(findings, reuse, writer, reader);
    }
    findings.row_totals.push_back(row.total(options.kind));
  }
  for (size_t reader = 0; reader < threads; ++reader) {
    CellSums column;
    for (size_t writer = 0; writer < threads; ++writer) column.add(findings, reuse, writer, reader);
    findings.column_totals.push_back(column.total(options.kind));
  }
  findings.total = all.total(options.kind);
  return findings;
}

}  // namespace weft
