#include "analyzers/false_sharing/false_sharing_tables.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string_view>
#include <tuple>

#include "analyzers/communication/communication_records.h"
#include "analyzers/traces/traces_records.h"
#include "common/loop_trace.h"
#include "profile/analysis_tables.h"

namespace weft {

namespace {

constexpr const char* kSchemaSql = R"sql(
CREATE TABLE line_sharing(
  line_address INTEGER NOT NULL, thread INTEGER NOT NULL, writer INTEGER NOT NULL,
  pc INTEGER NOT NULL, false_events INTEGER NOT NULL, thread_bytes INTEGER NOT NULL,
  writer_bytes INTEGER NOT NULL, thread_written INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY(line_address, thread, writer, pc)) WITHOUT ROWID;
CREATE TABLE unsync_writes(
  line_address INTEGER NOT NULL, thread INTEGER NOT NULL, writer INTEGER NOT NULL,
  pc INTEGER NOT NULL, events INTEGER NOT NULL, bytes INTEGER NOT NULL,
  PRIMARY KEY(line_address, thread, writer, pc)) WITHOUT ROWID;
CREATE TABLE sharing_totals(
  thread INTEGER NOT NULL, writer INTEGER NOT NULL, true_events INTEGER NOT NULL,
  false_events INTEGER NOT NULL, PRIMARY KEY(thread, writer)) WITHOUT ROWID;
CREATE TABLE data_objects(
  line_address INTEGER PRIMARY KEY, kind TEXT NOT NULL, name TEXT, object_address INTEGER,
  object_size INTEGER, allocation_pc INTEGER, allocation_thread INTEGER);
CREATE TABLE pc_objects(
  pc INTEGER NOT NULL, thread INTEGER NOT NULL, kind TEXT NOT NULL, name TEXT,
  object_address INTEGER NOT NULL, object_size INTEGER, allocation_pc INTEGER,
  allocation_thread INTEGER, samples INTEGER NOT NULL,
  PRIMARY KEY(pc, thread, kind, object_address)) WITHOUT ROWID;
CREATE TABLE line_objects(
  line_address INTEGER NOT NULL, offset INTEGER NOT NULL, kind TEXT NOT NULL, name TEXT,
  object_address INTEGER NOT NULL, object_size INTEGER NOT NULL, allocation_pc INTEGER,
  allocation_thread INTEGER, PRIMARY KEY(line_address, offset)) WITHOUT ROWID;
)sql";

// The lines the records name, each with the bytes they used (masks ORed).
std::map<uint64_t, uint64_t> used_lines(const std::vector<LineSharingRecord>& line_sharing,
                                        const std::vector<UnsyncWriteRecord>& unsync) {
  std::map<uint64_t, uint64_t> lines;
  for (const LineSharingRecord& r : line_sharing)
    lines[r.line_address] |= r.thread_bytes | r.writer_bytes | r.thread_written;
  for (const UnsyncWriteRecord& r : unsync) lines[r.line_address] |= r.bytes;
  return lines;
}

// One DataObject per line, in line order. A heap line belongs to the latest
// recorded block covering it, else to the global variable of the symbol
// table there.
std::vector<DataObject> resolve_data_objects(const std::map<uint64_t, uint64_t>& lines,
                                             uint64_t line_size, ObjectResolver& resolver) {
  std::vector<DataObject> objects;
  for (const auto& [line, used] : lines) {
    DataObject object = resolver.over(line, line_size, 8);
    object.line_address = line;
    objects.push_back(std::move(object));
  }
  return objects;
}

// The objects lying in the used bytes of each line: one per object, at the
// first byte of the line it covers (the DataObject's line_address is the
// line). Bytes of no object are skipped one mask bit at a time.
std::vector<LineObject> resolve_line_objects(const std::map<uint64_t, uint64_t>& lines,
                                             uint64_t line_size, ObjectResolver& resolver) {
  const uint64_t bytes_per_bit = line_size > 64 ? line_size / 64 : 1;
  const uint64_t bits = line_size >= 64 ? 64 : line_size;
  std::vector<LineObject> out;
  for (const auto& [line, used] : lines) {
    for (uint64_t bit = 0; bit < bits;) {
      if (!(used >> bit & 1)) {
        ++bit;
        continue;
      }
      DataObject object = resolver.at(line + bit * bytes_per_bit);
      if (object.kind == "unknown") {
        ++bit;
        continue;
      }
      LineObject row;
      row.offset =
          static_cast<uint32_t>(object.object_address > line ? object.object_address - line : 0);
      row.object = object;
      row.object.line_address = line;
      const uint64_t end = object.object_address + std::max<uint64_t>(object.object_size, 1);
      out.push_back(std::move(row));
      // The next bit past the object.
      const uint64_t next_byte = end > line ? end - line : 0;
      bit = std::max(bit + 1, (next_byte + bytes_per_bit - 1) / bytes_per_bit);
    }
  }
  return out;
}

// Per (pc, thread) whose reads counted communication, the objects of
// kPcObjectSamples addresses spread over the instruction's trace in that
// thread (the traces analysis' streams; none when it did not run).
std::vector<PcObject> resolve_pc_objects(const RunCapture& capture, ObjectResolver& resolver) {
  std::set<std::pair<uint64_t, uint32_t>> reading;
  for (const PcCommunication& c : capture.records(kCommunicationCounts))
    if (c.raw + c.rar > 0) reading.insert({c.pc, c.thread});
  std::map<std::tuple<uint64_t, uint32_t, std::string, uint64_t>, PcObject> rows;
  for_each_trace_stream(
      capture.bytes(kTraceStreams),
      [&](const TraceStreamHeader& header, std::string_view encoding, std::string_view) {
        if (!reading.count({header.pc, header.thread})) return;
        std::vector<uint64_t> samples;
        try {
          samples = sample_encoded_loop_trace(reinterpret_cast<const uint8_t*>(encoding.data()),
                                              encoding.size(), kPcObjectSamples);
        } catch (const std::runtime_error&) {
          return;  // a damaged stream names nothing
        }
        for (uint64_t address : samples) {
          DataObject object = resolver.at(address);
          PcObject& row = rows[{header.pc, header.thread, object.kind, object.object_address}];
          if (row.samples++ == 0) {
            row.pc = header.pc;
            row.thread = header.thread;
            row.object = std::move(object);
          }
        }
      });
  std::vector<PcObject> out;
  for (auto& [key, row] : rows) out.push_back(std::move(row));
  return out;
}

class FalseSharingRows : public AnalysisRows {
 public:
  explicit FalseSharingRows(const ProfileBuild& build)
      : line_sharing_(build.capture.records(kLineSharing)),
        unsync_(build.capture.records(kUnsyncWrites)),
        totals_(build.capture.records(kSharingTotals)) {
    const uint64_t line_size = build.capture.analysis_number("line_size", 64);
    ObjectResolver resolver(build.capture.records(kAllocations), build.symbolizer);
    const std::map<uint64_t, uint64_t> lines = used_lines(line_sharing_, unsync_);
    objects_ = resolve_data_objects(lines, line_size, resolver);
    line_objects_ = resolve_line_objects(lines, line_size, resolver);
    pc_objects_ = resolve_pc_objects(build.capture, resolver);
  }

