// PageUsage: per memory page, the thread that wrote it first and where, and
// per thread how often it read and wrote the page — what weft needs to say
// whether data sits on the NUMA node of the threads that use it
// (docs/metrics.md, "Data placement").
//
// Linux places an anonymous page's frame on the node of the thread whose
// write faults it in (a read of an untouched page maps the shared zero
// page), so the first writer is the one that decides. A page freed and
// allocated again keeps its first writer: allocators keep freed memory
// mapped, and its frame stays where the first write put it.
//
// Hot path: a thread's accesses come in runs on one page, so each thread
// counts the current run in two registers-worth of fields and adds it to
// its own page table (PagedHashTable, no lock) when the run ends; a write
// asks the shared first-writer shadow (one word per page) only when it is
// to another page than the thread's previous write.
#pragma once

#include <atomic>
#include <cstdint>

#include "analyzers/page_usage/page_usage_records.h"
#include "analyzers/state/paged_hash_table.h"
#include "analyzers/state/per_thread_slot.h"
#include "analyzers/state/shadow_memory.h"

namespace weft {

struct PageUsageConfig {
  unsigned max_threads = 1024;
};

class PageUsage {
 public:
  static constexpr unsigned kPageBits = 12;
  static_assert(uint64_t{1} << kPageBits == kPageBytes);
  // A first-writer word: the pc in bits 0..47, the thread id + 1 above
  // (thread ids from 65534 on share the last tag, reported as unknown).
  static constexpr uint64_t kPcMask = (uint64_t{1} << 48) - 1;
  static constexpr unsigned kWriterShift = 48;
  static constexpr uint64_t kUnknownWriterTag = 0xffff;

  struct PageCount {
    uint64_t key = 0;  // page number (address >> kPageBits); never 0 for user data
    uint64_t reads = 0;
    uint64_t writes = 0;
  };

  struct ThreadState {
    uint32_t tid = 0;
    uint64_t writer_tag = 0;  // (tid + 1) << kWriterShift
    uint64_t page = 0;        // the page of the run being counted (0: none yet)
    uint64_t reads = 0;       // the run's
    uint64_t writes = 0;
    uint64_t written_page = 0;  // the page of the thread's previous write
    uint64_t dropped = 0;       // accesses not counted (no memory for a table or shadow)
    ShadowChunkCache chunks;
    PagedHashTable<PageCount> pages;
  };

  explicit PageUsage(const PageUsageConfig& config)
      : first_writers_(kPageBits), states_(config.max_threads) {}

  // The state of thread `tid`, created on first attach; null beyond
  // max_threads or out of memory.
  ThreadState* attach(uint32_t tid) {
    return states_.attach(tid, [tid](ThreadState& s) {
      s.tid = tid;
      const uint64_t tag = tid < kUnknownWriterTag - 1 ? uint64_t{tid} + 1 : kUnknownWriterTag;
      s.writer_tag = tag << kWriterShift;
      return true;
    });
  }

  __attribute__((always_inline)) void access(ThreadState& t, uint64_t pc, uint64_t addr,
                                             bool is_write) {
    const uint64_t page = addr >> kPageBits;
    if (__builtin_expect(page != t.page, 0)) end_run(t, page);
    if (is_write) {
      ++t.writes;
      if (__builtin_expect(page != t.written_page, 0)) first_write(t, pc, addr, page);
    } else {
      ++t.reads;
    }
  }

  // Visits every page's first write. Call after the run (no thread
  // accessing); mmap'd memory only, so it may run in a signal handler.
  template <class Visitor>
  void for_each_first_write(Visitor&& visit) const {
    first_writers_.for_each_chunk(
        [&](uintptr_t first, const std::atomic<uint64_t>* words, size_t n) {
          for (size_t i = 0; i < n; ++i) {
            const uint64_t w = words[i].load(std::memory_order_relaxed);
            if (w == 0) continue;
            const uint64_t tag = w >> kWriterShift;
            PageFirstWrite r;
            r.page_address = first + (uint64_t{i} << kPageBits);
            r.pc = w & kPcMask;
            r.thread = tag == kUnknownWriterTag ? UINT32_MAX : static_cast<uint32_t>(tag - 1);
            visit(r);
          }
        });
  }

  // Visits every (page, thread) count, the run in progress included (a page
  // may come twice for one thread: the reader adds them up). Same rules as
  // for_each_first_write.
  template <class Visitor>
  void for_each_page_count(Visitor&& visit) const {
    states_.for_each([&](const ThreadState& t) {
      t.pages.for_each([&](const PageCount& c) {
        visit(PageAccesses{c.key << kPageBits, t.tid, 0, c.reads, c.writes});
      });
      if (t.page != 0 && t.reads + t.writes > 0)
        visit(PageAccesses{t.page << kPageBits, t.tid, 0, t.reads, t.writes});
    });
  }

  uint64_t dropped() const {
    uint64_t n = 0;
    states_.for_each([&](const ThreadState& t) { n += t.dropped; });
    return n;
  }

 private:
  // The run on t.page ended: adds it to the thread's table, starts `page`'s.
  __attribute__((noinline)) void end_run(ThreadState& t, uint64_t page) {
    if (t.page != 0) {
      if (PageCount* c = t.pages.find_or_insert(t.page)) {
        c->reads += t.reads;
        c->writes += t.writes;
      } else {
        t.dropped += t.reads + t.writes;
      }
    }
    t.page = page;
    t.reads = t.writes = 0;
  }

  __attribute__((noinline)) void first_write(ThreadState& t, uint64_t pc, uint64_t addr,
                                             uint64_t page) {
    t.written_page = page;
    std::atomic<uint64_t>* word = first_writers_.word(addr, t.chunks);
    if (!word) {
      ++t.dropped;
      return;
    }
    uint64_t expected = 0;
    if (word->load(std::memory_order_relaxed) == 0)
      word->compare_exchange_strong(expected, (pc & kPcMask) | t.writer_tag,
                                    std::memory_order_relaxed);
  }

  ShadowMemory first_writers_;
  PerThreadStates<ThreadState> states_;
};

}  // namespace weft
