// The data that threads share at a cost, as items ranked by what they cost
// (docs/metrics.md, "False sharing" and "Unsynchronised sharing"):
//   - false sharing: the line transfers between threads that used different
//     bytes of one line, grouped by the data object the receiving thread
//     used (a global variable, or heap blocks by the line of code that
//     allocated them) and the source lines that touched it (the object's
//     lines that share a source line are one item), summed over all of the
//     item's lines;
//   - unsynchronised sharing (possible data races): writes by one thread of
//     bytes another thread had written, with no lock held and nothing
//     ordering the two writes, grouped the same way.
// Each item says what it belongs to, how many lines it spans, the source
// lines, the bytes each thread used, the thread pairs, the instructions,
// its busiest lines, and a fix: per-thread copies or a lock for a race;
// moving the written neighbour for a read-only object; padding each
// thread's part otherwise.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analyzers/false_sharing/false_sharing_tables.h"
#include "findings/profile_facts.h"
#include "profile/profile.h"

namespace weft {

// False-sharing items with fewer transfers are not findings: at ~100 ns a
// transfer they cost at most ~10 us (docs/metrics.md).
inline constexpr uint64_t kMinFalseSharingEvents = 100;

// What a false-sharing item costs its threads, estimated: a transfer about
// 100 ns, a basic block of the program about 1 ns, so each transfer about
// kTransferBlocks blocks of the threads' own work (docs/metrics.md,
// "False sharing"). An item below kNegligibleTimeShare of its threads' blocks
// (the line where two threads' halves of a large array meet, a partial sum
// written once per loop) is too small to act on: the report leaves it out
// and `weft falseshare` says so in place of a fix.
inline constexpr double kTransferBlocks = 100;
inline constexpr double kNegligibleTimeShare = 0.001;

struct FalseSharingSite {
  uint32_t thread = 0;
  uint64_t pc = 0;
  SourcePosition position;
  std::string code;     // the source line's text, when readable
  uint64_t events = 0;  // the item's events at this instruction in this thread
};

struct FalseSharingPair {
  uint32_t writer = 0;
  uint32_t reader = 0;  // the thread that obtained the line (or wrote over the writer's bytes)
  uint64_t events = 0;
};

// The bytes of a line one thread used, as inclusive [first, last] offset
// ranges (over all of an item's lines).
struct ThreadOffsets {
  uint32_t thread = 0;
  std::vector<std::pair<uint32_t, uint32_t>> ranges;
};

// A source line of an item, with the events of its instructions.
struct SharingSourceLine {
  SourcePosition position;
  uint64_t pc = 0;  // its busiest instruction
  uint64_t events = 0;
};

// One line of an item.
struct SharingLineEvents {
  uint64_t line_address = 0;
  uint64_t events = 0;
};

enum class SharingKind { FalseSharing, Unsynchronised };
// "false-sharing", "race".
const char* sharing_kind_name(SharingKind kind);

struct SharingItem {
  SharingKind kind = SharingKind::FalseSharing;
  // False sharing: its transfers. Unsynchronised: its unsynchronised writes.
  uint64_t events = 0;
  // Unsynchronised: the false-sharing transfers on the object's lines that
  // its receiving threads obtained for the object (0 for false sharing).
  uint64_t false_events = 0;
  uint64_t line_address = 0;                   // its lowest line
  uint64_t lines = 0;                          // distinct lines
  DataObject object;                           // kind "unknown" when nothing is known
  std::optional<SourcePosition> allocated_at;  // heap blocks
  uint64_t blocks = 0;                         // heap: distinct blocks of its lines
  // False sharing: the receiving threads only read the object, and the
  // writers wrote other data of the line (its neighbours).
  bool read_only = false;
  std::vector<std::string> neighbours;          // what the writers wrote there, most events first
  std::vector<SharingSourceLine> source_lines;  // by events, descending
  std::vector<ThreadOffsets> threads;           // by thread id
  std::vector<FalseSharingPair> pairs;          // by events, descending
  std::vector<FalseSharingSite> sites;          // by events, descending
  std::vector<SharingLineEvents> top_lines;     // at most kTopLines, by events
  std::string fix;
  // False sharing: its transfers' share of its threads' time, estimated
  // (kTransferBlocks each, against the basic blocks the threads of its pairs
  // ran: transfers / (blocks + transfers)); -1 when unknown (an
  // unsynchronised item, or no block counts).
  double time_share = -1;
  uint64_t thread_blocks = 0;  // the basic blocks of those threads
  // False sharing: a hand-over (docs/metrics.md, "False sharing"): about one
  // transfer a line, nearly all from one thread, which wrote the data before
  // the others took it to use it. No line goes back and forth, and no
  // layout change removes the transfers.
  bool hand_over = false;
  uint32_t hand_over_writer = 0;
  bool negligible() const { return time_share >= 0 && time_share < kNegligibleTimeShare; }
  // A finding to act on: neither negligible nor a hand-over.
  bool actionable() const { return !negligible() && !hand_over; }
  static constexpr size_t kTopLines = 5;
};

// Unsynchronised items (by events, descending), then false-sharing items
// (by events, descending; all of them, whatever their volume). Throws
// FindingError when the profile was recorded without the false-sharing
// analysis.
std::vector<SharingItem> analyze_false_sharing(const Profile& profile);

struct FalseSharingOptions {
  uint64_t min_events = kMinFalseSharingEvents;  // false-sharing items below are only counted
};

// What `weft falseshare` shows: the unsynchronised items and the
// false-sharing items of at least min_events transfers, with the run facts
// its rendering mentions.
struct FalseSharingFindings {
  ProfileFacts profile;
  std::string untracked_accesses;  // meta untracked_accesses ("" or "0": none)
  uint64_t min_events = kMinFalseSharingEvents;
  std::vector<SharingItem> items;
  uint64_t smaller_items = 0;   // false-sharing items below min_events
  uint64_t smaller_events = 0;  // their transfers
};

FalseSharingFindings find_false_sharing(const Profile& profile,
                                        const FalseSharingOptions& options = {});

// "counters (global, 32 bytes)" / "heap block of 256 bytes allocated at
// kernel.c:40 main" / "data at 0x7f… (no symbol, no recorded allocation)".
std::string data_object_description(const SharingItem& item);
// The same for any object: `blocks` heap blocks allocated at `allocated_at`,
// `address` named when nothing is known.
std::string data_object_description(const DataObject& object,
                                    const std::optional<SourcePosition>& allocated_at,
                                    uint64_t blocks, uint64_t address);

// "1 line of 'total' (global, 8 bytes), from racy.c:60 and racy.c:61".
std::string item_headline(const SharingItem& item);

// "0-7", "8-15,24-31".
std::string format_offsets(const std::vector<std::pair<uint32_t, uint32_t>>& ranges);

// 1536000 -> "1,536,000".
std::string group_digits(uint64_t value);

// A time share as a percentage, two significant digits: 0.0000512 ->
// "0.0051%", 0.123 -> "12%".
std::string format_time_share(double share);

// An item's estimated cost (time_share known): "about 0.0051% of its
// threads' time (estimate: ~100 ns a transfer against 266,695,918 basic
// blocks at ~1 ns)"; its fix when negligible, its cost line otherwise.
std::string time_share_estimate(const SharingItem& item);

}  // namespace weft