  void add_pcs(std::set<uint64_t>& pcs) const override {
    for (const LineSharingRecord& r : line_sharing_) pcs.insert(r.pc);
    for (const UnsyncWriteRecord& r : unsync_) pcs.insert(r.pc);
    for (const DataObject& o : objects_)
      if (o.allocation_pc != 0) pcs.insert(o.allocation_pc);
    for (const LineObject& o : line_objects_)
      if (o.object.allocation_pc != 0) pcs.insert(o.object.allocation_pc);
    for (const PcObject& o : pc_objects_) {
      pcs.insert(o.pc);
      if (o.object.allocation_pc != 0) pcs.insert(o.object.allocation_pc);
    }
  }
  void write(const sqlite::Database& db, const RunRegions& regions) const override;

 private:
  std::vector<LineSharingRecord> line_sharing_;
  std::vector<UnsyncWriteRecord> unsync_;
  std::vector<SharingPairTotals> totals_;
  std::vector<DataObject> objects_;
  std::vector<LineObject> line_objects_;
  std::vector<PcObject> pc_objects_;
};

void FalseSharingRows::write(const sqlite::Database& db, const RunRegions&) const {
  // One row per (line, thread, writer, pc), even if a source repeated a key.
  std::map<std::tuple<uint64_t, uint32_t, uint32_t, uint64_t>, LineSharingRecord> lines;
  for (const LineSharingRecord& r : line_sharing_) {
    LineSharingRecord& row = lines[{r.line_address, r.thread, r.writer, r.pc}];
    row.false_events += r.false_events;
    row.thread_bytes |= r.thread_bytes;
    row.writer_bytes |= r.writer_bytes;
    row.thread_written |= r.thread_written;
  }
  sqlite::Statement insert_line(db,
                                "INSERT INTO line_sharing(line_address, thread, writer, pc,"
                                " false_events, thread_bytes, writer_bytes, thread_written)"
                                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  for (const auto& [key, row] : lines)
    insert_line.run(std::get<0>(key), std::get<1>(key), std::get<2>(key), std::get<3>(key),
                    row.false_events, row.thread_bytes, row.writer_bytes, row.thread_written);

  std::map<std::tuple<uint64_t, uint32_t, uint32_t, uint64_t>, UnsyncWriteRecord> unsync;
  for (const UnsyncWriteRecord& r : unsync_) {
    UnsyncWriteRecord& row = unsync[{r.line_address, r.thread, r.writer, r.pc}];
    row.events += r.events;
    row.bytes |= r.bytes;
  }
  sqlite::Statement insert_unsync(db,
                                  "INSERT INTO unsync_writes(line_address, thread, writer, pc,"
                                  " events, bytes) VALUES (?, ?, ?, ?, ?, ?)");
  for (const auto& [key, row] : unsync)
    insert_unsync.run(std::get<0>(key), std::get<1>(key), std::get<2>(key), std::get<3>(key),
                      row.events, row.bytes);

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
    insert_object.run(o.line_address, o.kind, unless_empty(o.name),
                      known ? std::optional<uint64_t>(o.object_address) : std::nullopt,
                      known ? std::optional<uint64_t>(o.object_size) : std::nullopt,
                      heap_allocation_pc(o), heap_allocation_thread(o));
  }

  sqlite::Statement insert_pc_object(
      db,
      "INSERT INTO pc_objects(pc, thread, kind, name, object_address,"
      " object_size, allocation_pc, allocation_thread, samples)"
      " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
  for (const PcObject& row : pc_objects_) {
    const DataObject& o = row.object;
    insert_pc_object.run(
        row.pc, row.thread, o.kind, unless_empty(o.name), o.object_address,
        o.kind != "unknown" ? std::optional<uint64_t>(o.object_size) : std::nullopt,
        heap_allocation_pc(o), heap_allocation_thread(o), row.samples);
  }

  sqlite::Statement insert_line_object(db,
                                       "INSERT INTO line_objects(line_address, offset, kind, name,"
                                       " object_address, object_size, allocation_pc,"
                                       " allocation_thread) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  for (const LineObject& row : line_objects_) {
    const DataObject& o = row.object;
    insert_line_object.run(o.line_address, row.offset, o.kind, unless_empty(o.name),
                           o.object_address, o.object_size, heap_allocation_pc(o),
                           heap_allocation_thread(o));
  }
}

bool has_column(const sqlite::Database& db, const char* table, const char* column) {
  sqlite::Statement query(db, "SELECT 1 FROM pragma_table_info(?) WHERE name = ?");
  query.bind(1, std::string(table));
  query.bind(2, std::string(column));
  return query.step();
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
    const bool written = has_column(db, "line_sharing", "thread_written");
    sqlite::Statement query(
        db, std::string("SELECT line_address, thread, writer, pc, false_events, thread_bytes,"
                        " writer_bytes, ") +
                (written ? "thread_written" : "0") +
                " FROM line_sharing ORDER BY line_address, thread, writer, pc");
    while (query.step()) {
      LineSharingRecord e;
      e.line_address = query.column_u64(0);
      e.thread = static_cast<uint32_t>(query.column_int(1));
      e.writer = static_cast<uint32_t>(query.column_int(2));
      e.pc = query.column_u64(3);
      e.false_events = query.column_u64(4);
      e.thread_bytes = query.column_u64(5);
      e.writer_bytes = query.column_u64(6);
      e.thread_written = query.column_u64(7);
      out.push_back(e);
    }
    return out;
  });
}

