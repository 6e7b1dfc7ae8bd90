#include "findings/false_sharing_findings.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <map>
#include <set>
#include <tuple>

#include "analyzers/false_sharing/false_sharing_tables.h"
#include "findings/finding_error.h"
#include "findings/profile_facts.h"
#include "findings/source_lines.h"
#include "profile/region_naming.h"

namespace weft {
namespace {

uint32_t bytes_per_bit(uint32_t line_size) { return line_size > 64 ? line_size / 64 : 1; }
uint32_t mask_bits(uint32_t line_size) { return line_size >= 64 ? 64 : line_size; }

// Bit b of a mask is byte b of a 64-byte line; longer lines map
// line_size / 64 bytes per bit (the analysis' scaling, docs/metrics.md).
std::vector<std::pair<uint32_t, uint32_t>> mask_ranges(uint64_t mask, uint32_t line_size) {
  const uint32_t per_bit = bytes_per_bit(line_size);
  const uint32_t bits = mask_bits(line_size);
  std::vector<std::pair<uint32_t, uint32_t>> ranges;
  for (uint32_t b = 0; b < bits;) {
    if (!(mask >> b & 1)) {
      ++b;
      continue;
    }
    uint32_t e = b;
    while (e + 1 < bits && (mask >> (e + 1) & 1)) ++e;
    ranges.emplace_back(b * per_bit, (e + 1) * per_bit - 1);
    b = e + 1;
  }
  return ranges;
}

// The first byte of the line a mask names (0 for an empty mask).
uint32_t first_byte(uint64_t mask, uint32_t line_size) {
  return mask == 0 ? 0 : static_cast<uint32_t>(std::countr_zero(mask)) * bytes_per_bit(line_size);
}

// The data objects of each line (line_objects).
class LineObjects {
 public:
  LineObjects(std::vector<LineObject> rows, uint32_t line_size) : line_size_(line_size) {
    for (LineObject& row : rows) by_line_[row.object.line_address].push_back(std::move(row));
  }

  // The object covering byte `offset` of `line`, or null.
  const DataObject* at(uint64_t line, uint32_t offset) const {
    auto it = by_line_.find(line);
    if (it == by_line_.end()) return nullptr;
    const uint64_t address = line + offset;
    for (const LineObject& row : it->second) {
      const DataObject& o = row.object;
      if (o.object_address <= address &&
          address < o.object_address + std::max<uint64_t>(1, o.object_size))
        return &o;
    }
    return nullptr;
  }

  // The mask of the bytes of `object` in `line`.
  uint64_t mask(const DataObject& o, uint64_t line) const {
    const uint64_t end = o.object_address + std::max<uint64_t>(1, o.object_size);
    const uint64_t first = o.object_address > line ? o.object_address - line : 0;
    const uint64_t last = std::min<uint64_t>(end - line, line_size_) - 1;
    if (end <= line || first >= line_size_) return 0;
    const uint32_t per_bit = bytes_per_bit(line_size_);
    const uint64_t b0 = first / per_bit, b1 = last / per_bit;
    return (~uint64_t{0} << b0) & (~uint64_t{0} >> (63 - b1));
  }

  // The objects of `line` with bytes in `mask`.
  template <class Visit>
  void each_in(uint64_t line, uint64_t mask, Visit&& visit) const {
    auto it = by_line_.find(line);
    if (it == by_line_.end()) return;
    for (const LineObject& row : it->second)
      if (this->mask(row.object, line) & mask) visit(row.object);
  }

 private:
  uint32_t line_size_;
  std::map<uint64_t, std::vector<LineObject>> by_line_;
};

// Positions of pcs, looked up once each.
class Positions {
 public:
  explicit Positions(const Profile& profile) : profile_(profile) {}
  const SourcePosition& of(uint64_t pc) {
    auto it = cache_.find(pc);
    if (it == cache_.end())
      it = cache_.emplace(pc, profile_.source_position(pc).value_or(SourcePosition{"??", "", 0}))
               .first;
    return it->second;
  }
  // "file:line" of a pc, or its address without a source line.
  const std::string& line_key(uint64_t pc) {
    auto it = keys_.find(pc);
    if (it == keys_.end()) {
      const SourcePosition& p = of(pc);
      it = keys_
               .emplace(pc, p.file.empty() ? fmt::format("0x{:x}", pc)
                                           : fmt::format("{}:{}", p.file, p.line))
               .first;
    }
    return it->second;
  }

