#include "profile/memory_tables.h"

#include <zstd.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "profile/profile.h"

namespace weft {

std::vector<DataObject> resolve_data_objects(const RunCapture& capture, Symbolizer& symbolizer) {
  std::vector<uint64_t> lines;
  for (const LineSharingRecord& r : capture.line_sharing) lines.push_back(r.line_address);
  std::sort(lines.begin(), lines.end());
  lines.erase(std::unique(lines.begin(), lines.end()), lines.end());

  std::vector<AllocationRecord> blocks = capture.allocations;
  std::sort(blocks.begin(), blocks.end(), [](const AllocationRecord& a, const AllocationRecord& b) {
    return a.address < b.address;
  });
  uint64_t largest = 0;
  for (const AllocationRecord& b : blocks) largest = std::max(largest, b.size);

  const uint64_t line_size = capture.analysis_number("line_size", 64);
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

void write_memory_tables(const sqlite::Database& db, const RunCapture& capture,
                         const std::vector<DataObject>& objects) {
  // One row per (line, thread, writer, pc), even if a source repeated a key.
  std::map<std::tuple<uint64_t, uint32_t, uint32_t, uint64_t>, LineSharingRecord> lines;
  for (const LineSharingRecord& r : capture.line_sharing) {
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
  for (const SharingPairTotals& t : capture.sharing_totals) {
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
  for (const DataObject& o : objects) {
    const bool known = o.kind != "unknown";
    insert_object.run(
        o.line_address, o.kind, o.name.empty() ? std::nullopt : std::optional<std::string>(o.name),
        known ? std::optional<uint64_t>(o.object_address) : std::nullopt,
        known ? std::optional<uint64_t>(o.object_size) : std::nullopt,
        o.kind == "heap" ? std::optional<uint64_t>(o.allocation_pc) : std::nullopt,
        o.kind == "heap" ? std::optional<uint32_t>(o.allocation_thread) : std::nullopt);
  }

  sqlite::Statement insert_trace(db,
                                 "INSERT OR REPLACE INTO memory_traces(thread, pc, access_size,"
                                 " reads, writes, accesses, lost, encoded_bytes, encoding)"
                                 " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
  for (const RunCapture::TraceStream& stream : capture.traces) {
    const TraceStreamHeader& h = stream.header;
    if (h.pc == 0) continue;
    insert_trace.run(h.thread, h.pc, h.access_size, (h.kinds & kTraceRead) ? 1 : 0,
                     (h.kinds & kTraceWrite) ? 1 : 0, h.accesses, h.lost, stream.encoding.size(),
                     compress_trace_encoding(stream.encoding));
  }
}

}  // namespace weft