std::vector<UnsyncWriteRecord> unsync_writes(const Profile& profile) {
  // A profile of an earlier weft has no unsync_writes: it reads as empty.
  if (!profile.has_table("unsync_writes")) return {};
  return profile.read([&](const sqlite::Database& db) {
    std::vector<UnsyncWriteRecord> out;
    sqlite::Statement query(db,
                            "SELECT line_address, thread, writer, pc, events, bytes"
                            " FROM unsync_writes ORDER BY line_address, thread, writer, pc");
    while (query.step()) {
      UnsyncWriteRecord e;
      e.line_address = query.column_u64(0);
      e.thread = static_cast<uint32_t>(query.column_int(1));
      e.writer = static_cast<uint32_t>(query.column_int(2));
      e.pc = query.column_u64(3);
      e.events = query.column_u64(4);
      e.bytes = query.column_u64(5);
      out.push_back(e);
    }
    return out;
  });
}

std::vector<LineObject> line_objects(const Profile& profile) {
  // A profile of an earlier weft has no line_objects: it reads as empty.
  if (!profile.has_table("line_objects")) return {};
  return profile.read([&](const sqlite::Database& db) {
    std::vector<LineObject> out;
    sqlite::Statement query(db,
                            "SELECT line_address, offset, kind, name, object_address, object_size,"
                            " allocation_pc, allocation_thread FROM line_objects"
                            " ORDER BY line_address, offset");
    while (query.step()) {
      LineObject row;
      row.object = read_data_object(query, 2);
      row.object.line_address = query.column_u64(0);
      row.offset = static_cast<uint32_t>(query.column_int(1));
      out.push_back(std::move(row));
    }
    return out;
  });
}

