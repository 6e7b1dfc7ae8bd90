// RunCapture: everything an event source and its analyzers gathered about one
// run, before symbolization. It is the hand-off between the recording side
// (runtime or valgrind backend + analyzers) and the profile builder, which
// turns program counters into source locations and regions and writes SQLite.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "common/analyses.h"

namespace weft {

// Synchronization events recorded by the event sources. Values are stored in
// the profile (sync_events.kind) by name, see sync_kind_name().
enum class SyncKind : uint32_t {
  ThreadStart = 1,  // arg0 = parent thread id
  ThreadExit = 2,
  ThreadCreate = 3,  // arg0 = created thread id
  ThreadJoin = 4,    // arg0 = joined thread id (after the join returns)
  BarrierEnter = 5,  // object = barrier address
  BarrierLeave = 6,
  MutexLock = 7,  // after acquisition; object = mutex address
  MutexUnlock = 8,
  OmpParallelBegin =
      9,  // in the encountering thread; arg0 = team size requested, object = outlined fn
  OmpParallelEnd = 10,        // in the encountering thread
  OmpImplicitTaskBegin = 11,  // in every team member; object = outlined fn, arg0 = team size
  OmpImplicitBarrier = 12,    // every team member reaches the region's closing barrier
  OmpBarrierEnter = 13,       // explicit `#pragma omp barrier` or worksharing end barrier
  OmpBarrierLeave = 14,
  // A chunk of a worksharing loop handed to the thread by the runtime: arg0 =
  // first iteration, arg1 = last iteration + incr (exclusive end); object =
  // omp_loop_object(loop key, schedule kind), where the loop key is the pc of
  // the call that set the loop up in this thread (GOMP_loop_*_start,
  // __kmpc_dispatch_init_*, __kmpc_for_static_init_*) or, for a combined
  // `parallel for` whose threads only ask for chunks (gcc: from two call
  // sites), of the GOMP_parallel_loop_* call that started it.
  OmpLoopChunk = 15,
  OmpLoopEnd = 16,
  // Condition variables (object = condvar address, pc = call site). A wait
  // is logged on entry (arg0 = its mutex) and on return; a wait loop logs
  // several pairs. A release is logged before it takes effect; its arg0 is
  // the barrier episode it ends (CondBarrier), 0 when it ends none (the
  // condvar is then no barrier's), kSpinFlagWakeUp when it follows the
  // thread's release of a learned spin flag (it wakes the threads that
  // blocked in a spin-then-block barrier; the flag's release is the episode).
  CondWaitEnter = 17,
  CondWaitLeave = 18,
  CondSignal = 19,
  CondBroadcast = 20,
  // A thread's part in a recognised condition-variable barrier episode
  // (docs/metrics.md, "Parallel section"), logged where the thread resumes
  // (its last wait left, or its release made): pc = its arrival site (the
  // lock before the wait or the release, else the wait or the release),
  // arg0 = its arrival time, arg1 = the episode (run-wide, from 1).
  CondBarrier = 21,
  ThreadJoinEnter = 22,  // before a join blocks; arg0 = thread joined (-1 unknown)
  // Where a thread whose part in a condition-variable barrier episode was
  // logged resumes counting: its next unlock (the end of the barrier's
  // code), so every member starts the next segment at the same code.
  CondBarrierLeave = 23,
  // A thread's wait on a learned spin flag (docs/metrics.md, "Spin waits"),
  // logged where it resumes: pc = the spin loop's read, object = the flag's
  // address, arg0 = the arrival time, arg1 = the flag's release (numbered
  // from 1 once the flag is learned; 0 for the writes before) that ended it.
  // Closes the thread's imbalance segment; the profile builder decides from
  // all of a flag's records whether it is a team's barrier (its releases are
  // instances) or a point-to-point flag (its waits are waiting time inside
  // one segment).
  SpinBarrier = 24,
  // A write of a learned spin flag: release arg1 of the flag (the object),
  // pc = the writing instruction, arg0 = its time. Closes the segment like
  // SpinBarrier; a wait right after the thread's own release of the same
  // flag (a counter barrier) turns the record into that wait's SpinBarrier.
  SpinRelease = 25,
};

// CondSignal / CondBroadcast arg0 of a wake-up after a spin flag's release.
inline constexpr int64_t kSpinFlagWakeUp = -1;

const char* sync_kind_name(SyncKind k);
// The kind sync_kind_name() names; nullopt for any other name.
std::optional<SyncKind> sync_kind_from_name(std::string_view name);

// The schedule an OpenMP runtime entry point names (OmpLoopChunk's object).
enum class LoopScheduleKind : uint32_t { Unknown = 0, Static = 1, Dynamic = 2, Guided = 3 };
inline constexpr uint64_t omp_loop_object(uint64_t loop_key_pc, LoopScheduleKind kind) {
  return loop_key_pc << 4 | static_cast<uint64_t>(kind);
}
inline constexpr uint64_t omp_loop_key(uint64_t object) { return object >> 4; }
inline constexpr LoopScheduleKind omp_loop_schedule(uint64_t object) {
  return static_cast<LoopScheduleKind>(object & 0xf);
}

// docs/metrics.md, "Parallel section": the synchronization points that end a
// thread's part of a section (a barrier reached, a thread created or joined,
// a parallel region begun, the thread's end).
bool closes_section(SyncKind kind);
// The closing points after which the thread waits (at a barrier, in a thread
// pool, dead) until a resuming point: its work between the two belongs to no
// section.
bool waits_after_closing(SyncKind kind);
// A condition-variable event the sync log caps like mutex events
// (SyncLog::kMaxMutexRecords): waits, leaves and releases.
bool is_capped_sync(SyncKind kind);
// Where a thread starts working on a section again: its start, leaving a
// barrier, beginning an implicit task, the end of a parallel region it ran.
bool resumes_section(SyncKind kind);

struct SyncRecord {
  uint32_t thread = 0;
  SyncKind kind = SyncKind::ThreadStart;
  uint64_t time_ns = 0;  // CLOCK_MONOTONIC
  uint64_t pc = 0;       // call site in the program, 0 when unknown
  uint64_t object = 0;
  int64_t arg0 = 0;
  int64_t arg1 = 0;
};

struct ThreadRecord {
  uint32_t id = 0;  // weft thread id: 0 = main, then creation order
  int32_t os_tid = 0;
  int32_t parent = -1;         // weft id of the creating thread, -1 for main
  uint64_t start_routine = 0;  // pc of the start routine (0 for main)
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;        // 0 when still running at the end of the capture
  uint64_t basic_blocks = 0;  // coverage callbacks seen (control-flow events)
};

// The caches the imbalance analysis simulates: line size, then L1, L2, LLC.
struct CacheLevelGeometry {
  uint64_t size_bytes = 0;  // 0: the level is absent (every access goes on)
  uint32_t ways = 0;
};
struct CacheGeometry {
  uint32_t line_bytes = 64;
  CacheLevelGeometry levels[3] = {{32 << 10, 8}, {256 << 10, 8}, {8 << 20, 16}};
};

// "64,32768:8,262144:8,8388608:16": line size, then size:ways of L1, L2, LLC
// in bytes; the form of meta.cache_levels and of the runtime's
// WEFT_CACHE_LEVELS.
std::string format_cache_levels(const CacheGeometry& geometry);
// The same into `out` (at most `size` bytes with the NUL), allocation-free;
// returns the length it needed.
size_t format_cache_levels(const CacheGeometry& geometry, char* out, size_t size);
// Reads that form; false when malformed (the line size must be a power of
// two). Allocation-free.
bool parse_cache_levels(const char* text, CacheGeometry& out);

// `value` in decimal into `out` (at most `size` bytes with the NUL),
// allocation-free; returns the length it needed.
size_t format_decimal(uint64_t value, char* out, size_t size);

// "12,40,200": three non-negative cycle counts (--miss-penalties,
// meta.miss_penalties); nullopt when malformed.
std::optional<std::array<double, 3>> parse_miss_penalties(const std::string& text);
inline constexpr std::array<double, 3> kDefaultMissPenalties = {12, 40, 200};

inline constexpr uint64_t kThreadExitSectionSite = 1;
inline constexpr uint64_t kUnknownSectionSite = 2;

// A section of records an analysis hands from the capture to the profile
// builder, declared in the analysis' records header
// (src/analyzers/NAME/NAME_records.h): its raw-capture tag and record type.
template <class Record>
struct RecordSection {
  uint32_t tag = 0;
};
// A section of bytes (variable-length records, text).
struct ByteSection {
  uint32_t tag = 0;
};

// A heap block the program allocated at call site `pc` (malloc, calloc,
// realloc, aligned_alloc, posix_memalign, memalign, operator new/new[]), in
// allocation order within `thread`; recorded for the analyses that name data
// objects by them (false sharing, page usage).
struct AllocationRecord {
  uint64_t address = 0;
  uint64_t size = 0;
  uint64_t pc = 0;
  uint32_t thread = 0;
  uint32_t sequence = 0;  // per thread
};

// A distribution the program declared (include/weft/distribution.h): who
// owns each element of [base, base + element_size * count), for the
// reuse-distance analysis' local/remote split.
struct DistributionDeclaration {
  enum Kind : uint32_t { Block = 0, Cyclic = 1, BlockCyclic = 2 };
  uint64_t base = 0;
  uint64_t element_size = 0;
  uint64_t count = 0;
  uint64_t block = 0;  // elements per block (BlockCyclic)
  uint32_t kind = Block;
  uint32_t threads = 0;

