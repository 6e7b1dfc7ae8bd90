// PagedHashTable: an open-addressing hash table whose slots come from mmap
// (page_memory.h), for analyzer state that lives inside the profiled program
// and is updated by one thread: no malloc, no locks, no deletion. Readers
// (the final collection) run after the owner stopped.
//
// Entry is a plain struct with a `key` member; a value-initialized key
// (`Key{}`) marks an empty slot, so keys must never be zero. `hash_key(key)`
// must be visible for the key type (overloads below cover the common ones).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "analyzers/state/page_memory.h"

namespace weft {

inline size_t hash_key(uint64_t key) {
  key ^= key >> 33;
  key *= 0xff51afd7ed558ccdULL;
  key ^= key >> 33;
  return static_cast<size_t>(key);
}

template <class Entry>
class PagedHashTable {
  static_assert(std::is_trivially_copyable_v<Entry>, "slots are moved with plain copies");

 public:
  using Key = decltype(Entry::key);
  static constexpr size_t kInitialCapacity = 1024;

  PagedHashTable() = default;
  ~PagedHashTable() { release(slots_, capacity_ * sizeof(Entry)); }
  PagedHashTable(const PagedHashTable&) = delete;
  PagedHashTable& operator=(const PagedHashTable&) = delete;

  // The entry of `key`, value-initialized and inserted if new; nullptr only
  // when out of memory.
  Entry* find_or_insert(const Key& key) {
    if (last_ != nullptr && last_->key == key) return last_;
    if (__builtin_expect(slots_ == nullptr, 0) && !grow()) return nullptr;
    size_t i = hash_key(key) & (capacity_ - 1);
    for (;;) {
      Entry& slot = slots_[i];
      if (slot.key == key) return last_ = &slot;
      if (slot.key == Key{}) {
        if ((used_ + 1) * 2 > capacity_) {
          if (!grow()) return nullptr;
          return find_or_insert(key);
        }
        ++used_;
        slot.key = key;
        return last_ = &slot;
      }
      i = (i + 1) & (capacity_ - 1);
    }
  }

  // The entry of `key`, or nullptr.
  Entry* find(const Key& key) {
    if (slots_ == nullptr) return nullptr;
    size_t i = hash_key(key) & (capacity_ - 1);
    for (;;) {
      Entry& slot = slots_[i];
      if (slot.key == key) return &slot;
      if (slot.key == Key{}) return nullptr;
      i = (i + 1) & (capacity_ - 1);
    }
  }

  // Frees every slot; the table is empty and usable again.
  void clear() {
    release(slots_, capacity_ * sizeof(Entry));
    slots_ = last_ = nullptr;
    capacity_ = used_ = 0;
  }

  // Empties the table but keeps its memory (for tables refilled often).
  void zero() {
    if (used_ != 0) __builtin_memset(static_cast<void*>(slots_), 0, capacity_ * sizeof(Entry));
    used_ = 0;
    last_ = nullptr;
  }

  size_t size() const { return used_; }
  size_t memory_bytes() const { return capacity_ * sizeof(Entry); }

  template <class Visitor>
  void for_each(Visitor&& visit) const {
    for (size_t i = 0; i < capacity_; ++i)
      if (!(slots_[i].key == Key{})) visit(slots_[i]);
  }

 private:
  bool grow() {
    const size_t new_capacity = capacity_ ? capacity_ * 2 : kInitialCapacity;
    auto* fresh = static_cast<Entry*>(reserve_zeroed(new_capacity * sizeof(Entry)));
    if (!fresh) return false;
    for (size_t i = 0; i < capacity_; ++i) {
      if (slots_[i].key == Key{}) continue;
      size_t j = hash_key(slots_[i].key) & (new_capacity - 1);
      while (!(fresh[j].key == Key{})) j = (j + 1) & (new_capacity - 1);
      fresh[j] = slots_[i];
    }
    release(slots_, capacity_ * sizeof(Entry));
    slots_ = fresh;
    capacity_ = new_capacity;
    last_ = nullptr;
    return true;
  }

  Entry* slots_ = nullptr;
  size_t capacity_ = 0;
  size_t used_ = 0;
  Entry* last_ = nullptr;  // the last hit: consecutive events often share a key
};

}  // namespace weft
