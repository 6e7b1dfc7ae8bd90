#include "analyzers/false_sharing/false_sharing_tables.h"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

#include "profile/analysis_tables.h"

namespace weft {

namespace {

constexpr const char* kSchemaSql = R"sql(
CREATE TABLE line_sharing(
  line_address INTEGER NOT NULL, thread INTEGER NOT NULL, writer INTEGER NOT NULL,
  pc INTEGER NOT NULL, false_events INTEGER NOT NULL, thread_bytes INTEGER NOT NULL,
  writer_bytes INTEGER NOT NULL, PRIMARY KEY(line_address, thread, writer, pc)) WITHOUT ROWID;
CREATE TABLE sharing_totals(
  thread INTEGER NOT NULL, writer INTEGER NOT NULL, true_events INTEGER NOT NULL,
  false_events INTEGER NOT NULL, PRIMARY KEY(thread, writer)) WITHOUT ROWID;
CREATE TABLE data_objects(
  line_address INTEGER PRIMARY KEY, kind TEXT NOT NULL, name TEXT, object_address INTEGER,
  object_size INTEGER, allocation_pc INTEGER, allocation_thread INTEGER);
)sql";

// One DataObject per line of `line_sharing`, in line order. A heap line
// belongs to the latest recorded block (highest sequence) covering it, else
// to the global variable of the symbol table there.
std::vector<DataObject> resolve_data_objects(const std::vector<LineSharingRecord>& line_sharing,
                                             std::vector<AllocationRecord> blocks,
                                             uint64_t line_size, Symbolizer& symbolizer) {
  std::vector<uint64_t> lines;
  for (const LineSharingRecord& r : line_sharing) lines.push_back(r.line_address);
  std::sort(lines.begin(), lines.end());
  lines.erase(std::unique(lines.begin(), lines.end()), lines.end());

  std::sort(blocks.begin(), blocks.end(), [](const AllocationRecord& a, const AllocationRecord& b) {
    return a.address < b.address;
  });
  uint64_t largest = 0;
  for (const AllocationRecord& b : blocks) largest = std::max(largest, b.size);

  std::vector<DataObject> objects;
  for (uint64_t line : lines) {
    DataObject object;
    object.line_address = line;
    object.kind = "unknown";
    // Blocks starting before the line's end and within `largest` bytes of it.
    const AllocationRecord* best = nullptr;
    auto it = std::upper_bound(
        blocks.begin(), blocks.end(), line + line_size - 1,
        [](uint64_t value, const AllocationRecord& b) { return value < b.address; });
    while (it != blocks.begin()) {
      --it;
      if (it->address + largest < line) break;
      if (it->address + it->size <= line) continue;
      if (!best || it->sequence > best->sequence) best = &*it;
    }
    if (best) {
      object.kind = "heap";
      object.object_address = best->address;
      object.object_size = best->size;
      object.allocation_pc = best->pc;
      object.allocation_thread = best->thread;
    } else if (std::optional<DataSymbol> symbol = symbolizer.symbolize_data(line)) {
      object.kind = "global";
      object.name = symbol->name;
      object.object_address = symbol->address;
      object.object_size = symbol->size;
    } else {
      // The line may start before the variable: look at its other bytes.
      for (uint64_t offset = 8; offset < line_size && object.kind == "unknown"; offset += 8) {
        if (std::optional<DataSymbol> symbol = symbolizer.symbolize_data(line + offset)) {
          object.kind = "global";
          object.name = symbol->name;
          object.object_address = symbol->address;
          object.object_size = symbol->size;
        }
      }
    }
    objects.push_back(std::move(object));
  }
  return objects;
}

class FalseSharingRows : public AnalysisRows {
 public:
  explicit FalseSharingRows(const ProfileBuild& build)
      : line_sharing_(build.capture.records(kLineSharing)),
        totals_(build.capture.records(kSharingTotals)),
        objects_(resolve_data_objects(line_sharing_, build.capture.records(kAllocations),
                                      build.capture.analysis_number("line_size", 64),
                                      build.symbolizer)) {}

  void add_pcs(std::set<uint64_t>& pcs) const override {
    for (const LineSharingRecord& r : line_sharing_) pcs.insert(r.pc);
    for (const DataObject& o : objects_)
      if (o.allocation_pc != 0) pcs.insert(o.allocation_pc);
  }
  void write(const sqlite::Database& db, const RunRegions& regions) const override;

