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

// A full 64-bit finalizer (murmur3's fmix64), for sampling decisions taken
// by a hash: every output bit depends on every input bit, so neighbouring
// keys (granules, segment ordinals) are taken or left independently.
inline uint64_t sample_hash(uint64_t key) {
  uint64_t h = hash_key(key);  // fmix64's first round
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h;
}

// The index into a table's few recently found entries: cheaper than
// hash_key, it only needs to separate the keys of one loop body.
inline size_t recent_index(uint64_t key) {
  return static_cast<size_t>((key * 0x9e3779b97f4a7c15ULL) >> 40);
}
template <class Key>
size_t recent_index(const Key& key) {
  return hash_key(key);
}

// Recently found entries kept by a table looked up at section closes or
// epoch ends rather than per access: their cache is inside the table object,
// which an exited thread keeps (docs/performance.md, "Exited threads").
inline constexpr size_t kFewRecentEntries = 8;

template <class Entry, size_t kRecent = 64>
class PagedHashTable {
  static_assert(std::is_trivially_copyable_v<Entry>, "slots are moved with plain copies");
  static_assert(kRecent >= 2 && (kRecent & (kRecent - 1)) == 0, "two ways per set");

 public:
  using Key = decltype(Entry::key);
  static constexpr size_t kInitialCapacity = 128;
  // With start_small(): the first capacity, and the most slot bytes packed
  // beside other small blocks (reserve_packed).
  static constexpr size_t kSmallCapacity = 16;
  static constexpr size_t kPackedSlotBytes = 1024;

  PagedHashTable() = default;
  ~PagedHashTable() { release(slots_, capacity_ * sizeof(Entry)); }
  PagedHashTable(const PagedHashTable&) = delete;
  PagedHashTable& operator=(const PagedHashTable&) = delete;

  // For a table that stays small in most uses and lives as long as the run
  // (a CRD pair's): its first slots are few and packed beside other small
  // blocks, so it costs its bytes rather than a page. Before the first
  // insertion.
  void start_small() { small_ = true; }

  // The entry of `key`, value-initialized and inserted if new; nullptr only
  // when out of memory.
  Entry* find_or_insert(const Key& key) {
    // Two ways per set of recent entries, the latest first.
    Entry** set = recent_ + (recent_index(key) & (kRecent / 2 - 1)) * 2;
    if (set[0] != nullptr && set[0]->key == key) return set[0];
    Entry* e = set[1] != nullptr && set[1]->key == key ? set[1] : find_or_insert_slow(key);
    set[1] = set[0];
    return set[0] = e;
  }

  // The entry of `key` when it is one of the recently found ones, else
  // nullptr; changes nothing (an inline fast path may try it and fall back).
  Entry* find_recent(const Key& key) const {
    Entry* const* set = recent_ + (recent_index(key) & (kRecent / 2 - 1)) * 2;
    if (set[0] != nullptr && set[0]->key == key) return set[0];
    if (set[1] != nullptr && set[1]->key == key) return set[1];
    return nullptr;
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
    slots_ = nullptr;
    capacity_ = used_ = 0;
    forget_recent();
  }

  // Empties the table but keeps its memory (for tables refilled often).
  void zero() {
    if (used_ != 0) __builtin_memset(static_cast<void*>(slots_), 0, capacity_ * sizeof(Entry));
    used_ = 0;
    forget_recent();
  }

  // Keeps only the entries `keep(entry)` accepts, rehashed into fresh slots
  // (the table has no deletion). False when out of memory: nothing changed.
  // Entries move: pointers into the table are invalid after it.
  template <class Keep>
  bool retain_if(Keep&& keep) {
    if (slots_ == nullptr) return true;
    size_t kept = 0;
    for (size_t i = 0; i < capacity_; ++i) kept += !(slots_[i].key == Key{}) && keep(slots_[i]);
    size_t new_capacity = kInitialCapacity;
    while (kept * 2 > new_capacity) new_capacity *= 2;
    return rehash(new_capacity, keep);
  }

  // Moves the entries into the fewest packed slots that hold them
  // (reserve_packed): for a table only read from now on, an exited thread's.
  // An empty table gives its slots back. False when out of memory: nothing
  // changed. Entries move, as in retain_if.
  bool shrink_to_fit() {
    if (used_ == 0) {
      clear();
      return true;
    }
    size_t new_capacity = 4;
    while (used_ * 2 > new_capacity) new_capacity *= 2;
    if (new_capacity >= capacity_ && is_packed(slots_)) return true;
    return rehash(
        new_capacity, [](const Entry&) { return true; }, reserve_packed);
  }

  size_t size() const { return used_; }
  // Changes whenever entries may have moved or vanished (grow, clear,
  // zero): a pointer to an entry stays valid while this is unchanged.
  uint64_t generation() const { return generation_; }
  size_t memory_bytes() const { return capacity_ * sizeof(Entry); }

  template <class Visitor>
  void for_each(Visitor&& visit) const {
    for (size_t i = 0; i < capacity_; ++i)
      if (!(slots_[i].key == Key{})) visit(slots_[i]);
  }

 private:
  __attribute__((noinline)) Entry* find_or_insert_slow(const Key& key) {
    if (__builtin_expect(slots_ == nullptr, 0) && !grow()) return nullptr;
    size_t i = hash_key(key) & (capacity_ - 1);
    for (;;) {
      Entry& slot = slots_[i];
      if (slot.key == key) return &slot;
      if (slot.key == Key{}) {
        if ((used_ + 1) * 2 > capacity_) {
          if (!grow()) return nullptr;
          return find_or_insert_slow(key);
        }
        ++used_;
        slot.key = key;
        return &slot;
      }
      i = (i + 1) & (capacity_ - 1);
    }
  }

  void forget_recent() {
    ++generation_;
    for (Entry*& e : recent_) e = nullptr;
  }

  bool grow() {
    const size_t new_capacity = capacity_ ? capacity_ * 2
                                : small_  ? kSmallCapacity
                                          : kInitialCapacity;
    return rehash(
        new_capacity, [](const Entry&) { return true; },
        small_ && new_capacity * sizeof(Entry) <= kPackedSlotBytes ? reserve_packed
                                                                   : reserve_zeroed);
  }

  // Moves the entries `keep` accepts into `new_capacity` fresh slots.
  template <class Keep>
  bool rehash(size_t new_capacity, Keep&& keep, void* (*reserve)(size_t) = reserve_zeroed) {
    auto* fresh = static_cast<Entry*>(reserve(new_capacity * sizeof(Entry)));
    if (!fresh) return false;
    size_t kept = 0;
    for (size_t i = 0; i < capacity_; ++i) {
      if (slots_[i].key == Key{} || !keep(slots_[i])) continue;
      size_t j = hash_key(slots_[i].key) & (new_capacity - 1);
      while (!(fresh[j].key == Key{})) j = (j + 1) & (new_capacity - 1);
      fresh[j] = slots_[i];
      ++kept;
    }
    release(slots_, capacity_ * sizeof(Entry));
    slots_ = fresh;
    capacity_ = new_capacity;
    used_ = kept;
    forget_recent();
    return true;
  }

  Entry* slots_ = nullptr;
  size_t capacity_ = 0;
  size_t used_ = 0;
  uint64_t generation_ = 0;
  bool small_ = false;
  // Recently found entries, direct mapped by a cheap index of the key: the
  // per-access callers cycle through the few instructions of a loop body,
  // which then cost one compare instead of a hash and a probe.
  Entry* recent_[kRecent] = {};
};

}  // namespace weft
