// Per-thread analyzer state, created on a thread's first event and published
// in a slot of a table indexed by thread id, lock-free: if two threads race
// to create the same slot's state, the first one wins and the other is
// destroyed.
#pragma once

#include <atomic>
#include <cstdint>
#include <new>

#include "analyzers/state/page_memory.h"

namespace weft {

// The state in `slot`, created with `init(T&)` (returning false when it
// cannot get its memory) if the slot is empty; nullptr when out of memory.
template <class T, class Init>
T* publish_once(std::atomic<T*>& slot, Init&& init) {
  if (T* existing = slot.load(std::memory_order_acquire)) return existing;
  // Packed beside the other threads' states (64-byte aligned: no line is
  // shared): a thread's state costs its size, not a page.
  void* memory = reserve_packed(sizeof(T));
  if (!memory) return nullptr;
  T* fresh = new (memory) T;
  T* expected = nullptr;
  if (init(*fresh) && slot.compare_exchange_strong(expected, fresh, std::memory_order_acq_rel))
    return fresh;
  fresh->~T();
  release(memory, sizeof(T));
  return expected;
}

// The table of an analyzer's per-thread states, indexed by thread id: slots
// reserved once (untouched pages cost nothing), states created on first
// attach and destroyed with the table.
template <class State>
class PerThreadStates {
 public:
  explicit PerThreadStates(unsigned max_threads)
      : size_(max_threads),
        slots_(static_cast<std::atomic<State*>*>(
            reserve_zeroed(max_threads * sizeof(std::atomic<State*>)))) {}
  ~PerThreadStates() {
    if (!slots_) return;
    for (unsigned i = 0; i < size_; ++i)
      if (State* s = slots_[i].load()) {
        s->~State();
        release(s, sizeof(State));
      }
    release(slots_, size_ * sizeof(std::atomic<State*>));
  }
  PerThreadStates(const PerThreadStates&) = delete;
  PerThreadStates& operator=(const PerThreadStates&) = delete;

  // The state of `tid`, created with `init(State&)` (see publish_once) on
  // first call; nullptr beyond the table or out of memory. Thread-safe.
  template <class Init>
  State* attach(uint32_t tid, Init&& init) {
    if (tid >= size_ || !slots_) return nullptr;
    return publish_once(slots_[tid], static_cast<Init&&>(init));
  }

  // The state of `tid` if created, else nullptr. Thread-safe.
  const State* find(uint32_t tid) const {
    return tid < size_ && slots_ ? slots_[tid].load(std::memory_order_acquire) : nullptr;
  }
  State* find(uint32_t tid) {
    return tid < size_ && slots_ ? slots_[tid].load(std::memory_order_acquire) : nullptr;
  }

  // Every created state, by thread id.
  template <class Visitor>
  void for_each(Visitor&& visit) const {
    if (!slots_) return;
    for (unsigned i = 0; i < size_; ++i)
      if (const State* s = slots_[i].load(std::memory_order_acquire)) visit(*s);
  }
  template <class Visitor>
  void for_each_mutable(Visitor&& visit) {
    if (!slots_) return;
    for (unsigned i = 0; i < size_; ++i)
      if (State* s = slots_[i].load(std::memory_order_acquire)) visit(*s);
  }

  unsigned size() const { return size_; }

 private:
  unsigned size_;
  std::atomic<State*>* slots_;
};

}  // namespace weft
