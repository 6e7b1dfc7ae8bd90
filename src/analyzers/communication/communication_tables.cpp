// The communication analysis' tables (docs/profile-format.md): the sparse
// matrices per region (code regions and sections) and the per-instruction
// counts. Every run has this analysis; Profile reads these tables itself
// (matrix, region_volumes, thread_count).
#include <map>
#include <tuple>

#include "analyzers/communication/communication_records.h"
#include "profile/analysis_tables.h"

namespace weft {

namespace {

constexpr const char* kSchemaSql = R"sql(
CREATE TABLE matrix_entries(
  region_id INTEGER NOT NULL REFERENCES regions(id), kind TEXT NOT NULL,
  writer INTEGER NOT NULL, reader INTEGER NOT NULL, count INTEGER NOT NULL,
  PRIMARY KEY(region_id, kind, writer, reader)) WITHOUT ROWID;
CREATE INDEX matrix_entries_by_kind ON matrix_entries(kind, writer, reader);
CREATE TABLE pc_communication(
  pc INTEGER NOT NULL, thread INTEGER NOT NULL, peer INTEGER NOT NULL, raw INTEGER NOT NULL,
  rar INTEGER NOT NULL, inval INTEGER NOT NULL);
CREATE INDEX pc_communication_by_pc ON pc_communication(pc);
)sql";

class CommunicationRows : public AnalysisRows {
 public:
  explicit CommunicationRows(const RunCapture& capture)
      : counts_(capture.records(kCommunicationCounts)),
        section_counts_(capture.records(kSectionCommunication)) {}

  void add_pcs(std::set<uint64_t>& pcs) const override {
    for (const PcCommunication& c : counts_) pcs.insert(c.pc);
  }
  void add_sections(std::set<std::pair<uint32_t, uint64_t>>& sections) const override {
    for (const PcCommunication& c : section_counts_) sections.insert({c.thread, c.pc});
  }

  void write(const sqlite::Database& db, const RunRegions& regions) const override {
    std::map<std::tuple<int64_t, MatrixKind, uint32_t, uint32_t>, uint64_t> entries;
    auto add = [&](int64_t region, const PcCommunication& c) {
      if (c.raw != 0) entries[{region, MatrixKind::Raw, c.peer, c.thread}] += c.raw;
      if (c.rar != 0) entries[{region, MatrixKind::Rar, c.peer, c.thread}] += c.rar;
      if (c.inval != 0) entries[{region, MatrixKind::Inval, c.thread, c.peer}] += c.inval;
    };
    for (const PcCommunication& c : counts_) add(regions.of_pc(c.pc), c);
    for (const PcCommunication& c : section_counts_) add(regions.of_section(c.thread, c.pc), c);
    sqlite::Statement insert_entry(db,
                                   "INSERT INTO matrix_entries(region_id, kind, writer, reader,"
                                   " count) VALUES (?, ?, ?, ?, ?)");
    for (const auto& [key, count] : entries) {
      const auto& [region, kind, writer, reader] = key;
      insert_entry.run(region, matrix_kind_name(kind), writer, reader, count);
    }
    sqlite::Statement insert_count(db,
                                   "INSERT INTO pc_communication(pc, thread, peer, raw, rar,"
                                   " inval) VALUES (?, ?, ?, ?, ?, ?)");
    for (const PcCommunication& c : counts_)
      insert_count.run(c.pc, c.thread, c.peer, c.raw, c.rar, c.inval);
  }

 private:
  std::vector<PcCommunication> counts_;
  std::vector<PcCommunication> section_counts_;
};

}  // namespace

const AnalysisTables communication_tables = {
    kSchemaSql,
    [](const ProfileBuild& build) -> std::unique_ptr<AnalysisRows> {
      return std::make_unique<CommunicationRows>(build.capture);
    },
};

}  // namespace weft
