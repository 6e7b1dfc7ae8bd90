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

// crd_distances rows pooled over a selection: `count` events of pair
// (writer, reader) had communication reuse distance `distance`.
struct DistanceCount {
  uint32_t writer = 0;
  uint32_t reader = 0;
  uint64_t distance = 0;
  uint64_t count = 0;
};

struct PairCount {
  uint32_t writer = 0;
  uint32_t reader = 0;
  uint64_t count = 0;
};

// Granules first touched in a selection: by one thread only, or by several.
struct Footprint {
  uint64_t private_granules = 0;
  uint64_t shared_granules = 0;
};

// One thread's part of a section instance: its busy time by the three
// measures (docs/metrics.md, "Load imbalance") and its simulated misses.
struct InstanceThreadBusy {
  uint32_t thread = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint64_t wall_ns = 0;
  uint64_t instructions = 0;
  uint64_t l1_misses = 0;
  uint64_t l2_misses = 0;
  uint64_t llc_misses = 0;
  double modeled_cycles = 0;
};

// A dynamic instance of a parallel section (region kind "section").
struct SectionInstanceInfo {
  int64_t id = 0;
  int64_t region_id = 0;
  int64_t instance = 0;                     // ordinal among the region's instances
  double imbalance = 0;                     // by modeled cycles
  std::vector<InstanceThreadBusy> threads;  // by thread id
};

// LIME's imbalance of one instance: the mean over its threads of the idle
// fraction (max - b_t) / max of their busy times b_t; 0 when all are 0.
// Shared by the writer (sections' stored imbalance) and the findings.
double idle_fraction(const std::vector<double>& busy);

// Control-flow edge (from, to) counted `count` times by `thread` in an
// instance; from = 0 is the section's entry.
struct InstanceEdgeCount {
  uint32_t thread = 0;
  uint64_t from = 0;
  uint64_t to = 0;
  uint64_t count = 0;
};

// A memory instruction's executions and simulated misses in an instance.
struct InstanceInstructionCount {
  uint32_t thread = 0;
  uint64_t pc = 0;
  uint64_t executions = 0;
  uint64_t l1_misses = 0;
  uint64_t l2_misses = 0;
  uint64_t llc_misses = 0;
};

// code_locations' source position of a pc.
struct SourcePosition {
  std::string function;
  std::string file;  // empty when unknown
  uint32_t line = 0;
};

// data_objects: what a falsely shared line belongs to: a global or static
// variable (from the symbol table), a heap block (by the call that
// allocated it, as recorded by the event source), or nothing known.
struct DataObject {
  uint64_t line_address = 0;
  std::string kind;  // "global", "heap", "unknown"
  std::string name;
  uint64_t object_address = 0;
  uint64_t object_size = 0;
  uint64_t allocation_pc = 0;  // 0 unless heap
  uint32_t allocation_thread = 0;
};

// memory_traces: one compressed address stream, its encoding decompressed
// (decode it with decode_loop_trace, common/loop_trace.h).
struct MemoryTraceInfo {
  uint32_t thread = 0;
  uint64_t pc = 0;
  uint32_t access_size = 0;
  bool reads = false;
  bool writes = false;
  uint64_t accesses = 0;
  uint64_t lost = 0;
  int64_t region_id = 0;  // the pc's region (0 when the pc is not described)
  std::vector<uint8_t> encoding;
};

class Profile {
 public:
  // Throws ProfileError for a missing file, a file that is not a weft
  // profile, a schema newer than kProfileSchemaVersion, or a damaged file.
  static Profile open(const std::string& path);

  Profile(Profile&&) noexcept;
  Profile& operator=(Profile&&) noexcept;
  ~Profile();

  const std::string& path() const;
  int schema_version() const;

  const std::map<std::string, std::string>& meta() const;
  std::string meta_value(const std::string& key) const;  // "" when absent
  bool complete() const;                                 // meta complete == 1

  std::vector<ThreadInfo> threads() const;  // by id
  // T of the matrices: covers every thread in `threads` and every thread
  // that appears in a matrix entry, so ids are always valid indexes.
  uint32_t thread_count() const;

  std::vector<RegionInfo> regions() const;  // by id
  std::optional<RegionInfo> region_by_id(int64_t id) const;

  // The region named `name` with the regions nested in it (first); else the regions whose function
  // is `name` (a function with everything nested in it); else the regions whose function without
  // its parameter list is `name` ("foo" for "foo(int)"). Throws ProfileError when nothing matches.
  std::vector<RegionInfo> select_regions(const std::string& name) const;

  // Every region with its raw/rar/inval totals.
  std::vector<RegionVolume> region_volumes() const;

  // Sum over `region_ids` (empty = whole program) of the entries of `kind`.
  CommunicationMatrix matrix(const std::vector<int64_t>& region_ids, MatrixKind kind) const;

  // True when the run ran analysis `id` (meta analyses names it).
  bool has_analysis(AnalysisId id) const;
  // CRD distance counts pooled over `region_ids` (empty = whole program),
  // ordered by writer, reader, distance.
  std::vector<DistanceCount> crd_distances(const std::vector<int64_t>& region_ids) const;
  // Events of pairs that had reached the --crd-max-granules cap, per pair.
  std::vector<PairCount> crd_unmeasured(const std::vector<int64_t>& region_ids) const;
  // Granules first touched by the regions' instructions.
  Footprint footprint(const std::vector<int64_t>& region_ids) const;

  // Every section instance, by id, with its threads.
  std::vector<SectionInstanceInfo> section_instances() const;
  std::vector<InstanceEdgeCount> instance_edges(int64_t instance_id) const;
  std::vector<InstanceInstructionCount> instance_instructions(int64_t instance_id) const;
  // The decision (last instruction) of each block the analysis saw.
  std::map<uint64_t, uint64_t> block_decisions() const;
  // The false-sharing analysis' line (meta line_size); 64 when absent.
  uint32_t line_size() const;
  // The tables' rows as the analysis produced them (common/run_capture.h).
  std::vector<LineSharingRecord> line_sharing() const;
  std::vector<SharingPairTotals> sharing_totals() const;
  std::vector<DataObject> data_objects() const;
  // The traces of `thread` / `pc` (nullopt: all), by thread then pc.
  std::vector<MemoryTraceInfo> memory_traces(std::optional<uint32_t> thread = std::nullopt,
                                             std::optional<uint64_t> pc = std::nullopt) const;
  // The chunks OpenMP runtimes handed out (sync_events of kind
  // omp_loop_chunk), per thread in time order.
  std::vector<SyncRecord> omp_loop_chunks() const;
  // The pcs whose code location is at file:line (file matched on its path's
  // end, "kernel.c" matches "/src/kernel.c").
  std::vector<uint64_t> pcs_at_line(const std::string& file, uint32_t line) const;

  // Where a pc of code_locations is; nullopt for a pc the profile does not describe.
  std::optional<SourcePosition> source_position(uint64_t pc) const;

 private:
  struct Impl;
  explicit Profile(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace weft