 private:
  const Profile& profile_;
  std::map<uint64_t, SourcePosition> cache_;
  std::map<uint64_t, std::string> keys_;
};

std::string quoted(const std::string& name) { return "'" + name + "'"; }

std::string object_key(const DataObject& o, Positions& positions) {
  if (o.kind == "global") return fmt::format("g {} {:x}", o.name, o.object_address);
  if (o.kind == "heap") return "h " + positions.line_key(o.allocation_pc);
  return "u";
}

// How an object is named in a neighbour list and a fix.
std::string object_name(const DataObject& o, Positions& positions) {
  if (o.kind == "global") return quoted(o.name);
  if (o.kind == "heap") {
    const SourcePosition& at = positions.of(o.allocation_pc);
    return "the heap block allocated at " + code_location(at, o.allocation_pc);
  }
  return "the data";
}

std::string join_names(const std::vector<std::string>& names, size_t most = 3) {
  std::string text;
  const size_t shown = std::min(names.size(), most);
  for (size_t i = 0; i < shown; ++i) {
    if (i > 0) text += i + 1 == shown && names.size() <= most ? " and " : ", ";
    text += names[i];
  }
  if (names.size() > most) text += fmt::format(" and {} more", names.size() - most);
  return text;
}

std::string thread_list(const std::set<uint32_t>& threads) {
  std::vector<std::string> names;
  for (uint32_t t : threads) names.push_back(std::to_string(t));
  return join_names(names, names.size());
}

// A heap object whose block does not start on a line: its fix asks for
// an aligned allocation (one already aligned is not told to align).
bool unaligned_heap_block(const SharingItem& item, uint32_t line_size) {
  return item.object.kind == "heap" && item.object.object_address % line_size != 0;
}

std::string pad_fix(const SharingItem& item, uint32_t line_size, Positions& positions) {
  const std::string what = object_name(item.object, positions);
  std::string fix = fmt::format(
      "give each thread's part of {} its own {}-byte line: pad each element to {} bytes and "
      "align it (alignas({}) / __attribute__((aligned({})))",
      what, line_size, line_size, line_size, line_size);
  if (unaligned_heap_block(item, line_size))
    fix += fmt::format(", allocate with aligned_alloc({}, …)", line_size);
  fix +=
      "), or let each thread update a private copy (a local accumulator, or an OpenMP reduction) "
      "and combine the copies once at the end";
  return fix;
}

// Whether the threads' parts of the item's object interleave through it:
// more of its lines are shared than two per thread, so it is not a few
// per-thread slots, nor the lines where contiguous parts meet (at most one
// per boundary), but elements dealt out to the threads in turn (a cyclic or
// small-chunk split of a loop, per-thread data indexed [element][thread]).
bool interleaved(const SharingItem& item) {
  return !item.threads.empty() && item.lines > 2 * item.threads.size();
}

// The bytes of one element, from the narrowest run of bytes a thread used
// in a line (0 when no thread used any).
uint32_t element_bytes(const SharingItem& item) {
  uint32_t narrowest = 0;
  for (const ThreadOffsets& t : item.threads)
    for (const auto& [first, last] : t.ranges)
      if (narrowest == 0 || last - first + 1 < narrowest) narrowest = last - first + 1;
  return narrowest;
}

// For interleaved parts, padding every element would multiply the data by
// the elements a line holds: the fix a performance engineer makes is to
// give each thread contiguous elements, which leaves at most the lines
// where two parts meet shared (docs/metrics.md, "False sharing").
std::string contiguous_fix(const SharingItem& item, uint32_t line_size, Positions& positions) {
  const std::string what = object_name(item.object, positions);
  const uint32_t element = element_bytes(item);
  const uint32_t per_line = element > 0 && element < line_size ? line_size / element : 1;
  std::string chunk = "chunks of at least one line";
  if (per_line > 1)
    chunk = fmt::format("chunks of at least {} elements (a {}-byte line)", per_line, line_size);
  std::string fix = fmt::format(
      "the threads' elements of {} interleave in each of its {} shared lines: give each thread "
      "a contiguous part, so that only the lines where two parts meet are shared, wherever the "
      "elements are dealt out: a loop split in blocks rather than cyclically (OpenMP "
      "schedule(static) without a chunk size, or {}), per-thread data indexed "
      "[thread][element] rather than [element][thread]",
      what, group_digits(item.lines), chunk);
  if (unaligned_heap_block(item, line_size))
    fix += fmt::format("; allocate it with aligned_alloc({}, …) so that parts start on a line",
                       line_size);
  if (per_line > 1)
    fix += fmt::format(" (padding each element to {} bytes would also do, at {} times the memory)",
                       line_size, per_line);
  return fix;
}

// A hand-over: at most kHandOverTransfersPerLine transfers a line, and at
// least kHandOverWriterShare of them from one writer (returned). Lines that
// go back and forth between threads take one transfer at every turn.
constexpr double kHandOverTransfersPerLine = 1.25;
constexpr double kHandOverWriterShare = 0.9;
std::optional<uint32_t> hand_over_writer(const SharingItem& item) {
  if (item.events == 0 || static_cast<double>(item.events) >
                              kHandOverTransfersPerLine * static_cast<double>(item.lines))
    return std::nullopt;
  std::map<uint32_t, uint64_t> from;
  for (const FalseSharingPair& p : item.pairs) from[p.writer] += p.events;
  for (const auto& [writer, events] : from)
    if (static_cast<double>(events) >= kHandOverWriterShare * static_cast<double>(item.events))
      return writer;
  return std::nullopt;
}

std::string hand_over_fix(const SharingItem& item, Positions& positions) {
  const std::string what = object_name(item.object, positions);
  return fmt::format(
      "none by layout: each of its {} lines moved about once ({} transfers), from thread {}, "
      "which wrote the data before the others used it: a hand-over, not lines going back and "
      "forth. Once the receiving thread reads what thread {} wrote in a line (as a thread using "
      "data another initialised does), the line moves whatever the layout, so padding or "
      "another split saves nothing; if {} is used many times, let each thread initialise the "
      "part it uses (first touch)",
      group_digits(item.lines), group_digits(item.events), item.hand_over_writer,
      item.hand_over_writer, what);
}

// The threads' parts meet where the object's own lines begin, but the
// object does not start a line: aligning it makes every part start one.
std::string align_fix(const SharingItem& item, uint32_t line_size, Positions& positions) {
  const std::string what = object_name(item.object, positions);
  const std::string how =
      item.object.kind == "heap"
          ? fmt::format("allocate it with aligned_alloc({}, …) or posix_memalign", line_size)
          : fmt::format("declare it alignas({}) (C11 _Alignas({}), or __attribute__((aligned({})))",
                        line_size, line_size, line_size);
  return fmt::format(
      "{} starts {} bytes into a {}-byte line, and in each of its {} shared lines the threads' "
      "parts meet where one of its own lines would begin: {}, and every part starts a line of "
      "its own (no padding needed)",
      what, item.object.object_address % line_size, line_size, group_digits(item.lines), how);
}

std::string read_only_fix(const SharingItem& item, uint32_t line_size, Positions& positions) {
  const std::string what = object_name(item.object, positions);
  const std::string neighbour =
      item.neighbours.empty() ? "the written data" : join_names(item.neighbours);
  return fmt::format(
      "{} is only read, but threads write {} in the same {}-byte line: move or align the written "
      "neighbour ({}) so that it starts a line of its own (alignas({}) on it, or place it away "
      "from {}); padding {} itself does not help while the neighbour stays in its line",
      what, neighbour, line_size, neighbour, line_size, what, what);
}

// An item's time share (SharingItem::time_share) from the basic blocks of
// the threads of its pairs; a negligible one's fix says so.
void estimate_time_share(SharingItem& item, const std::map<uint32_t, uint64_t>& blocks_of) {
  std::set<uint32_t> threads;
  for (const FalseSharingPair& p : item.pairs) threads.insert({p.writer, p.reader});
  uint64_t blocks = 0;
  for (uint32_t t : threads)
    if (auto b = blocks_of.find(t); b != blocks_of.end()) blocks += b->second;
  if (blocks == 0) return;  // a source without block counts
  item.thread_blocks = blocks;
  // Of the time the threads would take with the transfers: at most 1.
  const double transfers = kTransferBlocks * static_cast<double>(item.events);
  item.time_share = transfers / (static_cast<double>(blocks) + transfers);
  if (item.negligible())
    item.fix = fmt::format("none needed: its {} transfer{} {}", group_digits(item.events),
                           item.events == 1 ? " is" : "s are", time_share_estimate(item));
}

std::string race_fix(const SharingItem& item, const std::set<uint32_t>& writers,
                     Positions& positions) {
  const std::string what = object_name(item.object, positions);
  const std::string reduction = item.object.kind == "global"
                                    ? fmt::format("reduction(+:{})", item.object.name)
                                    : std::string("reduction");
  return fmt::format(
      "threads {} write the same bytes of {} with no lock held and nothing ordering the writes "
      "(a data race: updates are lost): if it accumulates, give each thread a private copy (a "
      "local variable, or an OpenMP {}) and combine the copies once at the end; if the threads "
      "must share it, protect each update with a lock or make it atomic (#pragma omp atomic, "
      "_Atomic / std::atomic)",
      thread_list(writers), what, reduction);
}

// An item being gathered.
struct Gathered {
  SharingKind kind = SharingKind::FalseSharing;
  DataObject object;
  uint64_t events = 0;
  uint64_t false_events = 0;
  std::map<uint64_t, uint64_t> lines;  // line -> events
  std::set<uint64_t> blocks;
  std::map<uint32_t, uint64_t> bytes;                       // thread -> mask
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> pairs;  // (writer, reader) -> events
  std::map<std::pair<uint32_t, uint64_t>, uint64_t> sites;  // (thread, pc) -> events
  struct Source {
    std::map<uint64_t, uint64_t> pcs;  // pc -> events
    uint64_t events = 0;
  };
  std::map<std::string, Source> sources;  // by "file:line"
  std::set<uint32_t> writers;             // unsynchronised: both sides
  bool written = false;                   // false sharing: some event wrote the object's bytes
  // False sharing: the events of the records in which the receiving
  // thread's bytes and the writer's lie on either side of the byte where
  // the object's own lines begin (object address mod line size, not 0):
  // the parts meet where a line of the object would, were it aligned.
  uint64_t split_events = 0;
  std::map<std::string, uint64_t> neighbours;  // name -> events
};

// Whether the threads' parts meet where the object's own lines would
// begin in nearly all of an item's events (kSplitShare): a boundary line
// where a thread was caught mid-way through its element (a preempted
// update, a read of its neighbour's element next to the write) is a
// record of the timing, and one such record among hundreds turned
// md_cells' "align it" into "interleaved" in one run in about twenty.
constexpr double kSplitShare = 0.9;
bool split_at_object_lines(const Gathered& g) {
  return g.events != 0 &&
         static_cast<double>(g.split_events) >= kSplitShare * static_cast<double>(g.events);
}

// Whether the bytes `a` and `b` of one line (masks: bit i is byte i, lines
// of at most 64 bytes) lie on either side of the byte where a line of
// `object` begins: its address mod line_size, when that is not 0 (an
// unaligned global or heap block).
bool splits_at_object_line(const DataObject& object, uint32_t line_size, uint64_t a, uint64_t b) {
  if (object.kind == "unknown" || line_size > 64) return false;
  const uint64_t start = object.object_address % line_size;
  if (start == 0 || a == 0 || b == 0) return false;
  const uint64_t below = (uint64_t{1} << start) - 1;
  return ((a & ~below) == 0 && (b & below) == 0) || ((b & ~below) == 0 && (a & below) == 0);
}

// Union-find over the (kind, object, source line) nodes.
class Components {
 public:
  size_t node(const std::tuple<int, std::string, std::string>& key) {
    auto [it, fresh] = ids_.try_emplace(key, parent_.size());
    if (fresh) parent_.push_back(it->second);
    return it->second;
  }
  size_t find(size_t x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void unite(size_t a, size_t b) {
    a = find(a);
    b = find(b);
    if (a != b) parent_[std::max(a, b)] = std::min(a, b);
  }

 private:
  std::map<std::tuple<int, std::string, std::string>, size_t> ids_;
  std::vector<size_t> parent_;
};

// A record, classified: its item's node and object.
struct Classified {
  size_t node = 0;
  DataObject object;
  std::string object_key;
};

}  // namespace

const char* sharing_kind_name(SharingKind kind) {
  return kind == SharingKind::Unsynchronised ? "race" : "false-sharing";
}

std::string format_offsets(const std::vector<std::pair<uint32_t, uint32_t>>& ranges) {
  std::string text;
  for (const auto& [first, last] : ranges)
    text += (text.empty() ? "" : ",") + fmt::format("{}-{}", first, last);
  return text;
}

std::string format_time_share(double share) { return fmt::format("{:.2g}%", 100 * share); }

std::string time_share_estimate(const SharingItem& item) {
  return fmt::format(
      "about {} of its threads' time (estimate: ~100 ns a transfer against {} basic blocks at ~1 "
      "ns)",
      format_time_share(item.time_share), group_digits(item.thread_blocks));
}

std::string group_digits(uint64_t value) {
  std::string digits = std::to_string(value);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3)
    digits.insert(static_cast<size_t>(i), ",");
  return digits;
}

std::vector<SharingItem> analyze_false_sharing(const Profile& profile) {
  refuse_lost_data(profile, "falseshare");
  if (!profile.has_analysis(AnalysisId::FalseSharing))
    throw FindingError(profile.path() +
                       " has no false-sharing data: record it with the falseshare analysis "
                       "(weft record --analyses comm,falseshare ...)");
  const uint32_t line_size = false_sharing_line_size(profile);
  std::vector<LineObject> rows = line_objects(profile);
  if (rows.empty()) {
    // A profile of an earlier weft: the object at each line's start.
    for (const DataObject& o : data_objects(profile)) {
      if (o.kind == "unknown") continue;
      LineObject row;
      row.offset = static_cast<uint32_t>(
          o.object_address > o.line_address ? o.object_address - o.line_address : 0);
      row.object = o;
      rows.push_back(std::move(row));
    }
  }
  const LineObjects objects(std::move(rows), line_size);
  std::map<uint32_t, uint64_t> blocks_of;  // by thread
  for (const ThreadInfo& t : profile.threads()) blocks_of[t.id] = t.basic_blocks;
  const std::vector<LineSharingRecord> shared = line_sharing(profile);
  const std::vector<UnsyncWriteRecord> unsync = unsync_writes(profile);
  Positions positions(profile);

  // The object a record's bytes belong to: the first byte's.
  auto object_of = [&](uint64_t line, uint64_t mask) {
    const DataObject* o = objects.at(line, first_byte(mask, line_size));
    DataObject object;
    if (o) {
      object = *o;
    } else {
      object.kind = "unknown";
      object.line_address = line;
    }
    return object;
  };

  // Nodes: one per (kind, object, source line); an object's source lines
  // that touched one line of it are one item.
  Components components;
  std::map<std::tuple<int, std::string, uint64_t>, size_t> first_on_line;
  auto classify = [&](SharingKind kind, uint64_t line, uint64_t mask, uint64_t pc) {
    Classified c;
    c.object = object_of(line, mask);
    c.object_key = object_key(c.object, positions);
    const int k = static_cast<int>(kind);
    c.node = components.node({k, c.object_key, positions.line_key(pc)});
    auto [it, fresh] = first_on_line.try_emplace({k, c.object_key, line}, c.node);
    if (!fresh) components.unite(it->second, c.node);
    return c;
  };

  std::vector<Classified> unsync_class;
  std::set<std::string> racy;
  for (const UnsyncWriteRecord& r : unsync) {
    unsync_class.push_back(classify(SharingKind::Unsynchronised, r.line_address, r.bytes, r.pc));
    racy.insert(unsync_class.back().object_key);
  }
  // False sharing of a racy object belongs to its race: classified later.
  std::vector<Classified> shared_class(shared.size());
  for (size_t i = 0; i < shared.size(); ++i) {
    const LineSharingRecord& r = shared[i];
    const DataObject object = object_of(r.line_address, r.thread_bytes);
    if (racy.contains(object_key(object, positions))) {
      shared_class[i].object = object;
      shared_class[i].object_key = object_key(object, positions);
      shared_class[i].node = SIZE_MAX;
      continue;
    }
    shared_class[i] = classify(SharingKind::FalseSharing, r.line_address, r.thread_bytes, r.pc);
  }

  std::map<size_t, Gathered> items;  // by root node
  auto gather = [&](size_t node, SharingKind kind, const DataObject& object) -> Gathered& {
    Gathered& g = items[components.find(node)];
    if (g.lines.empty() && g.events == 0 && g.false_events == 0) {
      g.kind = kind;
      g.object = object;
    }
    if (object.kind == "heap") g.blocks.insert(object.object_address);
    return g;
  };

  std::map<std::string, size_t> race_item_of;  // object key -> its busiest race item's node
  std::map<size_t, uint64_t> race_events;      // root -> events, to pick it
  for (size_t i = 0; i < unsync.size(); ++i) {
    const UnsyncWriteRecord& r = unsync[i];
    const Classified& c = unsync_class[i];
    Gathered& g = gather(c.node, SharingKind::Unsynchronised, c.object);
    g.events += r.events;
    g.lines[r.line_address] += r.events;
    g.bytes[r.thread] |= r.bytes;
    g.bytes[r.writer] |= r.bytes;
    g.pairs[{r.writer, r.thread}] += r.events;
    g.sites[{r.thread, r.pc}] += r.events;
    Gathered::Source& source = g.sources[positions.line_key(r.pc)];
    source.pcs[r.pc] += r.events;
    source.events += r.events;
    g.writers.insert(r.thread);
    g.writers.insert(r.writer);
    race_events[components.find(c.node)] += r.events;
  }
  for (const auto& [root, events] : race_events) {
    const std::string key = object_key(items[root].object, positions);
    auto it = race_item_of.find(key);
    if (it == race_item_of.end() || race_events[it->second] < events) race_item_of[key] = root;
  }

  for (size_t i = 0; i < shared.size(); ++i) {
    const LineSharingRecord& r = shared[i];
    const Classified& c = shared_class[i];
    if (c.node == SIZE_MAX) {
      // On a racy object: its race's.
      Gathered& g = items[race_item_of.at(c.object_key)];
      g.false_events += r.false_events;
      g.lines.try_emplace(r.line_address, 0);
      continue;
    }
    Gathered& g = gather(c.node, SharingKind::FalseSharing, c.object);
    if (splits_at_object_line(g.object, line_size, r.thread_bytes, r.writer_bytes))
      g.split_events += r.false_events;
    g.events += r.false_events;
    g.lines[r.line_address] += r.false_events;
    g.bytes[r.thread] |= r.thread_bytes;
    g.bytes[r.writer] |= r.writer_bytes;
    g.pairs[{r.writer, r.thread}] += r.false_events;
    g.sites[{r.thread, r.pc}] += r.false_events;
    Gathered::Source& source = g.sources[positions.line_key(r.pc)];
    source.pcs[r.pc] += r.false_events;
    source.events += r.false_events;
    // Read-only: neither the writers (at these events) nor the receiving
    // threads wrote the object's bytes; what they wrote are its neighbours.
    if (c.object.kind == "unknown") {
      g.written = true;
    } else {
      const uint64_t own = objects.mask(c.object, r.line_address);
      const uint64_t written = r.writer_bytes | r.thread_written;
      if (written & own) g.written = true;
      objects.each_in(r.line_address, written & ~own, [&](const DataObject& neighbour) {
        g.neighbours[object_name(neighbour, positions)] += r.false_events;
      });
    }
  }

  SourceLines sources;
  std::vector<SharingItem> out;
  for (auto& [root, g] : items) {
    SharingItem item;
    item.kind = g.kind;
    item.events = g.events;
    item.false_events = g.false_events;
    item.object = g.object;
    item.lines = g.lines.size();
    item.line_address = g.lines.empty() ? 0 : g.lines.begin()->first;
    item.blocks = g.blocks.size();
    if (item.object.kind == "heap" && item.object.allocation_pc != 0)
      item.allocated_at = positions.of(item.object.allocation_pc);
    for (const auto& [thread, mask] : g.bytes)
      item.threads.push_back({thread, mask_ranges(mask, line_size)});
    for (const auto& [pair, events] : g.pairs)
      item.pairs.push_back({pair.first, pair.second, events});
    std::stable_sort(
        item.pairs.begin(), item.pairs.end(),
        [](const FalseSharingPair& a, const FalseSharingPair& b) { return a.events > b.events; });
    for (const auto& [key, events] : g.sites) {
      FalseSharingSite site;
      site.thread = key.first;
      site.pc = key.second;
      site.events = events;
      site.position = positions.of(site.pc);
      site.code = sources.line(site.position.file, site.position.line);
      item.sites.push_back(std::move(site));
    }
    std::stable_sort(
        item.sites.begin(), item.sites.end(),
        [](const FalseSharingSite& a, const FalseSharingSite& b) { return a.events > b.events; });
    for (const auto& [key, source] : g.sources) {
      const auto busiest =
          std::max_element(source.pcs.begin(), source.pcs.end(),
                           [](const auto& a, const auto& b) { return a.second < b.second; });
      item.source_lines.push_back({positions.of(busiest->first), busiest->first, source.events});
    }
    std::stable_sort(
        item.source_lines.begin(), item.source_lines.end(),
        [](const SharingSourceLine& a, const SharingSourceLine& b) { return a.events > b.events; });
    for (const auto& [line, events] : g.lines) item.top_lines.push_back({line, events});
    std::stable_sort(
        item.top_lines.begin(), item.top_lines.end(),
        [](const SharingLineEvents& a, const SharingLineEvents& b) { return a.events > b.events; });
    if (item.top_lines.size() > SharingItem::kTopLines)
      item.top_lines.resize(SharingItem::kTopLines);
    if (g.kind == SharingKind::Unsynchronised) {
      item.fix = race_fix(item, g.writers, positions);
    } else {
      std::vector<std::pair<std::string, uint64_t>> neighbours(g.neighbours.begin(),
                                                               g.neighbours.end());
      std::stable_sort(neighbours.begin(), neighbours.end(),
                       [](const auto& a, const auto& b) { return a.second > b.second; });
      for (auto& [name, events] : neighbours) item.neighbours.push_back(name);
      item.read_only = !g.written;
      const std::optional<uint32_t> hand_over = hand_over_writer(item);
      item.hand_over = hand_over.has_value();
      item.hand_over_writer = hand_over.value_or(0);
      if (item.hand_over)
        item.fix = hand_over_fix(item, positions);
      else if (item.read_only)
        item.fix = read_only_fix(item, line_size, positions);
      else if (split_at_object_lines(g))
        item.fix = align_fix(item, line_size, positions);
      else if (interleaved(item))
        item.fix = contiguous_fix(item, line_size, positions);
      else
        item.fix = pad_fix(item, line_size, positions);
      estimate_time_share(item, blocks_of);
    }
    out.push_back(std::move(item));
  }
  std::stable_sort(out.begin(), out.end(), [](const SharingItem& a, const SharingItem& b) {
    const bool race_a = a.kind == SharingKind::Unsynchronised;
    const bool race_b = b.kind == SharingKind::Unsynchronised;
    if (race_a != race_b) return race_a;
    if (a.events != b.events) return a.events > b.events;
    return a.line_address < b.line_address;
  });
  return out;
}

std::string data_object_description(const DataObject& o,
                                    const std::optional<SourcePosition>& allocated_at,
                                    uint64_t blocks, uint64_t address) {
  if (o.kind == "global")
    return fmt::format("{} (global, {} bytes)", quoted(o.name), o.object_size);
  if (o.kind == "heap") {
    std::string where = "an unknown site";
    if (allocated_at) where = code_location(*allocated_at, o.allocation_pc);
    if (blocks > 1) return fmt::format("{} heap blocks allocated at {}", blocks, where);
    return fmt::format("heap block of {} bytes allocated at {}", o.object_size, where);
  }
  return fmt::format("data at 0x{:x} (no symbol, no recorded allocation)", address);
}

std::string data_object_description(const SharingItem& item) {
  return data_object_description(item.object, item.allocated_at, item.blocks, item.line_address);
}

std::string item_headline(const SharingItem& item) {
  std::vector<std::string> from;
  for (const SharingSourceLine& s : item.source_lines)
    from.push_back(s.position.file.empty()
                       ? s.position.function
                       : fmt::format("{}:{}", path_basename(s.position.file), s.position.line));
  return fmt::format("{} line{} of {}, from {}", group_digits(item.lines),
                     item.lines == 1 ? "" : "s", data_object_description(item), join_names(from));
}

FalseSharingFindings find_false_sharing(const Profile& profile,
                                        const FalseSharingOptions& options) {
  FalseSharingFindings findings;
  findings.min_events = options.min_events;
  for (SharingItem& item : analyze_false_sharing(profile)) {
    if (item.kind == SharingKind::FalseSharing && item.events < options.min_events) {
      ++findings.smaller_items;
      findings.smaller_events += item.events;
      continue;
    }
    findings.items.push_back(std::move(item));
  }
  findings.profile = profile_facts(profile);
  findings.untracked_accesses = profile.meta_value("untracked_accesses");
  return findings;
}

}  // namespace weft
