#include "analyzers/traces/traces_tables.h"

#include <zstd.h>

#include <string>

#include "analyzers/traces/traces_records.h"
#include "profile/analysis_tables.h"

namespace weft {

namespace {

constexpr const char* kSchemaSql = R"sql(
CREATE TABLE memory_traces(
  thread INTEGER NOT NULL, pc INTEGER NOT NULL, access_size INTEGER NOT NULL,
  reads INTEGER NOT NULL, writes INTEGER NOT NULL, accesses INTEGER NOT NULL,
  lost INTEGER NOT NULL, encoded_bytes INTEGER NOT NULL, encoding BLOB NOT NULL,
  PRIMARY KEY(thread, pc)) WITHOUT ROWID;
)sql";

class TracesRows : public AnalysisRows {
 public:
  explicit TracesRows(const RunCapture& capture)
      : streams_(read_trace_streams(capture.bytes(kTraceStreams))) {}

  void add_pcs(std::set<uint64_t>& pcs) const override {
    for (const TraceStream& t : streams_)
      if (t.header.pc != 0) pcs.insert(t.header.pc);
  }
  void write(const sqlite::Database& db, const RunRegions&) const override {
    sqlite::Statement insert_trace(db,
                                   "INSERT OR REPLACE INTO memory_traces(thread, pc, access_size,"
                                   " reads, writes, accesses, lost, encoded_bytes, encoding)"
                                   " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
    for (const TraceStream& stream : streams_) {
      const TraceStreamHeader& h = stream.header;
      if (h.pc == 0) continue;
      insert_trace.run(h.thread, h.pc, h.access_size, (h.kinds & kTraceRead) ? 1 : 0,
                       (h.kinds & kTraceWrite) ? 1 : 0, h.accesses, h.lost, stream.encoding.size(),
                       compress_trace_encoding(stream.encoding));
    }
  }

 private:
  std::vector<TraceStream> streams_;
};

}  // namespace

const AnalysisTables traces_tables = {
    kSchemaSql,
    [](const ProfileBuild& build) -> std::unique_ptr<AnalysisRows> {
      return std::make_unique<TracesRows>(build.capture);
    },
};

std::vector<uint8_t> compress_trace_encoding(const std::vector<uint8_t>& encoding) {
  std::vector<uint8_t> out(ZSTD_compressBound(encoding.size()));
  const size_t n = ZSTD_compress(out.data(), out.size(), encoding.data(), encoding.size(), 3);
  if (ZSTD_isError(n)) throw ProfileError(std::string("zstd: ") + ZSTD_getErrorName(n));
  out.resize(n);
  return out;
}

std::vector<uint8_t> decompress_trace_encoding(const std::vector<uint8_t>& blob,
                                               uint64_t encoded_bytes) {
  std::vector<uint8_t> out(encoded_bytes);
  const size_t n = ZSTD_decompress(out.data(), out.size(), blob.data(), blob.size());
  if (ZSTD_isError(n) || n != encoded_bytes)
    throw ProfileError("corrupt memory trace in the profile (zstd)");
  return out;
}

std::vector<MemoryTraceInfo> memory_traces(const Profile& profile, std::optional<uint32_t> thread,
                                           std::optional<uint64_t> pc) {
  return profile.read([&](const sqlite::Database& db) {
    std::vector<MemoryTraceInfo> out;
    sqlite::Statement query(
        db,
        "SELECT t.thread, t.pc, t.access_size, t.reads, t.writes, t.accesses, t.lost,"
        " t.encoded_bytes, t.encoding, COALESCE(c.region_id, 0)"
        " FROM memory_traces t LEFT JOIN code_locations c ON c.pc = t.pc"
        " WHERE (?1 IS NULL OR t.thread = ?1) AND (?2 IS NULL OR t.pc = ?2)"
        " ORDER BY t.thread, t.pc");
    query.bind(1, thread);
    query.bind(2, pc);
    while (query.step()) {
      MemoryTraceInfo t;
      t.thread = static_cast<uint32_t>(query.column_int(0));
      t.pc = query.column_u64(1);
      t.access_size = static_cast<uint32_t>(query.column_int(2));
      t.reads = query.column_int(3) != 0;
      t.writes = query.column_int(4) != 0;
      t.accesses = query.column_u64(5);
      t.lost = query.column_u64(6);
      t.encoding = decompress_trace_encoding(query.column_blob(8), query.column_u64(7));
      t.region_id = query.column_int(9);
      out.push_back(std::move(t));
    }
    return out;
  });
}

}  // namespace weft
