// Per-thread analyzer state, created on a thread's first event and published
// in a slot of a table indexed by thread id, lock-free: if two threads race
// to create the same slot's state, the first one wins and the other is
// destroyed.
#pragma once

#include <atomic>
#include <new>

#include "analyzers/state/page_memory.h"

namespace weft {

// The state in `slot`, created with `init(T&)` (returning false when it
// cannot get its memory) if the slot is empty; nullptr when out of memory.
template <class T, class Init>
T* publish_once(std::atomic<T*>& slot, Init&& init) {
  if (T* existing = slot.load(std::memory_order_acquire)) return existing;
  void* memory = reserve_zeroed(sizeof(T));
  if (!memory) return nullptr;
  T* fresh = new (memory) T;
  T* expected = nullptr;
  if (init(*fresh) && slot.compare_exchange_strong(expected, fresh, std::memory_order_acq_rel))
    return fresh;
  fresh->~T();
  release(memory, sizeof(T));
  return expected;
}

}  // namespace weft
