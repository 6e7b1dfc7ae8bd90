#include "analyzers/reuse/reuse_tables.h"

#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include "analyzers/reuse/reuse_records.h"
#include "profile/analysis_tables.h"

namespace weft {

namespace {

// bin -1: first accesses (kReuseColdBin in the capture).
constexpr const char* kSchemaSql = R"sql(
CREATE TABLE reuse_histograms(
  pc INTEGER NOT NULL, thread INTEGER NOT NULL, locality INTEGER NOT NULL, bin INTEGER NOT NULL,
  count INTEGER NOT NULL, distance_sum REAL NOT NULL,
  PRIMARY KEY(pc, thread, locality, bin)) WITHOUT ROWID;
)sql";

class ReuseRows : public AnalysisRows {
 public:
  explicit ReuseRows(const ProfileBuild& build) {
    // A thread's table holds each key once; the sum guards against a
    // capture that names one twice.
    for (const ReuseBinRecord& r : build.capture.records(kReuseBins)) {
      auto& row = rows_[{r.pc, r.thread, r.locality, r.bin}];
      row.first += r.count;
      row.second += r.distance_sum;
    }
  }

  void add_pcs(std::set<uint64_t>& pcs) const override {
    for (const auto& [key, row] : rows_) pcs.insert(std::get<0>(key));
  }

  void write(const sqlite::Database& db, const RunRegions&) const override {
    sqlite::Statement insert(db,
                             "INSERT INTO reuse_histograms(pc, thread, locality, bin, count,"
                             " distance_sum) VALUES (?, ?, ?, ?, ?, ?)");
    for (const auto& [key, row] : rows_) {
      const auto [pc, thread, locality, bin] = key;
      insert.run(pc, thread, locality, bin == kReuseColdBin ? -1 : int64_t{bin}, row.first,
                 row.second);
    }
  }

 private:
  std::map<std::tuple<uint64_t, uint32_t, uint8_t, uint16_t>, std::pair<uint64_t, double>> rows_;
};

}  // namespace

const AnalysisTables reuse_tables = {
    kSchemaSql,
    [](const ProfileBuild& build) -> std::unique_ptr<AnalysisRows> {
      return std::make_unique<ReuseRows>(build);
    },
};

std::vector<InstructionReuse> reuse_histograms(const Profile& profile) {
  return profile.read([&](const sqlite::Database& db) {
    std::vector<InstructionReuse> out;
    sqlite::Statement query(
        db,
        "SELECT h.pc, h.thread, h.locality, h.bin, h.count, h.distance_sum, m.path,"
        " l.module_offset, l.function, l.file, l.line FROM reuse_histograms h"
        " LEFT JOIN code_locations l ON l.pc = h.pc LEFT JOIN modules m ON m.id = l.module_id"
        " ORDER BY h.pc, h.thread, h.locality, h.bin");
    while (query.step()) {
      const uint64_t pc = query.column_u64(0);
      const auto thread = static_cast<uint32_t>(query.column_int(1));
      const auto locality = query.column_int(2) ? ReuseLocality::Remote : ReuseLocality::Local;
      if (out.empty() || out.back().pc != pc || out.back().thread != thread ||
          out.back().locality != locality) {
        InstructionReuse r;
        r.pc = pc;
        r.thread = thread;
        r.locality = locality;
        if (!query.is_null(6)) {
          r.module = std::filesystem::path(query.column_text(6)).filename().string();
          r.module_offset = query.column_u64(7);
          r.function = query.column_text(8);
          r.file = query.column_text(9);
          r.line = static_cast<uint32_t>(query.column_int(10));
        } else {
          r.module_offset = pc;
        }
        out.push_back(std::move(r));
      }
      ReuseDistanceHistogram& h = out.back().histogram;
      const int64_t bin = query.column_int(3);
      const uint64_t count = query.column_u64(4);
      if (bin < 0) {
        h.cold += count;
        continue;
      }
      if (bin >= static_cast<int64_t>(kReuseBinCount))
        throw ProfileError("corrupt reuse_histograms table: bin out of range");
      if (h.counts.size() <= static_cast<size_t>(bin)) {
        h.counts.resize(static_cast<size_t>(bin) + 1, 0);
        h.distance_sums.resize(static_cast<size_t>(bin) + 1, 0);
      }
      h.counts[static_cast<size_t>(bin)] += count;
      h.distance_sums[static_cast<size_t>(bin)] += query.column_double(5);
    }
    return out;
  });
}

}  // namespace weft
