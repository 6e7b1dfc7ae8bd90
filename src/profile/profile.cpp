#include "profile/profile.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "profile/region_naming.h"
#include "profile/schema.h"
#include "profile/sqlite_db.h"

namespace weft {
namespace {

std::string describe(const std::string& path, const sqlite::Error& error) {
  switch (error.code()) {
    case SQLITE_NOTADB:
      return path + " is not a weft profile";
    case SQLITE_CORRUPT:
      return path + " is a corrupt weft profile (" + error.what() + ")";
    default:
      return "cannot read profile " + path + ": " + error.what();
  }
}

// The whole of `text` as a Number (decimal), or nullopt.
template <class Number>
std::optional<Number> parse_number(const std::string& text) {
  Number value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

std::optional<uint64_t> parse_unsigned(const std::string& text) {
  return parse_number<uint64_t>(text);
}

RegionInfo read_region(const sqlite::Statement& row) {
  // Columns: id, kind, name, function, file, first_line, last_line, parent_id.
  RegionInfo region;
  region.id = row.column_int(0);
  region.kind = row.column_text(1);
  region.name = row.column_text(2);
  region.function = row.column_text(3);
  region.file = row.column_text(4);
  region.first_line = static_cast<uint32_t>(row.column_int(5));
  region.last_line = static_cast<uint32_t>(row.column_int(6));
  if (!row.is_null(7)) region.parent_id = row.column_int(7);
  return region;
}

// ---------------------------------------------------------------------------
// What a view may rely on: every meta value it reads has its documented type
// (docs/profile-format.md, meta), every thread id it indexes a matrix with is
// a recorded thread, and the counts it sums are not negative. A profile that
// breaks one is damaged: refused with one line, before a view allocates
// anything from it.

// The thread ids a profile may leave unused below its largest one (threads
// whose record was lost); the views' T x T matrices are bounded by the
// threads recorded plus this.
constexpr int64_t kMaxThreadIdGaps = 1024;

bool is_power_of_two_in(uint64_t value, uint64_t low, uint64_t high) {
  return value >= low && value <= high && (value & (value - 1)) == 0;
}

bool is_decimal(const std::string& text) {
  const std::optional<double> value = parse_number<double>(text);
  return value && std::isfinite(*value) && *value >= 0;
}

bool is_string_list(const std::string& text) {
  const nlohmann::json json = nlohmann::json::parse(text, nullptr, false);
  return json.is_array() && std::all_of(json.begin(), json.end(),
                                        [](const nlohmann::json& v) { return v.is_string(); });
}

// The type each meta value a reader interprets must have: a description for
// the error, and the check. Keys not listed are text, shown as they are.
struct MetaRule {
  std::string_view key;
  std::string_view expected;
  bool (*valid)(const std::string& value);
};

bool is_count(const std::string& v) { return parse_unsigned(v).has_value(); }

constexpr MetaRule kMetaRules[] = {
    {"complete", "0 or 1", [](const std::string& v) { return v == "0" || v == "1"; }},
    {"granularity", "a power of two from 1 to 4096",
     [](const std::string& v) {
       const auto n = parse_unsigned(v);
       return n && is_power_of_two_in(*n, 1, 4096);
     }},
    {"line_size", "a power of two from 8 to 4096",
     [](const std::string& v) {
       const auto n = parse_unsigned(v);
       return n && is_power_of_two_in(*n, 8, 4096);
     }},
    {"max_threads", "a whole number from 0 to 65534",
     [](const std::string& v) {
       const auto n = parse_unsigned(v);
       return n && *n <= 65534;
     }},
    {"exit_status", "a whole number or nothing",
     [](const std::string& v) { return v.empty() || parse_number<int64_t>(v).has_value(); }},
    {"duration_s", "a non-negative decimal number", is_decimal},
    {"args", "a JSON list of strings", is_string_list},
    {"cache_levels", "LINE,L1SIZE:WAYS,L2SIZE:WAYS,LLCSIZE:WAYS",
     [](const std::string& v) {
       CacheGeometry geometry;
       return parse_cache_levels(v.c_str(), geometry);
     }},
    {"miss_penalties", "three non-negative cycle counts P1,P2,P3",
     [](const std::string& v) { return parse_miss_penalties(v).has_value(); }},
    {"dropped_events", "a whole number", is_count},
    {"dropped_sync_events", "a whole number", is_count},
    {"unlogged_mutex_events", "a whole number", is_count},
    {"communication_alone_segments", "a whole number", is_count},
    {"barrier_instances", "a whole number", is_count},
    {"llc_bytes", "a whole number", is_count},
    {"crd_max_granules", "a whole number", is_count},
    {"crd_capped_pairs", "a whole number", is_count},
    {"crd_sample_granules", "a whole number", is_count},
    {"crd_sample_shift", "a whole number", is_count},
    {"crd_instance_sampling", "a whole number", is_count},
    {"crd_skipped_segments", "a whole number", is_count},
    {"crd_long_sample_granules", "a whole number", is_count},
    {"crd_long_sample_shift", "a whole number", is_count},
    {"crd_stretch_events", "a whole number", is_count},
    {"crd_skipped_stretches", "a whole number", is_count},
    {"trace_budget", "a whole number", is_count},
    {"trace_sampling", "a whole number", is_count},
    {"falseshare_sampling", "a whole number", is_count},
    {"falseshare_skipped_segments", "a whole number", is_count},
    {"trace_skipped_segments", "a whole number", is_count},
    {"imbalance_repeated_segments", "a whole number", is_count},
    {"imbalance_cache_sampling", "a whole number", is_count},
    {"imbalance_instance_sampling", "a whole number", is_count},
    {"imbalance_unmeasured_segments", "a whole number", is_count},
    {"imbalance_stretched_segments", "a whole number", is_count},
    {"imbalance_stretch_blocks", "a whole number", is_count},
    {"untracked_accesses", "a whole number", is_count},
};

// One line: "PATH is a damaged weft profile: WHAT".
ProfileError damaged(const std::string& path, const std::string& what) {
  return ProfileError(path + " is a damaged weft profile: " + what);
}

// A value shown in an error: at most 40 characters, on one line.
std::string quoted(std::string text) {
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  for (char& c : text)
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  return "'" + text + "'";
}

void validate_meta(const std::map<std::string, std::string>& meta, const std::string& path) {
  for (const MetaRule& rule : kMetaRules) {
    auto it = meta.find(std::string(rule.key));
    if (it != meta.end() && !rule.valid(it->second))
      throw damaged(path, "meta " + std::string(rule.key) + " is " + quoted(it->second) + ", not " +
                              std::string(rule.expected));
  }
  for (const auto& [key, value] : meta)
    if (key.starts_with("dropped.") && !is_count(value))
      throw damaged(path, "meta " + key + " is " + quoted(value) + ", not a whole number");
}

// Refuses the profile with the first row `sql` finds (a description of what
// is wrong), if any.
void refuse_any(const sqlite::Database& db, const std::string& path, const std::string& sql) {
  sqlite::Statement query(db, sql);
  if (query.step()) throw damaged(path, query.column_text(0));
}

// Rows with a count or distance that is negative.
constexpr const char* kNegativeCounts[] = {
    "SELECT 'crd_distances has a distance of ' || distance FROM crd_distances"
    " WHERE typeof(distance) <> 'integer' OR distance < 0 LIMIT 1",
    "SELECT 'pc_communication has a negative count' FROM pc_communication"
    " WHERE raw < 0 OR rar < 0 OR inval < 0 LIMIT 1",
    "SELECT 'region_footprints has a negative count' FROM region_footprints"
    " WHERE private_granules < 0 OR shared_granules < 0 LIMIT 1",
};

// T of the matrices, once every thread id the views index with is known to
// be a recorded thread and every count they sum is not negative.
uint32_t validated_thread_count(const sqlite::Database& db, const std::string& path,
                                const std::map<std::string, std::string>& meta) {
  sqlite::Statement extent(db, "SELECT COUNT(*), MIN(id), MAX(id) FROM threads");
  extent.step();
  const int64_t recorded = extent.column_int(0);
  if (recorded == 0) {
    refuse_any(db, path,
               "SELECT 'matrix_entries names thread ' || writer || ' -> ' || reader ||"
               " ', but threads is empty' FROM matrix_entries LIMIT 1");
    return 0;
  }
  const int64_t lowest = extent.column_int(1), highest = extent.column_int(2);
  if (extent.is_null(1) || lowest < 0)
    throw damaged(path, "threads has thread id " + extent.column_text(1));
  const std::optional<uint64_t> max_threads =
      parse_unsigned(meta.count("max_threads") ? meta.at("max_threads") : "");
  if ((max_threads && *max_threads > 0 && static_cast<uint64_t>(highest) >= *max_threads) ||
      highest >= recorded + kMaxThreadIdGaps)
    throw damaged(path, "threads has thread id " + std::to_string(highest) + ", but " +
                            std::to_string(recorded) + " thread" + (recorded == 1 ? "" : "s") +
                            (max_threads && *max_threads > 0
                                 ? " recorded of at most " + std::to_string(*max_threads)
                                 : " recorded"));
  const std::string not_a_thread = " NOT IN (SELECT id FROM threads)";
  for (const char* table :
       {"matrix_entries", "crd_distances", "crd_word_distances", "crd_unmeasured"}) {
    const std::string t = table;
    refuse_any(db, path,
               "SELECT '" + t + " names thread ' || writer || ' -> ' || reader ||" +
                   " ', which is not in threads' FROM " + t + " WHERE writer" + not_a_thread +
                   " OR reader" + not_a_thread + " LIMIT 1");
    refuse_any(db, path,
               "SELECT '" + t + " has a count of ' || count || ' (negative or not a number)'" +
                   " FROM " + t + " WHERE typeof(count) <> 'integer' OR count < 0 LIMIT 1");
  }
  for (const char* sql : kNegativeCounts) refuse_any(db, path, sql);
  return static_cast<uint32_t>(highest + 1);
}

constexpr const char* kRegionColumns =
    "SELECT id, kind, name, function, file, first_line, last_line, parent_id FROM regions";

}  // namespace

const char* matrix_kind_name(MatrixKind kind) {
  switch (kind) {
    case MatrixKind::Raw:
      return "raw";
    case MatrixKind::Rar:
      return "rar";
    case MatrixKind::Inval:
      return "inval";
  }
  return "raw";
}

std::optional<MatrixKind> parse_matrix_kind(std::string_view name) {
  for (MatrixKind kind : {MatrixKind::Raw, MatrixKind::Rar, MatrixKind::Inval}) {
    if (name == matrix_kind_name(kind)) return kind;
  }
  return std::nullopt;
}

struct Profile::Impl {
  std::string path;
  sqlite::Database db;
  int schema_version = 0;
  std::map<std::string, std::string> meta;
  uint32_t thread_count = 0;
  AnalysisSet analyses;  // meta analyses
  std::set<std::string, std::less<>> tables;

