#include "analyzers/traces/traces_tables.h"

#include <zstd.h>

#include <optional>
#include <string>

#include "analyzers/traces/traces_records.h"
#include "common/loop_trace_format.h"
#include "profile/analysis_tables.h"

namespace weft {

namespace {

constexpr const char* kSchemaSql = R"sql(
CREATE TABLE memory_traces(
  thread INTEGER NOT NULL, pc INTEGER NOT NULL, access_size INTEGER NOT NULL,
  reads INTEGER NOT NULL, writes INTEGER NOT NULL, accesses INTEGER NOT NULL,
  lost INTEGER NOT NULL, encoded_bytes INTEGER NOT NULL, encoding BLOB NOT NULL,
  segments BLOB, PRIMARY KEY(thread, pc)) WITHOUT ROWID;
)sql";

std::vector<StreamSegmentRun> runs_of(const TraceStream& stream) {
  std::vector<StreamSegmentRun> runs;
  for (const TraceSegmentRun& r : stream.segments)
    runs.push_back({r.first_segment, r.segment_step, r.count, r.first_access, r.access_step});
  return runs;
}

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
                                   " reads, writes, accesses, lost, encoded_bytes, encoding,"
                                   " segments) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    for (const TraceStream& stream : streams_) {
      const TraceStreamHeader& h = stream.header;
      if (h.pc == 0) continue;
      insert_trace.run(h.thread, h.pc, h.access_size, (h.kinds & kTraceRead) ? 1 : 0,
                       (h.kinds & kTraceWrite) ? 1 : 0, h.accesses, h.lost, stream.encoding.size(),
                       compress_trace_encoding(stream.encoding),
                       (h.kinds & kTraceSegmentsLost)
                           ? std::nullopt
                           : std::optional(encode_segment_runs(runs_of(stream))));
    }
  }

 private:
  std::vector<TraceStream> streams_;
};

// Whether the profile's memory_traces has the segments column (profiles
// written before it lack it).
bool has_segments_column(const sqlite::Database& db) {
  sqlite::Statement columns(db, "SELECT name FROM pragma_table_info('memory_traces')");
  while (columns.step())
    if (columns.column_text(0) == "segments") return true;
  return false;
}

}  // namespace

std::vector<uint8_t> encode_segment_runs(const std::vector<StreamSegmentRun>& runs) {
  std::vector<uint8_t> out;
  uint8_t buffer[loop_trace_format::kMaxVarintBytes];
  auto put = [&](uint64_t v) {
    const size_t n = loop_trace_format::put_varint(buffer, v);
    out.insert(out.end(), buffer, buffer + n);
  };
  put(runs.size());
  for (const StreamSegmentRun& r : runs) {
    put(r.first_segment);
    put(r.segment_step);
    put(r.count);
    put(r.first_access);
    put(r.access_step);
  }
  return out;
}

std::vector<StreamSegmentRun> decode_segment_runs(const std::vector<uint8_t>& blob) {
  const uint8_t* p = blob.data();
  const uint8_t* end = blob.data() + blob.size();
  auto get = [&](uint64_t limit) {
    uint64_t v = 0;
    if (loop_trace_format::get_varint(p, end, v) != loop_trace_format::VarintStatus::Ok ||
        v > limit)
      throw ProfileError("corrupt memory trace segments in the profile");
    return v;
  };
  const uint64_t count = get(blob.size());
  std::vector<StreamSegmentRun> runs(count);
  for (StreamSegmentRun& r : runs) {
    r.first_segment = static_cast<uint32_t>(get(UINT32_MAX));
    r.segment_step = static_cast<uint32_t>(get(UINT32_MAX));
    r.count = static_cast<uint32_t>(get(UINT32_MAX));
    r.first_access = get(UINT64_MAX);
    r.access_step = get(UINT64_MAX);
  }
  if (p != end) throw ProfileError("corrupt memory trace segments in the profile");
  return runs;
}

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
  // The size is checked before it is allocated: it must be the one the zstd
  // frame declares, and within zstd's largest ratio (a 4-byte RLE block
  // stands for at most 128 KiB), so a profile cannot ask for more memory
  // than its own bytes account for.
  constexpr uint64_t kMaxZstdRatio = 32 * 1024;
  const unsigned long long declared = ZSTD_getFrameContentSize(blob.data(), blob.size());
  if (declared != encoded_bytes || encoded_bytes / kMaxZstdRatio > blob.size())
    throw ProfileError("corrupt memory trace in the profile (zstd)");
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
    const bool segments = has_segments_column(db);
    sqlite::Statement query(
        db,
        std::string("SELECT t.thread, t.pc, t.access_size, t.reads, t.writes, t.accesses, t.lost,"
                    " t.encoded_bytes, t.encoding, COALESCE(c.region_id, 0), ") +
            (segments ? "t.segments" : "NULL") +
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
      if (!query.is_null(10)) t.segments = decode_segment_runs(query.column_blob(10));
      out.push_back(std::move(t));
    }
    return out;
  });
}

std::vector<uint64_t> memory_trace_pcs(const Profile& profile) {
  return profile.read([&](const sqlite::Database& db) {
    std::vector<uint64_t> out;
    sqlite::Statement query(db, "SELECT DISTINCT pc FROM memory_traces ORDER BY pc");
    while (query.step()) out.push_back(query.column_u64(0));
    return out;
  });
}

}  // namespace weft
