// ReuseSets: one reader's interned sets of tags, for the CRR of a region
// (docs/metrics.md, "CRR"). A tag is what the profile builder turns into a
// region: a reading instruction (the code regions) or the site that closed a
// parallel section (the sections). The set of a communication epoch (a
// granule from a write to the next, as one reader sees it) holds the tag of
// its true communication, its root, then every other tag that re-read it.
// Regions are known only after the run, so the sets keep tags, and the
// builder turns each set into the regions it touched.
//
// A set is a node: its tag and its parent (the set without that tag), so the
// sets of a reader form a tree whose paths are the orders in which tags were
// first seen. Steps (set, tag) -> set' are memoized in a hash table: adding
// a tag the set holds returns the set itself, found by walking its path
// once. Each node counts the epochs whose set ended there.
//
// Owned by one reader: no synchronization. Memory from mmap only (nodes in
// an array that doubles, steps in a PagedHashTable), at most kMaxNodes nodes;
// beyond that a tag is not added and `lost()` counts it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "analyzers/state/page_memory.h"
#include "analyzers/state/paged_hash_table.h"

namespace weft {

// A step's key: from a set (a node id, or kRootStep | writer for the empty
// set of a writer's data) by a tag. Never all zero: node ids start at 1.
struct ReuseSetStepKey {
  uint64_t from = 0;
  uint64_t tag = 0;
  bool operator==(const ReuseSetStepKey&) const = default;
};

inline size_t hash_key(const ReuseSetStepKey& key) {
  return hash_key(key.from * 0x9e3779b97f4a7c15ULL ^ key.tag);
}

class ReuseSets {
 public:
  static constexpr uint32_t kNone = 0;
  static constexpr uint32_t kMaxNodes = uint32_t{1} << 24;

  struct Node {
    uint64_t tag = 0;
    uint32_t parent = kNone;  // kNone: a root, the set {tag}
    uint32_t writer = 0;
    uint64_t count = 0;  // epochs whose set is this one
  };

  ReuseSets() = default;
  ~ReuseSets() { release(nodes_, capacity_ * sizeof(Node)); }
  ReuseSets(const ReuseSets&) = delete;
  ReuseSets& operator=(const ReuseSets&) = delete;

  // The set {tag} of `writer`'s data; kNone when out of memory.
  uint32_t root(uint32_t writer, uint64_t tag) {
    Step* s = steps_.find_or_insert({kRootStep | writer, tag});
    if (!s) return lose(kNone);
    if (s->to == kNone) s->to = make_node(tag, kNone, writer);
    return s->to;
  }

  // set ∪ {tag}; `set` itself when it holds the tag (or when out of memory).
  uint32_t add(uint32_t set, uint64_t tag) {
    if (nodes_[set].tag == tag) return set;  // the tag added last (a loop re-reading)
    Step* s = steps_.find_or_insert({set, tag});
    if (!s) return lose(set);
    if (s->to == kNone) {
      const uint32_t to = holds(set, tag) ? set : make_node(tag, set, nodes_[set].writer);
      s->to = to == kNone ? lose(set) : to;
    }
    return s->to;
  }

  // root(writer, tag) for kNone, else add(set, tag).
  uint32_t extend(uint32_t writer, uint32_t set, uint64_t tag) {
    return set == kNone ? root(writer, tag) : add(set, tag);
  }

  // Moves the nodes and steps into packed memory of their size (a set
  // family only read from now on); adding to it afterwards grows it again.
  void shrink_to_fit() {
    steps_.shrink_to_fit();
    if (!nodes_ || is_packed(nodes_)) return;
    const uint32_t fit = size_ + 2;  // make_node grows at size_ + 1 == capacity_
    auto* fresh = static_cast<Node*>(reserve_packed(fit * sizeof(Node)));
    if (!fresh) return;
    std::memcpy(static_cast<void*>(fresh), nodes_, (size_ + 1) * sizeof(Node));
    release(nodes_, capacity_ * sizeof(Node));
    nodes_ = fresh;
    capacity_ = fit;
  }

  Node& node(uint32_t id) { return nodes_[id]; }
  const Node& node(uint32_t id) const { return nodes_[id]; }
  // Nodes are 1..size().
  uint32_t size() const { return size_; }
  uint64_t lost() const { return lost_; }
  size_t memory_bytes() const { return capacity_ * sizeof(Node) + steps_.memory_bytes(); }

 private:
  static constexpr uint64_t kRootStep = uint64_t{1} << 63;

  struct Step {
    ReuseSetStepKey key;
    uint32_t to = kNone;
  };

  uint32_t lose(uint32_t set) {
    ++lost_;
    return set;
  }

  bool holds(uint32_t set, uint64_t tag) const {
    for (uint32_t id = set; id != kNone; id = nodes_[id].parent)
      if (nodes_[id].tag == tag) return true;
    return false;
  }

  uint32_t make_node(uint64_t tag, uint32_t parent, uint32_t writer) {
    if (size_ + 1 >= capacity_ && !grow()) return kNone;
    const uint32_t id = ++size_;
    nodes_[id] = Node{tag, parent, writer, 0};
    return id;
  }

  bool grow() {
    if (capacity_ >= kMaxNodes) return false;
    const uint32_t fresh_capacity = capacity_ ? capacity_ * 2 : 256;
    auto* fresh = static_cast<Node*>(reserve_zeroed(fresh_capacity * sizeof(Node)));
    if (!fresh) return false;
    if (nodes_) std::memcpy(static_cast<void*>(fresh), nodes_, (size_ + 1) * sizeof(Node));
    release(nodes_, capacity_ * sizeof(Node));
    nodes_ = fresh;
    capacity_ = fresh_capacity;
    return true;
  }

  PagedHashTable<Step, kFewRecentEntries> steps_;  // a set's few instructions
  Node* nodes_ = nullptr;                          // [capacity_], node 0 unused
  uint32_t capacity_ = 0;
  uint32_t size_ = 0;
  uint64_t lost_ = 0;
};

}  // namespace weft
