// RecordLog: an append-only list of plain records in linked chunks taken
// from mmap, for analyzer results produced by one thread while the program
// runs (no malloc, no locks). Appends beyond `max_chunks` are refused and
// counted, so a long run cannot exhaust memory through its logs. Readers run
// after the owner stopped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "analyzers/state/page_memory.h"

namespace weft {

template <class Record>
class RecordLog {
  static_assert(std::is_trivially_copyable_v<Record>, "records are copied as bytes");

 public:
  static constexpr size_t kChunkBytes = size_t{1} << 20;

  RecordLog() = default;
  ~RecordLog() { release_chunks(); }
  RecordLog(const RecordLog&) = delete;
  RecordLog& operator=(const RecordLog&) = delete;

  void set_max_chunks(size_t max_chunks) { max_chunks_ = max_chunks; }

  // False (and counted as dropped) when the log is full or out of memory.
  bool append(const Record& record) {
    if (tail_ == nullptr || tail_->used == tail_->capacity) {
      if (chunks_ >= max_chunks_ || !add_chunk()) {
        ++dropped_;
        return false;
      }
    }
    tail_->records()[tail_->used] = record;
    ++tail_->used;
    ++size_;
    return true;
  }

  // Moves the records into one packed chunk of their size (reserve_packed):
  // for a log only read from now on, an exited thread's. An append after it
  // starts a chunk as before. Positions into the log are invalid after it.
  void compact() {
    if (head_ == nullptr || (head_ == tail_ && is_packed(head_))) return;
    Chunk* fresh = nullptr;
    if (size_ != 0) {
      fresh = static_cast<Chunk*>(reserve_packed(sizeof(Chunk) + size_ * sizeof(Record)));
      if (fresh == nullptr) return;
      fresh->next = nullptr;
      fresh->used = 0;
      fresh->capacity = size_;
      for_each([&](const Record& r) { fresh->records()[fresh->used++] = r; });
    }
    release_chunks();
    head_ = tail_ = fresh;
    chunks_ = fresh ? 1 : 0;
  }

  uint64_t size() const { return size_; }
  uint64_t dropped() const { return dropped_; }

  template <class Visitor>
  void for_each(Visitor&& visit) const {
    for (const Chunk* c = head_; c != nullptr; c = c->next)
      for (size_t i = 0; i < c->used; ++i) visit(c->records()[i]);
  }

 private:
  struct Chunk;

 public:
  // Where a record is in the log, for reading a run of records again.
  struct Position {
    const Chunk* chunk = nullptr;  // nullptr: the log's start
    size_t index = 0;
  };
  // Where the next record appended will be.
  Position end() const { return {tail_, tail_ ? tail_->used : 0}; }

  // Whether the `count` records from `at` all satisfy `test` (false if the
  // log has fewer); stops at the first that does not.
  template <class Test>
  bool all_of(Position at, uint64_t count, Test&& test) const {
    const Chunk* c = at.chunk ? at.chunk : head_;
    size_t i = at.chunk ? at.index : 0;
    while (count > 0 && c != nullptr) {
      if (i == c->used) {
        c = c->next;
        i = 0;
        continue;
      }
      if (!test(c->records()[i])) return false;
      ++i;
      --count;
    }
    return count == 0;
  }

 private:
  struct Chunk {
    Chunk* next;
    size_t used;
    size_t capacity;  // records
    Record* records() { return reinterpret_cast<Record*>(this + 1); }
    const Record* records() const { return reinterpret_cast<const Record*>(this + 1); }
  };
  static_assert(sizeof(Chunk) % alignof(Record) == 0);
  static constexpr size_t kPerChunk = (kChunkBytes - sizeof(Chunk)) / sizeof(Record);

  bool add_chunk() {
    auto* fresh = static_cast<Chunk*>(reserve_zeroed(kChunkBytes));
    if (fresh == nullptr) return false;
    fresh->next = nullptr;
    fresh->used = 0;
    fresh->capacity = kPerChunk;
    (tail_ ? tail_->next : head_) = fresh;
    tail_ = fresh;
    ++chunks_;
    return true;
  }

  void release_chunks() {
    for (Chunk* c = head_; c != nullptr;) {
      Chunk* next = c->next;
      release(c, is_packed(c) ? sizeof(Chunk) + c->capacity * sizeof(Record) : kChunkBytes);
      c = next;
    }
  }

  Chunk* head_ = nullptr;
  Chunk* tail_ = nullptr;
  size_t chunks_ = 0;
  size_t max_chunks_ = 64;
  uint64_t size_ = 0;
  uint64_t dropped_ = 0;
};

}  // namespace weft