std::vector<PcObjectVolume> region_pc_objects(const Profile& profile, int64_t region_id) {
  if (!profile.has_table("pc_objects")) return {};
  return profile.read([&](const sqlite::Database& db) {
    std::vector<PcObjectVolume> out;
    sqlite::Statement query(
        db,
        "SELECT o.pc, o.thread, o.kind, o.name, o.object_address, o.object_size,"
        " o.allocation_pc, o.allocation_thread, o.samples,"
        " (SELECT SUM(c.raw + c.rar) FROM pc_communication c"
        "  WHERE c.pc = o.pc AND c.thread = o.thread)"
        " FROM pc_objects o JOIN code_locations l ON l.pc = o.pc WHERE l.region_id = ?"
        " ORDER BY o.pc, o.thread, o.kind, o.object_address");
    query.bind(1, region_id);
    while (query.step()) {
      PcObjectVolume v;
      v.row.pc = query.column_u64(0);
      v.row.thread = static_cast<uint32_t>(query.column_int(1));
      v.row.object = read_data_object(query, 2);
      v.row.samples = query.column_u64(8);
      v.events = query.column_u64(9);
      out.push_back(std::move(v));
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
      DataObject o = read_data_object(query, 1);
      o.line_address = query.column_u64(0);
      out.push_back(std::move(o));
    }
    return out;
  });
}

}  // namespace weft