  Impl(std::string profile_path, sqlite::Database database)
      : path(std::move(profile_path)), db(std::move(database)) {}

  // Runs `query`, turning SQLite failures into one-line ProfileErrors.
  template <class Query>
  auto guarded(Query query) const {
    try {
      return query();
    } catch (const sqlite::Error& error) {
      throw ProfileError(describe(path, error));
    }
  }
};

Profile::Profile(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Profile::Profile(Profile&&) noexcept = default;
Profile& Profile::operator=(Profile&&) noexcept = default;
Profile::~Profile() = default;

Profile Profile::open(const std::string& path) {
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0) {
    if (errno == ENOENT) throw ProfileError("cannot open profile " + path + ": no such file");
    throw ProfileError("cannot open profile " + path + ": " + std::strerror(errno));
  }
  if (S_ISDIR(status.st_mode)) {
    throw ProfileError("cannot open profile " + path + ": is a directory");
  }

  std::unique_ptr<Impl> impl;
  try {
    impl = std::make_unique<Impl>(path, sqlite::Database(path, SQLITE_OPEN_READONLY));
  } catch (const sqlite::Error& error) {
    throw ProfileError("cannot open profile " + path + ": " + error.what());
  }
  const std::string not_a_profile = path + " is not a weft profile";

  impl->guarded([&] {
    std::set<std::string, std::less<>> tables;
    sqlite::Statement list(impl->db, "SELECT name FROM sqlite_master WHERE type = 'table'");
    while (list.step()) tables.insert(list.column_text(0));
    if (!tables.contains("meta")) throw ProfileError(not_a_profile);
    impl->tables = tables;

    sqlite::Statement meta(impl->db, "SELECT key, value FROM meta");
    while (meta.step()) impl->meta[meta.column_text(0)] = meta.column_text(1);
    auto version = impl->meta.find("schema_version");
    std::optional<uint64_t> schema_version;
    if (version != impl->meta.end()) schema_version = parse_unsigned(version->second);
    if (!schema_version || *schema_version < 1) throw ProfileError(not_a_profile);
    if (*schema_version > static_cast<uint64_t>(kProfileSchemaVersion)) {
      throw ProfileError(path + " has profile schema version " + std::to_string(*schema_version) +
                         ", this weft reads up to " + std::to_string(kProfileSchemaVersion) +
                         "; upgrade weft");
    }
    if (*schema_version < static_cast<uint64_t>(kOldestReadableSchemaVersion)) {
      throw ProfileError(path + " has profile schema version " + std::to_string(*schema_version) +
                         ", older than this weft reads (" +
                         std::to_string(kOldestReadableSchemaVersion) + "); record it again");
    }
    impl->schema_version = static_cast<int>(*schema_version);
    auto require = [&](std::string_view table) {
      if (!tables.contains(std::string(table)))
        throw ProfileError(path + " is a damaged weft profile: table '" + std::string(table) +
                           "' is missing");
    };
    // An unknown name (a newer weft's analysis) is not one this weft reads.
    auto analyses = impl->meta.find("analyses");
    const std::string_view listed =
        analyses == impl->meta.end() ? std::string_view() : std::string_view(analyses->second);
    for (size_t start = 0; start <= listed.size() && !listed.empty();) {
      const size_t comma = std::min(listed.find(',', start), listed.size());
      if (const AnalysisDescriptor* d = find_analysis(listed.substr(start, comma - start)))
        impl->analyses.add(d->id);
      start = comma + 1;
    }

    // The tables of the analyses that ran; an analysis that did not run may
    // lack its tables (a profile of a weft from before that analysis), and
    // its readers are not called (findings ask has_analysis first).
    for (std::string_view table : kRunTables) require(table);
    for (const AnalysisDescriptor& d : kAnalyses)
      if (impl->analyses.has(d.id) || d.id == AnalysisId::Communication)  // every run has comm
        for (std::string_view table : d.tables) require(table);

    validate_meta(impl->meta, path);
    impl->thread_count = validated_thread_count(impl->db, path, impl->meta);
  });
  return Profile(std::move(impl));
}

const std::string& Profile::path() const { return impl_->path; }
int Profile::schema_version() const { return impl_->schema_version; }
const std::map<std::string, std::string>& Profile::meta() const { return impl_->meta; }

std::string Profile::meta_value(const std::string& key) const {
  auto it = impl_->meta.find(key);
  return it == impl_->meta.end() ? std::string() : it->second;
}

std::optional<uint64_t> Profile::meta_unsigned(const std::string& key) const {
  return parse_unsigned(meta_value(key));
}

bool Profile::complete() const { return meta_value("complete") == "1"; }

uint32_t Profile::thread_count() const { return impl_->thread_count; }

std::vector<ThreadInfo> Profile::threads() const {
  return impl_->guarded([&] {
    std::vector<ThreadInfo> threads;
    sqlite::Statement query(impl_->db,
                            "SELECT id, os_tid, parent, start_routine_pc, start_routine,"
                            " creation_order, start_ns, end_ns, basic_blocks"
                            " FROM threads ORDER BY id");
    while (query.step()) {
      ThreadInfo thread;
      thread.id = static_cast<uint32_t>(query.column_int(0));
      thread.os_tid = static_cast<int32_t>(query.column_int(1));
      thread.parent = query.is_null(2) ? -1 : static_cast<int32_t>(query.column_int(2));
      thread.start_routine_pc = query.column_u64(3);
      thread.start_routine = query.column_text(4);
      thread.creation_order = static_cast<uint32_t>(query.column_int(5));
      thread.start_ns = query.column_u64(6);
      thread.end_ns = query.column_u64(7);
      thread.basic_blocks = query.column_u64(8);
      threads.push_back(std::move(thread));
    }
    return threads;
  });
}

std::vector<RegionInfo> Profile::regions() const {
  return impl_->guarded([&] {
    std::vector<RegionInfo> regions;
    sqlite::Statement query(impl_->db, std::string(kRegionColumns) + " ORDER BY id");
    while (query.step()) regions.push_back(read_region(query));
    return regions;
  });
}

std::optional<RegionInfo> Profile::region_by_id(int64_t id) const {
  return impl_->guarded([&]() -> std::optional<RegionInfo> {
    sqlite::Statement query(impl_->db, std::string(kRegionColumns) + " WHERE id = ?");
    query.bind(1, id);
    if (!query.step()) return std::nullopt;
    return read_region(query);
  });
}

std::vector<RegionInfo> Profile::select_regions(const std::string& name) const {
  const auto unknown = [&] {
    return ProfileError("unknown region '" + name + "' (see `weft report " + impl_->path +
                        "` for region names)");
  };
  // An empty name is no region (it would match regions without a function).
  if (name.empty()) throw unknown();
  std::vector<RegionInfo> selected = impl_->guarded([&] {
    std::vector<RegionInfo> matches;
    // The named region and everything nested in it (its loops, recursively).
    sqlite::Statement exact(impl_->db,
                            "WITH RECURSIVE nested(id) AS (SELECT id FROM regions WHERE name = ?"
                            " UNION SELECT r.id FROM regions r JOIN nested ON r.parent_id ="
                            " nested.id) " +
                                std::string(kRegionColumns) +
                                " WHERE id IN nested ORDER BY name <> ?, id");
    exact.bind(1, name);
    exact.bind(2, name);
    while (exact.step()) matches.push_back(read_region(exact));
    if (!matches.empty()) return matches;

    sqlite::Statement nested(impl_->db,
                             std::string(kRegionColumns) + " WHERE function = ? ORDER BY id");
    nested.bind(1, name);
    while (nested.step()) matches.push_back(read_region(nested));
    return matches;
  });
  if (selected.empty()) {
    // "foo" for "foo(int)": C++ names carry their parameter list.
    for (RegionInfo& region : regions()) {
      if (function_base_name(region.function) == name) selected.push_back(std::move(region));
    }
  }
  if (selected.empty()) throw unknown();
  return selected;
}

std::vector<LineVolume> Profile::reading_lines(int64_t region_id) const {
  return impl_->guarded([&] {
    std::vector<LineVolume> lines;
    sqlite::Statement query(impl_->db,
                            "SELECT l.file, l.line, SUM(c.raw + c.rar) AS events"
                            " FROM pc_communication c JOIN code_locations l ON l.pc = c.pc"
                            " WHERE l.region_id = ? AND l.file IS NOT NULL AND l.file != ''"
                            " GROUP BY l.file, l.line HAVING events > 0"
                            " ORDER BY events DESC, l.file, l.line");
    query.bind(1, region_id);
    while (query.step())
      lines.push_back(
          {query.column_text(0), static_cast<uint32_t>(query.column_int(1)), query.column_u64(2)});
    return lines;
  });
}

std::vector<RegionVolume> Profile::region_volumes() const {
  return impl_->guarded([&] {
    std::vector<RegionVolume> volumes;
    std::map<int64_t, size_t> index_of;
    sqlite::Statement all(impl_->db, std::string(kRegionColumns) + " ORDER BY id");
    while (all.step()) {
      volumes.push_back({read_region(all)});
      index_of[volumes.back().region.id] = volumes.size() - 1;
    }
    sqlite::Statement totals(impl_->db,
                             "SELECT region_id, kind, SUM(count) FROM matrix_entries"
                             " GROUP BY region_id, kind");
    while (totals.step()) {
      auto it = index_of.find(totals.column_int(0));
      std::optional<MatrixKind> kind = parse_matrix_kind(totals.column_text(1));
      if (it == index_of.end() || !kind) continue;
      RegionVolume& volume = volumes[it->second];
      uint64_t count = totals.column_u64(2);
      if (*kind == MatrixKind::Raw) volume.raw = count;
      if (*kind == MatrixKind::Rar) volume.rar = count;
      if (*kind == MatrixKind::Inval) volume.inval = count;
    }
    return volumes;
  });
}

bool Profile::has_analysis(AnalysisId id) const { return impl_->analyses.has(id); }
bool Profile::has_table(std::string_view table) const { return impl_->tables.contains(table); }
const sqlite::Database& Profile::database() const { return impl_->db; }
ProfileError Profile::read_error(const sqlite::Error& error) const {
  return ProfileError(describe(impl_->path, error));
}

namespace {

// Sections partition the same events as the code regions a second time.
constexpr const char* kCodeRegionsOnly =
    "region_id NOT IN (SELECT id FROM regions WHERE kind = 'section')";

}  // namespace

std::string region_filter(const std::vector<int64_t>& region_ids) {
  if (region_ids.empty()) return kCodeRegionsOnly;
  std::string filter = "region_id IN (";
  for (int64_t id : std::set<int64_t>(region_ids.begin(), region_ids.end()))
    filter += std::to_string(id) + ",";
  filter.back() = ')';
  return filter;
}

CommunicationMatrix Profile::matrix(const std::vector<int64_t>& region_ids, MatrixKind kind) const {
  const uint32_t threads = impl_->thread_count;
  CommunicationMatrix matrix(threads, std::vector<uint64_t>(threads, 0));
  auto accumulate = [&](sqlite::Statement& query) {
    while (query.step()) {
      int64_t writer = query.column_int(0);
      int64_t reader = query.column_int(1);
      if (writer < 0 || reader < 0 || writer >= threads || reader >= threads) continue;
      matrix[writer][reader] += query.column_u64(2);
    }
    query.reset();
  };
  impl_->guarded([&] {
    if (region_ids.empty()) {
      sqlite::Statement query(impl_->db,
                              std::string("SELECT writer, reader, SUM(count) FROM matrix_entries"
                                          " WHERE kind = ? AND ") +
                                  kCodeRegionsOnly + " GROUP BY writer, reader");
      query.bind(1, matrix_kind_name(kind));
      accumulate(query);
      return;
    }
    sqlite::Statement query(impl_->db,
                            "SELECT writer, reader, count FROM matrix_entries"
                            " WHERE region_id = ? AND kind = ?");
    for (int64_t region_id : std::set<int64_t>(region_ids.begin(), region_ids.end())) {
      query.bind(1, region_id);
      query.bind(2, matrix_kind_name(kind));
      accumulate(query);
    }
  });
  return matrix;
}

std::vector<SyncRecord> Profile::sync_events() const {
  return impl_->guarded([&] {
    std::vector<SyncRecord> out;
    sqlite::Statement query(impl_->db,
                            "SELECT thread, kind, time_ns, pc, object, arg0, arg1 FROM sync_events"
                            " ORDER BY thread, rowid");
    while (query.step()) {
      const std::optional<SyncKind> kind = sync_kind_from_name(query.column_text(1));
      if (!kind) continue;
      SyncRecord r;
      r.thread = static_cast<uint32_t>(query.column_int(0));
      r.kind = *kind;
      r.time_ns = query.column_u64(2);
      r.pc = query.column_u64(3);
      r.object = query.column_u64(4);
      r.arg0 = query.column_int(5);
      r.arg1 = query.column_int(6);
      out.push_back(r);
    }
    return out;
  });
}

std::vector<uint64_t> Profile::pcs_at_line(const std::string& file, uint32_t line) const {
  return impl_->guarded([&] {
    std::vector<uint64_t> out;
    sqlite::Statement query(impl_->db,
                            "SELECT pc, file FROM code_locations WHERE line = ? ORDER BY pc");
    query.bind(1, line);
    while (query.step()) {
      const std::string path = query.column_text(1);
      const bool matches =
          path == file || (path.size() > file.size() &&
                           path.compare(path.size() - file.size(), file.size(), file) == 0 &&
                           path[path.size() - file.size() - 1] == '/');
      if (matches) out.push_back(query.column_u64(0));
    }
    return out;
  });
}

std::optional<SourcePosition> Profile::source_position(uint64_t pc) const {
  return impl_->guarded([&]() -> std::optional<SourcePosition> {
    sqlite::Statement query(impl_->db,
                            "SELECT function, file, line FROM code_locations WHERE pc = ?");
    query.bind(1, pc);
    if (!query.step()) return std::nullopt;
    return SourcePosition{query.column_text(0), query.column_text(1),
                          static_cast<uint32_t>(query.column_int(2))};
  });
}

std::optional<Profile::ModuleAddress> Profile::module_address(uint64_t pc) const {
  return impl_->guarded([&]() -> std::optional<ModuleAddress> {
    sqlite::Statement query(impl_->db,
                            "SELECT m.path, l.module_offset FROM code_locations l"
                            " JOIN modules m ON m.id = l.module_id WHERE l.pc = ?");
    query.bind(1, pc);
    if (!query.step()) return std::nullopt;
    return ModuleAddress{query.column_text(0), query.column_u64(1)};
  });
}

}  // namespace weft