  bool valid() const {
    return element_size != 0 && threads != 0 && kind <= BlockCyclic &&
           (kind != BlockCyclic || block != 0);
  }
  // The owner of element `i` (valid() declarations only).
  uint32_t owner(uint64_t i) const {
    switch (kind) {
      case Block: {
        const uint64_t per_thread = (count + threads - 1) / threads;
        return static_cast<uint32_t>(per_thread ? i / per_thread : 0);
      }
      case Cyclic:
        return static_cast<uint32_t>(i % threads);
      default:
        return static_cast<uint32_t>((i / block) % threads);
    }
  }
};

// Tags of the analyses' sections: analysis `id`'s n-th section (n < 256).
// The raw capture's own sections (meta, threads, sync...) are below 256.
constexpr uint32_t analysis_section_tag(AnalysisId id, uint32_t n) {
  return (static_cast<uint32_t>(id) + 1) << 8 | n;
}

struct RunCapture {
  std::string source = "compile";  // "compile" or "valgrind"
  bool complete = false;
  std::string incomplete_reason;  // empty when complete
  uint32_t granularity = 64;
  uint32_t max_threads = 0;
  uint64_t dropped_events = 0;  // accesses the runtime could not account (reentrancy, limits)
  uint64_t dropped_sync_events = 0;
  // Mutex lock/unlock events counted but not logged (beyond each thread's
  // first SyncLog::kMaxMutexRecords): not a loss, nothing is derived from them.
  uint64_t unlogged_mutex_events = 0;
  // Section instances, over all threads, that a thread ran with
  // communication alone (docs/metrics.md, "Sampled section instances").
  uint64_t communication_alone_segments = 0;
  std::string process_maps;  // text of /proc/self/maps at the end of the run
  std::vector<ThreadRecord> threads;
  std::vector<SyncRecord> sync;
  AnalysisSet analyses = {AnalysisId::Communication};
  // The analyses' settings and counters by meta key (common/analyses.h), in
  // the runtime's form: "line_size" -> "64".
  std::map<std::string, std::string, std::less<>> analysis_values;
  // analysis_values[key] as a number; `fallback` when absent or not a number.
  uint64_t analysis_number(std::string_view key, uint64_t fallback) const;