 private:
  std::vector<LineSharingRecord> line_sharing_;
  std::vector<SharingPairTotals> totals_;
  std::vector<DataObject> objects_;
};

void FalseSharingRows::write(const sqlite::Database& db, const RunRegions&) const {
  // One row per (line, thread, writer, pc), even if a source repeated a key.
  std::map<std::tuple<uint64_t, uint32_t, uint32_t, uint64_t>, LineSharingRecord> lines;
  for (const LineSharingRecord& r : line_sharing_) {
    LineSharingRecord& row = lines[{r.line_address, r.thread, r.writer, r.pc}];
    row.false_events += r.false_events;
    row.thread_bytes |= r.thread_bytes;
    row.writer_bytes |= r.writer_bytes;
  }
  sqlite::Statement insert_line(db,
                                "INSERT INTO line_sharing(line_address, thread, writer, pc,"
                                " false_events, thread_bytes, writer_bytes)"
                                " VALUES (?, ?, ?, ?, ?, ?, ?)");
  for (const auto& [key, row] : lines)
    insert_line.run(std::get<0>(key), std::get<1>(key), std::get<2>(key), std::get<3>(key),
                    row.false_events, row.thread_bytes, row.writer_bytes);

  std::map<std::pair<uint32_t, uint32_t>, SharingPairTotals> totals;
  for (const SharingPairTotals& t : totals_) {
    SharingPairTotals& row = totals[{t.thread, t.writer}];
    row.true_events += t.true_events;
    row.false_events += t.false_events;
  }
  sqlite::Statement insert_total(db,
                                 "INSERT INTO sharing_totals(thread, writer, true_events,"
                                 " false_events) VALUES (?, ?, ?, ?)");
  for (const auto& [key, row] : totals)
    insert_total.run(key.first, key.second, row.true_events, row.false_events);

  sqlite::Statement insert_object(db,
                                  "INSERT INTO data_objects(line_address, kind, name,"
                                  " object_address, object_size, allocation_pc,"
                                  " allocation_thread) VALUES (?, ?, ?, ?, ?, ?, ?)");
  for (const DataObject& o : objects_) {
    const bool known = o.kind != "unknown";
    insert_object.run(
        o.line_address, o.kind, o.name.empty() ? std::nullopt : std::optional<std::string>(o.name),
        known ? std::optional<uint64_t>(o.object_address) : std::nullopt,
        known ? std::optional<uint64_t>(o.object_size) : std::nullopt,
        o.kind == "heap" ? std::optional<uint64_t>(o.allocation_pc) : std::nullopt,
        o.kind == "heap" ? std::optional<uint32_t>(o.allocation_thread) : std::nullopt);
  }
}

}  // namespace

const AnalysisTables false_sharing_tables = {
    kSchemaSql,
    [](const ProfileBuild& build) -> std::unique_ptr<AnalysisRows> {
      return std::make_unique<FalseSharingRows>(build);
    },
};

uint32_t false_sharing_line_size(const Profile& profile) {
  const std::optional<uint64_t> size = profile.meta_unsigned("line_size");
  return size && *size >= 8 ? static_cast<uint32_t>(*size) : 64;
}

std::vector<LineSharingRecord> line_sharing(const Profile& profile) {
  return profile.read([&](const sqlite::Database& db) {
    std::vector<LineSharingRecord> out;
    sqlite::Statement query(db,
                            "SELECT line_address, thread, writer, pc, false_events, thread_bytes,"
                            " writer_bytes FROM line_sharing"
                            " ORDER BY line_address, thread, writer, pc");
    while (query.step()) {
      LineSharingRecord e;
      e.line_address = query.column_u64(0);
      e.thread = static_cast<uint32_t>(query.column_int(1));
      e.writer = static_cast<uint32_t>(query.column_int(2));
      e.pc = query.column_u64(3);
      e.false_events = query.column_u64(4);
      e.thread_bytes = query.column_u64(5);
      e.writer_bytes = query.column_u64(6);
      out.push_back(e);
    }
    return out;
  });
}

std::vector<SharingPairTotals> sharing_totals(const Profile& profile) {
  return profile.read([&](const sqlite::Database& db) {
    std::vector<SharingPairTotals> out;
    sqlite::Statement query(db,
                            "SELECT thread, writer, true_events, false_events FROM sharing_totals"
                            " ORDER BY writer, thread");
    while (query.step()) {
      out.push_back({static_cast<uint32_t>(query.column_int(0)),
                     static_cast<uint32_t>(query.column_int(1)), query.column_u64(2),
                     query.column_u64(3)});
    }
    return out;
  });
}

std::vector<DataObject> data_objects(const Profile& profile) {
  return profile.read([&](const sqlite::Database& db) {
    std::vector<DataObject> out;
    sqlite::Statement query(db,
                            "SELECT line_address, kind, name, object_address, object_size,"
                            " allocation_pc, allocation_thread FROM data_objects"
                            " ORDER BY line_address");
    while (query.step()) {
      DataObject o;
      o.line_address = query.column_u64(0);
      o.kind = query.column_text(1);
      o.name = query.column_text(2);
      o.object_address = query.column_u64(3);
      o.object_size = query.column_u64(4);
      o.allocation_pc = query.column_u64(5);
      o.allocation_thread = static_cast<uint32_t>(query.column_int(6));
      out.push_back(std::move(o));
    }
    return out;
  });
}

}  // namespace weft
