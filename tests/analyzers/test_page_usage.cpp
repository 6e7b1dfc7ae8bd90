// The page-usage analyzer: first writers (a read does not place a page, the
// first write does, a later writer does not move it) and per-thread access
// counts, the run in progress included.
#include <gtest/gtest.h>

#include <map>
#include <tuple>
#include <vector>

#include "analyzers/page_usage/page_usage.h"

namespace weft {
namespace {

constexpr uint64_t kPage = 0x7f0000100000;  // page-aligned

std::map<uint64_t, std::pair<uint32_t, uint64_t>> first_writes(const PageUsage& pages) {
  std::map<uint64_t, std::pair<uint32_t, uint64_t>> out;
  pages.for_each_first_write([&](const PageFirstWrite& w) {
    out[w.page_address] = {w.thread, w.pc};
  });
  return out;
}

// (page, thread) -> (reads, writes), summing repeated pairs as the profile
// builder does.
std::map<std::pair<uint64_t, uint32_t>, std::pair<uint64_t, uint64_t>> counts(
    const PageUsage& pages) {
  std::map<std::pair<uint64_t, uint32_t>, std::pair<uint64_t, uint64_t>> out;
  pages.for_each_page_count([&](const PageAccesses& a) {
    auto& c = out[{a.page_address, a.thread}];
    c.first += a.reads;
    c.second += a.writes;
  });
  return out;
}

TEST(PageUsage, TheFirstWriteNotTheFirstReadPlacesAPage) {
  PageUsage pages(PageUsageConfig{8});
  PageUsage::ThreadState* reader = pages.attach(1);
  PageUsage::ThreadState* writer = pages.attach(2);
  ASSERT_NE(reader, nullptr);
  ASSERT_NE(writer, nullptr);
  pages.access(*reader, 0x401000, kPage + 8, false);  // the zero page: not placed
  pages.access(*writer, 0x401010, kPage + 16, true);  // placed here
  pages.access(*reader, 0x401020, kPage + 24, true);  // too late
  pages.access(*reader, 0x401030, kPage + kPageBytes, true);
  const auto w = first_writes(pages);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w.at(kPage), std::make_pair(2u, uint64_t{0x401010}));
  EXPECT_EQ(w.at(kPage + kPageBytes), std::make_pair(1u, uint64_t{0x401030}));
}

TEST(PageUsage, CountsRunsOfAccessesPerPageAndThread) {
  PageUsage pages(PageUsageConfig{8});
  PageUsage::ThreadState* t = pages.attach(3);
  ASSERT_NE(t, nullptr);
  // Three passes over four pages, 16 reads and 2 writes per page per pass;
  // the last page's run is still open when the counts are read.
  for (int pass = 0; pass < 3; ++pass)
    for (uint64_t p = 0; p < 4; ++p)
      for (uint64_t i = 0; i < 18; ++i)
        pages.access(*t, 0x402000, kPage + p * kPageBytes + i * 8, i >= 16);
  const auto c = counts(pages);
  ASSERT_EQ(c.size(), 4u);
  for (uint64_t p = 0; p < 4; ++p)
    EXPECT_EQ(c.at({kPage + p * kPageBytes, 3}), std::make_pair(uint64_t{48}, uint64_t{6})) << p;
  EXPECT_EQ(pages.dropped(), 0u);
  // The first pass wrote each page first.
  EXPECT_EQ(first_writes(pages).size(), 4u);
}

TEST(PageUsage, ThreadsBeyondTheTableGetNoState) {
  PageUsage pages(PageUsageConfig{4});
  EXPECT_EQ(pages.attach(4), nullptr);
  EXPECT_NE(pages.attach(3), nullptr);
}

}  // namespace
}  // namespace weft
