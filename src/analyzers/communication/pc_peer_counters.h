// PcPeerCounters: per-thread open-addressing table of communication counts
// keyed by (instruction, peer thread). Owned by one thread, so updates need
// no atomics; readers (the final collection) run after the owner stopped.
#pragma once

#include <cstddef>
#include <cstdint>

#include "analyzers/communication/page_memory.h"

namespace weft {

struct PcPeerCounts {
  uint64_t key = 0;  // (pc << 16) | peer; 0 = empty slot
  uint64_t comm = 0;
  uint64_t reuse = 0;
  uint64_t inval = 0;

  uint64_t pc() const { return key >> 16; }
  uint32_t peer() const { return static_cast<uint32_t>(key & 0xffff); }
};

class PcPeerCounters {
 public:
  static constexpr size_t kInitialCapacity = 1024;

  PcPeerCounters() = default;
  ~PcPeerCounters() { release(slots_, capacity_ * sizeof(PcPeerCounts)); }
  PcPeerCounters(const PcPeerCounters&) = delete;
  PcPeerCounters& operator=(const PcPeerCounters&) = delete;

  static uint64_t make_key(uint64_t pc, uint32_t peer) { return (pc << 16) | peer; }

  // The counts of (pc, peer), inserted if new; nullptr only when out of memory.
  PcPeerCounts* find_or_insert(uint64_t key) {
    if (key == last_key_ && last_ != nullptr) return last_;
    if (__builtin_expect(slots_ == nullptr, 0) && !grow()) return nullptr;
    size_t i = hash(key) & (capacity_ - 1);
    for (;;) {
      PcPeerCounts& slot = slots_[i];
      if (slot.key == key) return remember(key, &slot);
      if (slot.key == 0) {
        if ((used_ + 1) * 2 > capacity_) {
          if (!grow()) return nullptr;
          return find_or_insert(key);
        }
        ++used_;
        slot.key = key;
        return remember(key, &slot);
      }
      i = (i + 1) & (capacity_ - 1);
    }
  }

  size_t size() const { return used_; }

  template <class Visitor>
  void for_each(Visitor&& visit) const {
    for (size_t i = 0; i < capacity_; ++i)
      if (slots_[i].key != 0) visit(slots_[i]);
  }

 private:
  static size_t hash(uint64_t key) {
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdULL;
    key ^= key >> 33;
    return static_cast<size_t>(key);
  }

  PcPeerCounts* remember(uint64_t key, PcPeerCounts* slot) {
    last_key_ = key;
    last_ = slot;
    return slot;
  }

  bool grow() {
    const size_t new_capacity = capacity_ ? capacity_ * 2 : kInitialCapacity;
    auto* fresh = static_cast<PcPeerCounts*>(reserve_zeroed(new_capacity * sizeof(PcPeerCounts)));
    if (!fresh) return false;
    for (size_t i = 0; i < capacity_; ++i) {
      if (slots_[i].key == 0) continue;
      size_t j = hash(slots_[i].key) & (new_capacity - 1);
      while (fresh[j].key != 0) j = (j + 1) & (new_capacity - 1);
      fresh[j] = slots_[i];
    }
    release(slots_, capacity_ * sizeof(PcPeerCounts));
    slots_ = fresh;
    capacity_ = new_capacity;
    last_ = nullptr;
    last_key_ = 0;
    return true;
  }

  PcPeerCounts* slots_ = nullptr;
  size_t capacity_ = 0;
  size_t used_ = 0;
  uint64_t last_key_ = 0;
  PcPeerCounts* last_ = nullptr;
};

}  // namespace weft
