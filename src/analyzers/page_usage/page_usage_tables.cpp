#include "analyzers/page_usage/page_usage_tables.h"

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "analyzers/false_sharing/false_sharing_records.h"
#include "profile/analysis_tables.h"

namespace weft {

namespace {

constexpr const char* kSchemaSql = R"sql(
CREATE TABLE page_first_writes(
  page_address INTEGER PRIMARY KEY, thread INTEGER, pc INTEGER NOT NULL,
  object_id INTEGER NOT NULL);
CREATE TABLE page_accesses(
  page_address INTEGER NOT NULL, thread INTEGER NOT NULL, reads INTEGER NOT NULL,
  writes INTEGER NOT NULL, PRIMARY KEY(page_address, thread)) WITHOUT ROWID;
CREATE TABLE page_objects(
  object_id INTEGER PRIMARY KEY, kind TEXT NOT NULL, name TEXT, object_address INTEGER,
  object_size INTEGER, allocation_pc INTEGER, allocation_thread INTEGER);
)sql";

// Global variables are looked for at this step inside a page that holds no
// heap block: a page's data starts anywhere in it.
constexpr uint64_t kGlobalProbeStep = 512;

class PageUsageRows : public AnalysisRows {
 public:
  explicit PageUsageRows(const ProfileBuild& build) {
    for (const PageAccesses& r : build.capture.records(kPageAccesses)) {
      PageAccesses& row = accesses_[{r.page_address, r.thread}];
      row.reads += r.reads;
      row.writes += r.writes;
    }
    ObjectResolver resolver(build.capture.records(kAllocations), build.symbolizer);
    // One object per (kind, address, allocation): the pages of a block or
    // a variable share it; pages of nothing known share one per page.
    std::map<std::tuple<std::string, uint64_t, uint64_t>, uint32_t> ids;
    for (const PageFirstWrite& w : build.capture.records(kPageFirstWrites)) {
      DataObject object = resolver.over(w.page_address, kPageBytes, kGlobalProbeStep);
      const uint64_t address = object.kind == "unknown" ? w.page_address : object.object_address;
      auto [it, fresh] = ids.try_emplace({object.kind, address, object.allocation_pc},
                                         static_cast<uint32_t>(objects_.size()));
      if (fresh) {
        object.line_address = w.page_address;
        objects_.push_back(std::move(object));
      }
      first_writes_.push_back({w, it->second});
    }
  }

  void add_pcs(std::set<uint64_t>& pcs) const override {
    for (const PageFirstWriteRow& r : first_writes_) pcs.insert(r.write.pc);
    for (const DataObject& o : objects_)
      if (o.allocation_pc != 0) pcs.insert(o.allocation_pc);
  }

  void write(const sqlite::Database& db, const RunRegions&) const override {
    sqlite::Statement insert_write(db,
                                   "INSERT OR IGNORE INTO page_first_writes(page_address, thread,"
                                   " pc, object_id) VALUES (?, ?, ?, ?)");
    for (const PageFirstWriteRow& r : first_writes_)
      insert_write.run(
          r.write.page_address,
          r.write.thread == UINT32_MAX ? std::nullopt : std::optional<uint32_t>(r.write.thread),
          r.write.pc, r.object);
    sqlite::Statement insert_access(db,
                                    "INSERT INTO page_accesses(page_address, thread, reads,"
                                    " writes) VALUES (?, ?, ?, ?)");
    for (const auto& [key, row] : accesses_)
      insert_access.run(key.first, key.second, row.reads, row.writes);
    sqlite::Statement insert_object(db,
                                    "INSERT INTO page_objects(object_id, kind, name,"
                                    " object_address, object_size, allocation_pc,"
                                    " allocation_thread) VALUES (?, ?, ?, ?, ?, ?, ?)");
    for (size_t id = 0; id < objects_.size(); ++id) {
      const DataObject& o = objects_[id];
      const bool known = o.kind != "unknown";
      insert_object.run(id, o.kind, unless_empty(o.name),
                        known ? std::optional<uint64_t>(o.object_address) : std::nullopt,
                        known ? std::optional<uint64_t>(o.object_size) : std::nullopt,
                        heap_allocation_pc(o), heap_allocation_thread(o));
    }
  }

 private:
  std::map<std::pair<uint64_t, uint32_t>, PageAccesses> accesses_;
  std::vector<PageFirstWriteRow> first_writes_;
  std::vector<DataObject> objects_;
};

}  // namespace

const AnalysisTables page_usage_tables = {
    kSchemaSql,
    [](const ProfileBuild& build) -> std::unique_ptr<AnalysisRows> {
      return std::make_unique<PageUsageRows>(build);
    },
};

std::vector<PageFirstWriteRow> page_first_writes(const Profile& profile) {
  return profile.read([&](const sqlite::Database& db) {
    std::vector<PageFirstWriteRow> out;
    sqlite::Statement query(db,
                            "SELECT page_address, thread, pc, object_id FROM page_first_writes"
                            " ORDER BY page_address");
    while (query.step()) {
      PageFirstWriteRow r;
      r.write.page_address = query.column_u64(0);
      r.write.thread = query.is_null(1) ? UINT32_MAX : static_cast<uint32_t>(query.column_int(1));
      r.write.pc = query.column_u64(2);
      r.object = static_cast<uint32_t>(query.column_int(3));
      out.push_back(r);
    }
    return out;
  });
}

std::vector<PageAccesses> page_accesses(const Profile& profile) {
  return profile.read([&](const sqlite::Database& db) {
    std::vector<PageAccesses> out;
    sqlite::Statement query(db,
                            "SELECT page_address, thread, reads, writes FROM page_accesses"
                            " ORDER BY page_address, thread");
    while (query.step())
      out.push_back({query.column_u64(0), static_cast<uint32_t>(query.column_int(1)), 0,
                     query.column_u64(2), query.column_u64(3)});
    return out;
  });
}

std::vector<DataObject> page_objects(const Profile& profile) {
  return profile.read([&](const sqlite::Database& db) {
    std::vector<DataObject> out;
    sqlite::Statement query(db,
                            "SELECT object_id, kind, name, object_address, object_size,"
                            " allocation_pc, allocation_thread FROM page_objects"
                            " ORDER BY object_id");
    while (query.step()) {
      const auto id = static_cast<size_t>(query.column_int(0));
      if (id != out.size())
        throw ProfileError("corrupt page_objects table: object ids are not 0..n-1");
      out.push_back(read_data_object(query, 1));
    }
    return out;
  });
}

}  // namespace weft
