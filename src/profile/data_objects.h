// The data objects the program's memory belongs to, named for the findings:
// a global or static variable (from the symbol table), a heap block (by the
// call that allocated it, as the event source recorded it), or nothing known.
// The false-sharing analysis names its lines by them, the page-usage
// analysis its pages.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/run_capture.h"
#include "profile/sqlite_db.h"
#include "static/symbolizer.h"

namespace weft {

struct DataObject {
  uint64_t line_address = 0;  // the line (or page) it was resolved for, where a table has one
  std::string kind;           // "global", "heap", "unknown"
  std::string name;
  uint64_t object_address = 0;
  uint64_t object_size = 0;
  uint64_t allocation_pc = 0;  // 0 unless heap
  uint32_t allocation_thread = 0;
};

// What names the data at an address: the latest recorded heap block
// covering it, else the global variable of the symbol table there.
class ObjectResolver {
 public:
  ObjectResolver(std::vector<AllocationRecord> blocks, Symbolizer& symbolizer);

  // The latest block (highest sequence) overlapping bytes [first, last];
  // null when none.
  const AllocationRecord* block(uint64_t first, uint64_t last) const;
  std::optional<DataSymbol> global(uint64_t address) { return symbolizer_.symbolize_data(address); }

  // The object covering byte `address`; kind "unknown" when none.
  DataObject at(uint64_t address);
  // The object of bytes [first, first + size): the latest heap block
  // overlapping them, else the first global variable found at `first` and
  // every `step` bytes after it; kind "unknown" when none.
  DataObject over(uint64_t first, uint64_t size, uint64_t step);

  static void set_heap(DataObject& object, const AllocationRecord& b);
  static void set_global(DataObject& object, const DataSymbol& symbol);

 private:
  std::vector<AllocationRecord> blocks_;  // by address
  uint64_t largest_ = 0;
  Symbolizer& symbolizer_;
};

// The object in a row's columns kind, name, object_address, object_size,
// allocation_pc, allocation_thread, from column `first` on (how the tables
// that name objects store them; NULL reads as 0 or "").
DataObject read_data_object(const sqlite::Statement& row, int first);

// The allocation columns of an object: a heap block's call site and
// thread, NULL for anything else.
std::optional<uint64_t> heap_allocation_pc(const DataObject& o);
std::optional<uint32_t> heap_allocation_thread(const DataObject& o);

}  // namespace weft