  // The analyses' record and byte sections, by tag, as the capture wrote
  // them (`record_size` may differ from this build's record type: records()
  // copies the common prefix).
  struct Section {
    uint32_t record_size = 1;
    std::vector<char> bytes;
  };
  std::map<uint32_t, Section> sections;

  template <class Record>
  std::vector<Record> records(RecordSection<Record> section) const {
    std::vector<Record> out;
    auto it = sections.find(section.tag);
    if (it == sections.end() || it->second.record_size == 0) return out;
    const Section& s = it->second;
    const size_t count = s.bytes.size() / s.record_size;
    const size_t common = std::min<size_t>(s.record_size, sizeof(Record));
    out.resize(count);
    for (size_t i = 0; i < count; ++i) std::memcpy(&out[i], &s.bytes[i * s.record_size], common);
    return out;
  }
  template <class Record>
  void add(RecordSection<Record> section, const Record& record) {
    Section& s = sections[section.tag];
    s.record_size = sizeof(Record);
    const char* p = reinterpret_cast<const char*>(&record);
    s.bytes.insert(s.bytes.end(), p, p + sizeof record);
  }
  // Replaces the section's records (tests and tools build captures so).
  template <class Record>
  void set_records(RecordSection<Record> section,
                   const std::type_identity_t<std::vector<Record>>& records) {
    sections.erase(section.tag);
    for (const Record& r : records) add(section, r);
  }
  std::string_view bytes(ByteSection section) const {
    auto it = sections.find(section.tag);
    return it == sections.end()
               ? std::string_view()
               : std::string_view(it->second.bytes.data(), it->second.bytes.size());
  }
};

}  // namespace weft
