#include "profile/data_objects.h"

#include <algorithm>
#include <utility>

namespace weft {

ObjectResolver::ObjectResolver(std::vector<AllocationRecord> blocks, Symbolizer& symbolizer)
    : blocks_(std::move(blocks)), symbolizer_(symbolizer) {
  std::sort(
      blocks_.begin(), blocks_.end(),
      [](const AllocationRecord& a, const AllocationRecord& b) { return a.address < b.address; });
  for (const AllocationRecord& b : blocks_) largest_ = std::max(largest_, b.size);
}

const AllocationRecord* ObjectResolver::block(uint64_t first, uint64_t last) const {
  const AllocationRecord* best = nullptr;
  auto it =
      std::upper_bound(blocks_.begin(), blocks_.end(), last,
                       [](uint64_t value, const AllocationRecord& b) { return value < b.address; });
  while (it != blocks_.begin()) {
    --it;
    if (it->address + largest_ < first) break;
    if (it->address + it->size <= first) continue;
    if (!best || it->sequence > best->sequence) best = &*it;
  }
  return best;
}

DataObject ObjectResolver::at(uint64_t address) { return over(address, 1, 1); }

DataObject ObjectResolver::over(uint64_t first, uint64_t size, uint64_t step) {
  DataObject object;
  object.kind = "unknown";
  if (const AllocationRecord* b = block(first, first + size - 1)) {
    set_heap(object, *b);
    return object;
  }
  // The range may start before the variable: look at its other bytes.
  for (uint64_t offset = 0; offset < size; offset += step)
    if (std::optional<DataSymbol> symbol = global(first + offset)) {
      set_global(object, *symbol);
      break;
    }
  return object;
}

void ObjectResolver::set_heap(DataObject& object, const AllocationRecord& b) {
  object.kind = "heap";
  object.object_address = b.address;
  object.object_size = b.size;
  object.allocation_pc = b.pc;
  object.allocation_thread = b.thread;
}

void ObjectResolver::set_global(DataObject& object, const DataSymbol& symbol) {
  object.kind = "global";
  object.name = symbol.name;
  object.object_address = symbol.address;
  object.object_size = symbol.size;
}

DataObject read_data_object(const sqlite::Statement& row, int first) {
  DataObject o;
  o.kind = row.column_text(first);
  o.name = row.column_text(first + 1);
  o.object_address = row.column_u64(first + 2);
  o.object_size = row.column_u64(first + 3);
  o.allocation_pc = row.column_u64(first + 4);
  o.allocation_thread = static_cast<uint32_t>(row.column_int(first + 5));
  return o;
}

std::optional<uint64_t> heap_allocation_pc(const DataObject& o) {
  return o.kind == "heap" ? std::optional<uint64_t>(o.allocation_pc) : std::nullopt;
}

std::optional<uint32_t> heap_allocation_thread(const DataObject& o) {
  return o.kind == "heap" ? std::optional<uint32_t>(o.allocation_thread) : std::nullopt;
}

}  // namespace weft
