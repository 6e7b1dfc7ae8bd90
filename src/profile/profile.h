// Profile: read access to a weft profile (one SQLite file per run, schema in
// docs/profile-format.md). The findings read through this class only.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "common/run_capture.h"
#include "profile/sqlite_db.h"

namespace weft {

// Any failure to open, read or write a profile. what() is one line, fit to be
// printed as the cause of a failed command.
class ProfileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// matrix_entries.kind
enum class MatrixKind { Raw, Rar, Inval };
const char* matrix_kind_name(MatrixKind kind);  // "raw", "rar", "inval"
std::optional<MatrixKind> parse_matrix_kind(std::string_view name);

// "region_id IN (1,2,3)": the SQL condition selecting the rows of these
// regions of a table with a region_id column; for an empty selection, every
// code region (sections partition the same events a second time).
std::string region_filter(const std::vector<int64_t>& region_ids);

// Dense T x T counts, [writer][reader].
using CommunicationMatrix = std::vector<std::vector<uint64_t>>;

struct ThreadInfo {
  uint32_t id = 0;
  int32_t os_tid = 0;
  int32_t parent = -1;
  uint64_t start_routine_pc = 0;
  std::string start_routine;  // symbolized; empty for the main thread
  uint32_t creation_order = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint64_t basic_blocks = 0;
};

struct RegionInfo {
  int64_t id = 0;
  std::string kind;  // function | omp_parallel | loop | section
  std::string name;
  std::string function;     // for an omp_parallel region, the function it was outlined from
  std::string file;         // empty when unknown
  uint32_t first_line = 0;  // 0 when unknown
  uint32_t last_line = 0;
  std::optional<int64_t> parent_id;
};

struct RegionVolume {
  RegionInfo region;
  uint64_t raw = 0;
  uint64_t rar = 0;
  uint64_t inval = 0;
};

// code_locations' source position of a pc.
struct SourcePosition {
  std::string function;
  std::string file;  // empty when unknown
  uint32_t line = 0;
};

// Communication read at one source line: raw + rar of its instructions.
struct LineVolume {
  std::string file;
  uint32_t line = 0;
  uint64_t events = 0;
};

class Profile {
 public:
  // Throws ProfileError for a missing file, a file that is not a weft
  // profile, a schema newer than kProfileSchemaVersion, or a damaged file:
  // a table missing, a meta value a view reads that is not of its type
  // (granularity 'x'), a thread id of a matrix or CRD table that is not in
  // `threads`, thread ids far beyond the threads recorded, a negative
  // count. What a view allocates is then bounded by the profile's rows.
  static Profile open(const std::string& path);

  Profile(Profile&&) noexcept;
  Profile& operator=(Profile&&) noexcept;
  ~Profile();

  const std::string& path() const;
  int schema_version() const;

  const std::map<std::string, std::string>& meta() const;
  std::string meta_value(const std::string& key) const;  // "" when absent
  // A meta value that is a plain unsigned decimal; nullopt when absent or
  // not one.
  std::optional<uint64_t> meta_unsigned(const std::string& key) const;
  bool complete() const;  // meta complete == 1

  std::vector<ThreadInfo> threads() const;  // by id
  // T of the matrices: 1 + the largest id in `threads` (open() checked that
  // every matrix entry's threads are there), so ids are valid indexes.
  uint32_t thread_count() const;

  std::vector<RegionInfo> regions() const;  // by id
  std::optional<RegionInfo> region_by_id(int64_t id) const;

  // The region named `name` with the regions nested in it (first); else the regions whose function
  // is `name` (a function with everything nested in it); else the regions whose function without
  // its parameter list is `name` ("foo" for "foo(int)"). Throws ProfileError when nothing matches.
  std::vector<RegionInfo> select_regions(const std::string& name) const;

  // Every region with its raw/rar/inval totals.
  std::vector<RegionVolume> region_volumes() const;
  // The source lines of a code region's reading instructions, by raw + rar
  // descending (then file and line); lines without a known file are left out.
  std::vector<LineVolume> reading_lines(int64_t region_id) const;

  // Sum over `region_ids` (empty = whole program) of the entries of `kind`.
  CommunicationMatrix matrix(const std::vector<int64_t>& region_ids, MatrixKind kind) const;

  // True when the run ran analysis `id` (meta analyses names it).
  bool has_analysis(AnalysisId id) const;
  // True when the file has `table`: a profile of an earlier weft lacks the
  // tables added to its schema version since (docs/profile-format.md).
  bool has_table(std::string_view table) const;
  // The synchronization log (sync_events): each thread's records in the
  // order it logged them, threads by id; a kind this weft does not know is
  // left out.
  std::vector<SyncRecord> sync_events() const;
  // The pcs whose code location is at file:line (file matched on its path's
  // end, "kernel.c" matches "/src/kernel.c").
  std::vector<uint64_t> pcs_at_line(const std::string& file, uint32_t line) const;

  // Where a pc of code_locations is; nullopt for a pc the profile does not describe.
  std::optional<SourcePosition> source_position(uint64_t pc) const;

  // The module (its path as recorded) and ELF virtual address of a pc of
  // code_locations; nullopt when the pc is in no file-backed module.
  struct ModuleAddress {
    std::string path;
    uint64_t vaddr = 0;
  };
  std::optional<ModuleAddress> module_address(uint64_t pc) const;

  // For each analysis' own readers (src/analyzers/NAME/NAME_tables.h):
  // runs `read(db)` on the profile's database, a failure of SQLite becoming a
  // one-line ProfileError naming the profile.
  template <class Read>
  auto read(Read&& read) const {
    try {
      return read(database());
    } catch (const sqlite::Error& error) {
      throw read_error(error);
    }
  }

 private:
  struct Impl;
  explicit Profile(std::unique_ptr<Impl> impl);
  const sqlite::Database& database() const;
  ProfileError read_error(const sqlite::Error& error) const;
  std::unique_ptr<Impl> impl_;
};

}  // namespace weft
