// Cache models for the load-imbalance analysis (LIME's hardware events):
// each thread's accesses go through its own L1 and L2 (PrivateCache) and,
// on an L2 miss, through the last-level cache all threads share
// (SharedCache). Both are set-associative with least-recently-used
// replacement and count misses only; they hold no data.
//
// Only the lines' identities matter, so a tag is the line number + 1 (0 is
// an empty way). Sets are selected by line number modulo the set count (a
// mask when that is a power of two: hwloc reports e.g. 12-way 30 MiB LLCs
// whose set count is not).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "analyzers/state/page_memory.h"
#include "common/run_capture.h"

namespace weft {

// Set selection shared by both caches.
class CacheSets {
 public:
  bool configure(uint64_t size_bytes, uint32_t ways, uint32_t line_bytes) {
    if (size_bytes == 0 || ways == 0 || line_bytes == 0) return false;
    ways_ = ways;
    sets_ = size_bytes / line_bytes / ways;
    if (sets_ == 0) sets_ = 1;
    mask_ = (sets_ & (sets_ - 1)) == 0 ? sets_ - 1 : 0;
    return true;
  }
  uint64_t set_of(uint64_t line) const { return mask_ || sets_ == 1 ? line & mask_ : line % sets_; }
  uint64_t sets() const { return sets_; }
  uint32_t ways() const { return ways_; }

 private:
  uint64_t sets_ = 0;
  uint64_t mask_ = 0;
  uint32_t ways_ = 0;
};

// A cache used by one thread only: true LRU, the ways of a set kept in
// recency order (way 0 = most recent).
class PrivateCache {
 public:
  PrivateCache() = default;
  ~PrivateCache() { release(tags_, bytes_); }
  PrivateCache(const PrivateCache&) = delete;
  PrivateCache& operator=(const PrivateCache&) = delete;

  // False when the geometry is absent or the memory cannot be reserved; the
  // cache then misses on every access.
  bool configure(const CacheLevelGeometry& level, uint32_t line_bytes) {
    if (!sets_.configure(level.size_bytes, level.ways, line_bytes)) return false;
    bytes_ = sets_.sets() * sets_.ways() * sizeof(uint64_t);
    tags_ = static_cast<uint64_t*>(reserve_zeroed(bytes_));
    return tags_ != nullptr;
  }

  bool present() const { return tags_ != nullptr; }

  // Frees the sets: the cache then misses on every access.
  void clear() {
    release(tags_, bytes_);
    tags_ = nullptr;
    bytes_ = 0;
  }

  // Whether `line` was present; it is the most recent line of its set after.
  bool access(uint64_t line) {
    if (__builtin_expect(tags_ == nullptr, 0)) return false;
    const uint64_t tag = line + 1;
    uint64_t* set = tags_ + sets_.set_of(line) * sets_.ways();
    if (set[0] == tag) return true;
    const uint32_t ways = sets_.ways();
    uint32_t i = 1;
    while (i < ways && set[i] != tag) ++i;
    const bool hit = i < ways;
    if (!hit) i = ways - 1;  // evict the least recent
    for (; i > 0; --i) set[i] = set[i - 1];
    set[0] = tag;
    return hit;
  }

 private:
  CacheSets sets_;
  uint64_t* tags_ = nullptr;
  size_t bytes_ = 0;
};

// The last-level cache, shared by every thread. Each way holds its tag and
// the time of its last use on its set's own clock (one more than the latest
// use in the set, read while scanning it), so no counter is shared between
// sets and no atomic read-modify-write is needed; the victim is the way used
// least recently. Updates are relaxed atomics without locks: when threads
// race on one set the replacement is approximate (a way may be refilled
// twice, two uses may get one time), which the compile-time source accepts
// for speed. Under the binary source a single consumer drives it and it is
// exact LRU.
class SharedCache {
 public:
  SharedCache() = default;
  ~SharedCache() { release(ways_, bytes_); }
  SharedCache(const SharedCache&) = delete;
  SharedCache& operator=(const SharedCache&) = delete;

  bool configure(const CacheLevelGeometry& level, uint32_t line_bytes) {
    if (!sets_.configure(level.size_bytes, level.ways, line_bytes)) return false;
    bytes_ = sets_.sets() * sets_.ways() * sizeof(Way);
    ways_ = static_cast<Way*>(reserve_zeroed(bytes_));
    return ways_ != nullptr;
  }

  bool access(uint64_t line) {
    if (__builtin_expect(ways_ == nullptr, 0)) return false;
    const uint64_t tag = line + 1;
    Way* set = ways_ + sets_.set_of(line) * sets_.ways();
    Way* found = nullptr;
    Way* victim = set;
    uint64_t oldest = ~uint64_t{0};
    uint64_t latest = 0;
    for (uint32_t i = 0; i < sets_.ways(); ++i) {
      const uint64_t used = set[i].last_use.load(std::memory_order_relaxed);
      latest = used > latest ? used : latest;
      if (set[i].tag.load(std::memory_order_relaxed) == tag) found = &set[i];
      if (used < oldest) {
        oldest = used;
        victim = &set[i];
      }
    }
    Way* way = found ? found : victim;
    if (!found) way->tag.store(tag, std::memory_order_relaxed);
    way->last_use.store(latest + 1, std::memory_order_relaxed);
    return found != nullptr;
  }

 private:
  struct Way {
    std::atomic<uint64_t> tag;
    std::atomic<uint64_t> last_use;
  };
  CacheSets sets_;
  Way* ways_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace weft
