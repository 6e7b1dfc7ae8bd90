#include "profile/profile_writer.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "profile/analysis_tables.h"
#include "profile/region_naming.h"
#include "profile/run_regions.h"
#include "profile/schema.h"
#include "profile/section_instances.h"
#include "profile/sqlite_db.h"
#include "static/binary_structure.h"

#ifndef WEFT_VERSION_STRING
#define WEFT_VERSION_STRING "unknown"
#endif

namespace weft {
namespace {

using MetaEntries = std::vector<std::pair<std::string, std::string>>;

std::string format_double(double value) {
  char buffer[64];
  auto [end, error] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return error == std::errc() ? std::string(buffer, end) : std::string("0");
}

// The meta rows every profile has; capture-derived ones are filled by the caller.
MetaEntries run_meta(const RunInfo& info, const std::string& source, uint32_t granularity,
                     bool complete, const std::string& incomplete_reason) {
  return {
      {"schema_version", std::to_string(kProfileSchemaVersion)},
      {"weft_version", info.weft_version.empty() ? WEFT_VERSION_STRING : info.weft_version},
      {"source", source},
      {"command", info.command},
      {"args", nlohmann::json(info.args).dump()},
      {"cwd", info.cwd},
      {"start_time", format_utc_iso8601(info.start_time)},
      {"duration_s", format_double(info.duration_s)},
      {"exit_status", info.exit_status ? std::to_string(*info.exit_status) : std::string()},
      {"exit_signal", info.exit_signal.value_or("")},
      {"complete", complete ? "1" : "0"},
      {"incomplete_reason", complete ? std::string() : incomplete_reason},
      {"granularity", std::to_string(granularity)},
      {"topology", info.topology},
      {"llc_bytes", std::to_string(info.llc_bytes)},
      {"llc_source", info.llc_source},
      {"llc_note", info.llc_note},
      {"hostname", info.hostname},
      {"problem_size", info.problem_size ? std::to_string(*info.problem_size) : std::string()},
  };
}

// What a path that is not a regular file is, for the error.
std::string file_type_name(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// Creates the database at a temporary path in the directory of the file
// `path` leads to (profile_output_target); commit() renames it over that
// file, and the destructor removes it if commit() never happened.
class ProfileFile {
 public:
  explicit ProfileFile(const std::string& path)
      : path_(path),
        target_(profile_output_target(path)),
        temporary_(target_ + ".tmp." + std::to_string(::getpid())) {
    std::remove(temporary_.c_str());
    try {
      db_.emplace(temporary_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
      db_->exec("PRAGMA journal_mode = MEMORY; PRAGMA synchronous = OFF;");
      db_->exec(("PRAGMA application_id = " + std::to_string(kProfileApplicationId) +
                 "; PRAGMA user_version = " + std::to_string(kProfileSchemaVersion) + ";")
                    .c_str());
      db_->exec("BEGIN");
      db_->exec(kProfileSchemaSql);
      for (const AnalysisDescriptor& d : kAnalyses) db_->exec(tables_of(d.id).schema_sql);
    } catch (const sqlite::Error& error) {
      db_.reset();
      std::remove(temporary_.c_str());
      fail(error.what());
    }
  }

  ~ProfileFile() {
    if (!committed_) {
      db_.reset();
      std::remove(temporary_.c_str());
    }
  }

  // Runs `write` with SQLite errors reported against the profile's path.
  template <class Write>
  void write(Write write) {
    try {
      write(*db_);
    } catch (const sqlite::Error& error) {
      fail(error.what());
    }
  }

  void commit() {
    write([](sqlite::Database& db) { db.exec("COMMIT"); });
    db_.reset();
    // What the path leads to now (it may have been replaced since the
    // start); a regular file there keeps its permissions.
    const std::string target = profile_output_target(path_);
    struct stat existing {};
    if (::stat(target.c_str(), &existing) == 0)
      ::chmod(temporary_.c_str(), existing.st_mode & 07777);
    if (std::rename(temporary_.c_str(), target.c_str()) != 0) fail(std::strerror(errno));
    committed_ = true;
  }

 private:
  [[noreturn]] void fail(const std::string& cause) {
    throw ProfileError("cannot write profile " + path_ + ": " + cause);
  }

  std::string path_;
  std::string target_;
  std::string temporary_;
  std::optional<sqlite::Database> db_;
  bool committed_ = false;
};

void write_meta(const sqlite::Database& db, const MetaEntries& entries) {
  sqlite::Statement insert(db, "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)");
  for (const auto& [key, value] : entries) insert.run(key, value);
}

// The pcs of the run tables (sync events, threads' start routines).
std::set<uint64_t> referenced_pcs(const RunCapture& capture) {
  std::set<uint64_t> pcs;
  for (const SyncRecord& event : capture.sync) {
    if (event.pc != 0) pcs.insert(event.pc);
    bool outlined_object =
        event.kind == SyncKind::OmpParallelBegin || event.kind == SyncKind::OmpImplicitTaskBegin;
    if (outlined_object && event.object != 0) pcs.insert(event.object);
    if (event.kind == SyncKind::OmpLoopChunk && omp_loop_key(event.object) != 0)
      pcs.insert(omp_loop_key(event.object));
  }
  for (const ThreadRecord& thread : capture.threads) {
    if (thread.start_routine != 0) pcs.insert(thread.start_routine);
  }
  return pcs;
}

// modules, regions, code_locations and inline_frames: where every pc is.
void write_code_map(const sqlite::Database& db, const std::set<uint64_t>& pcs,
                    Symbolizer& symbolizer, const RunRegions& regions) {
  std::map<std::string, int64_t> module_ids;
  sqlite::Statement insert_module(db, "INSERT INTO modules(id, path, build_id) VALUES (?, ?, ?)");
  for (uint64_t pc : pcs) {
    const std::string& module = symbolizer.symbolize(pc).module;
    if (module.empty() || module_ids.contains(module)) continue;
    int64_t id = static_cast<int64_t>(module_ids.size()) + 1;
    module_ids[module] = id;
    insert_module.run(id, module, unless_empty(symbolizer.modules().build_id(module)));
  }

  sqlite::Statement insert_region(db,
                                  "INSERT INTO regions(id, kind, name, function, file,"
                                  " first_line, last_line, parent_id)"
                                  " VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  for (const auto& [name, draft] : regions.drafts()) {
    std::optional<int64_t> parent_id;
    if (!draft.parent_name.empty()) parent_id = regions.id_of(draft.parent_name);
    insert_region.run(draft.id, draft.kind, name, draft.function, unless_empty(draft.file),
                      unless_zero(draft.first_line), unless_zero(draft.last_line), parent_id);
  }

  sqlite::Statement insert_location(db,
                                    "INSERT INTO code_locations(pc, module_id, module_offset,"
                                    " function, file, line, column, region_id)"
                                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  sqlite::Statement insert_frame(db,
                                 "INSERT INTO inline_frames(pc, depth, function, file, line,"
                                 " column) VALUES (?, ?, ?, ?, ?, ?)");
  for (uint64_t pc : pcs) {
    const CodeLocation& location = symbolizer.symbolize(pc);
    std::optional<int64_t> module_id;
    if (auto it = module_ids.find(location.module); it != module_ids.end()) module_id = it->second;
    insert_location.run(pc, module_id, location.module_offset, location.function,
                        unless_empty(location.file), unless_zero(location.line),
                        unless_zero(location.column), regions.of_pc(pc));
    for (size_t depth = 0; depth < location.frames.size(); ++depth) {
      const InlineFrame& frame = location.frames[depth];
      insert_frame.run(pc, depth, frame.function, unless_empty(frame.file), unless_zero(frame.line),
                       unless_zero(frame.column));
    }
  }
}

void write_threads(const sqlite::Database& db, const RunCapture& capture, Symbolizer& symbolizer) {
  std::set<uint32_t> thread_ids;
  for (const ThreadRecord& thread : capture.threads) thread_ids.insert(thread.id);
  sqlite::Statement insert_thread(db,
                                  "INSERT OR REPLACE INTO threads(id, os_tid, parent,"
                                  " start_routine_pc, start_routine, creation_order, start_ns,"
                                  " end_ns, basic_blocks) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
  for (const ThreadRecord& thread : capture.threads) {
    std::optional<int32_t> parent;
    if (thread.parent >= 0) parent = thread.parent;
    std::optional<std::string> start_routine;
    if (thread.start_routine != 0)
      start_routine = symbolizer.symbolize(thread.start_routine).function;
    // Thread ids are given in creation order; the rank survives gaps in the ids.
    auto creation_order = std::distance(thread_ids.begin(), thread_ids.find(thread.id));
    insert_thread.run(thread.id, thread.os_tid, parent, unless_zero(thread.start_routine),
                      start_routine, creation_order, thread.start_ns, thread.end_ns,
                      thread.basic_blocks);
  }
}

void write_sync_events(const sqlite::Database& db, const RunCapture& capture) {
  sqlite::Statement insert_sync(db,
                                "INSERT INTO sync_events(thread, kind, time_ns, pc, object,"
                                " arg0, arg1) VALUES (?, ?, ?, ?, ?, ?, ?)");
  for (const SyncRecord& event : capture.sync)
    insert_sync.run(event.thread, sync_kind_name(event.kind), event.time_ns, unless_zero(event.pc),
                    event.object, event.arg0, event.arg1);
}

// The run's meta, then the analyses and each one's settings and counters
// (common/analyses.h).
MetaEntries capture_meta(const RunCapture& capture, const RunInfo& info) {
  MetaEntries meta = run_meta(info, capture.source, capture.granularity, capture.complete,
                              capture.incomplete_reason);
  meta.emplace_back("max_threads", std::to_string(capture.max_threads));
  meta.emplace_back("dropped_events", std::to_string(capture.dropped_events));
  meta.emplace_back("dropped_sync_events", std::to_string(capture.dropped_sync_events));
  meta.emplace_back("unlogged_mutex_events", std::to_string(capture.unlogged_mutex_events));
  meta.emplace_back("communication_alone_segments",
                    std::to_string(capture.communication_alone_segments));
  uint64_t barrier_instances = 0;
  for (const SectionInstance& instance : find_section_instances(capture.sync))
    barrier_instances += instance.site != kThreadExitSectionSite ? 1 : 0;
  meta.emplace_back("barrier_instances", std::to_string(barrier_instances));
  char analyses[256];
  capture.analyses.format(analyses, sizeof analyses);
  meta.emplace_back("analyses", analyses);
  capture.analyses.for_each([&](const AnalysisDescriptor& d) {
    auto add = [&](std::string_view key) {
      if (auto it = capture.analysis_values.find(key); it != capture.analysis_values.end())
        meta.emplace_back(std::string(key), it->second);
    };
    for (const AnalysisSetting& setting : d.settings) add(setting.key);
    for (std::string_view counter : d.counters) add(counter);
    add("dropped." + std::string(d.name));
  });
  return meta;
}

}  // namespace

const AnalysisTables& tables_of(AnalysisId id) {
  static constexpr const AnalysisTables* kTables[] = {
#define WEFT_ANALYSIS_TABLES_ENTRY(Id, symbol) &symbol##_tables,
      WEFT_ANALYSIS_LIST(WEFT_ANALYSIS_TABLES_ENTRY)
#undef WEFT_ANALYSIS_TABLES_ENTRY
  };
  return *kTables[static_cast<size_t>(id)];
}

std::string profile_output_target(const std::string& path) {
  auto refuse = [&](const std::string& cause) {
    return ProfileError("cannot write profile " + path + ": " + cause);
  };
  if (path.empty()) throw refuse("no file name");
  std::filesystem::path target = path;
  for (int links = 0;; ++links) {
    struct stat status {};
    if (::lstat(target.c_str(), &status) != 0) {
      if (errno != ENOENT) throw refuse(std::strerror(errno));
      // A new file: its directory must exist and take it.
      std::filesystem::path directory = target.parent_path();
      if (directory.empty()) directory = ".";
      struct stat parent {};
      if (::stat(directory.c_str(), &parent) != 0 || !S_ISDIR(parent.st_mode))
        throw refuse("directory " + directory.string() + " does not exist");
      if (::access(directory.c_str(), W_OK | X_OK) != 0)
        throw refuse("directory " + directory.string() + ": " + std::strerror(errno));
      return target.string();
    }
    if (S_ISREG(status.st_mode)) return target.string();
    const std::string leads_to =
        target == path ? "it" : "it leads to " + target.string() + ", which";
    if (!S_ISLNK(status.st_mode))
      throw refuse(leads_to + " is " + file_type_name(status.st_mode) + ", not a regular file");
    if (links == 40) throw refuse("too many levels of symbolic links");
    std::error_code error;
    const std::filesystem::path next = std::filesystem::read_symlink(target, error);
    if (error) throw refuse(error.message());
    target = next.is_absolute() ? next : target.parent_path() / next;
  }
}

std::string format_utc_iso8601(std::chrono::system_clock::time_point time) {
  std::time_t seconds = std::chrono::system_clock::to_time_t(time);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buffer;
}

void build_profile(const RunCapture& capture, const RunInfo& info, const std::string& path,
                   Symbolizer& symbolizer, const BuildProgress& progress) {
  auto stage = [&](std::string_view text) {
    if (progress) progress(text);
  };
  // Prepare every analysis that ran, then symbolize and attribute every pc
  // and section they name, before touching the file.
  BinaryStructureCache structures;
  const ProfileBuild build{capture, info, symbolizer, structures};
  std::vector<std::unique_ptr<AnalysisRows>> rows;
  capture.analyses.for_each([&](const AnalysisDescriptor& d) {
    stage("preparing " + std::string(d.name));
    rows.push_back(tables_of(d.id).prepare(build));
  });
  stage("symbolizing and attributing regions");
  std::set<uint64_t> pcs = referenced_pcs(capture);
  std::set<std::pair<uint32_t, uint64_t>> sections;
  for (const auto& r : rows) {
    r->add_pcs(pcs);
    r->add_sections(sections);
  }
  const RunRegions regions(capture, pcs, sections, symbolizer, structures);

  stage("writing tables");
  ProfileFile file(path);
  file.write([&](const sqlite::Database& db) {
    write_code_map(db, pcs, symbolizer, regions);
    write_threads(db, capture, symbolizer);
    write_sync_events(db, capture);
    for (const auto& r : rows) r->write(db, regions);
    write_meta(db, capture_meta(capture, info));
  });
  file.commit();
}

void build_profile(const RunCapture& capture, const RunInfo& info, const std::string& path,
                   const BuildProgress& progress) {
  Symbolizer symbolizer(ModuleMap::parse(capture.process_maps));
  build_profile(capture, info, path, symbolizer, progress);
}

void write_placeholder_profile(const std::string& path, const RunInfo& info,
                               const std::string& source, uint32_t granularity,
                               const std::string& incomplete_reason) {
  ProfileFile file(path);
  file.write([&](const sqlite::Database& db) {
    MetaEntries meta = run_meta(info, source, granularity, false, incomplete_reason);
    meta.emplace_back("max_threads", "0");
    meta.emplace_back("dropped_events", "0");
    meta.emplace_back("dropped_sync_events", "0");
    meta.emplace_back("unlogged_mutex_events", "0");
    write_meta(db, meta);
  });
  file.commit();
}

void mark_incomplete(const std::string& path, const std::string& reason) {
  Profile::open(path);  // refuses what is not a profile this weft can read
  try {
    sqlite::Database db(path, SQLITE_OPEN_READWRITE);
    write_meta(db, {{"complete", "0"}, {"incomplete_reason", reason}});
  } catch (const sqlite::Error& error) {
    throw ProfileError("cannot write profile " + path + ": " + error.what());
  }
}

}  // namespace weft
