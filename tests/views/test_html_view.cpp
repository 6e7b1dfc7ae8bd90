// The HTML report's rendering on hand-made findings: names from the program
// are escaped wherever they appear, the sections come in order, the
// heatmap cells carry the matrix. (tests/views/html_report_test.py renders
// real reports in Chromium.)
#include <gtest/gtest.h>

#include <string>

#include "views/html_report_view.h"
#include "views/perfetto_view.h"

namespace weft {
namespace {

constexpr const char* kEvil = "evil<script>alert(1)</script>&\"'";
constexpr const char* kEscaped = "evil&lt;script&gt;alert(1)&lt;/script&gt;&amp;&quot;&#39;";

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

HtmlReportFindings evil_findings() {
  HtmlReportFindings f;
  f.report.run.command = std::string("/bin/") + kEvil;
  f.report.profile.threads = 2;
  f.report.program.volume.region.name = "whole program";
  f.report.program.metrics.raw = {{0, 7}, {3, 0}};
  f.report.program.metrics.rar = {{0, 14}, {0, 0}};
  f.report.program.metrics.crr = {{0, 2.0}, {0, 0}};
  RegionLocality region;
  region.volume.region.name = kEvil;
  region.volume.region.kind = "function";
  region.metrics = f.report.program.metrics;
  f.report.locality.push_back(region);
  f.pair_volume = {{0, 24}, {24, 0}};
  f.snippets.push_back({std::string("/src/") + kEvil + ".c", {{3, kEvil, true}}});
  make_heatmap_panels(f);
  return f;
}

TEST(HtmlEscape, EscapesMarkupCharacters) {
  EXPECT_EQ(html_escape(kEvil), kEscaped);
  EXPECT_EQ(html_escape("plain text 1-2"), "plain text 1-2");
}

TEST(HtmlReportView, NamesFromTheProgramAreText) {
  const std::string page = render_html_report(evil_findings());
  EXPECT_EQ(count(page, "<script>"), 2u);  // the page's own two
  EXPECT_EQ(count(page, "</script>"), 2u);
  EXPECT_EQ(count(page, kEvil), 0u);
  EXPECT_GE(count(page, kEscaped), 4u);  // title, command, region picker, panel, snippet
}

TEST(HtmlReportView, SectionsInOrderAndCellsCarryTheMatrix) {
  const std::string page = render_html_report(evil_findings());
  size_t at = 0;
  for (const char* id :
       {"run", "findings", "communication", "locality", "imbalance", "memory", "source", "loops"}) {
    const size_t found = page.find(std::string("<section id=\"") + id + "\"");
    ASSERT_NE(found, std::string::npos) << id;
    EXPECT_GT(found, at) << id;
    at = found;
  }
  EXPECT_NE(page.find("data-kind=\"raw\" data-panel=\"0\""), std::string::npos);
  EXPECT_NE(page.find("data-w=\"0\" data-r=\"1\" data-v=\"7\""), std::string::npos);
  EXPECT_NE(page.find("data-w=\"1\" data-r=\"0\" data-v=\"3\""), std::string::npos);
  EXPECT_NE(page.find("data-w=\"0\" data-r=\"1\" data-v=\"2\""), std::string::npos);  // crr
  EXPECT_EQ(page.find("http://"), std::string::npos);
  EXPECT_EQ(page.find("https://"), std::string::npos);
}

TEST(HtmlReportView, ManyThreadsShareACell) {
  HtmlReportFindings f;
  const size_t threads = 130;  // 3 threads per cell, 44 cells per axis
  CommunicationMatrix zero(threads, std::vector<uint64_t>(threads, 0));
  LocalityMetrics& m = f.report.program.metrics;
  m.raw = m.rar = zero;
  m.raw[0][3] = 5;
  m.raw[2][5] = 7;
  m.rar[1][4] = 6;
  m.raw[129][0] = 1;
  make_heatmap_panels(f);
  ASSERT_EQ(f.panels.size(), 1u);
  const HeatmapPanel& p = f.panels[0];
  EXPECT_EQ(p.bucket, 3u);
  ASSERT_EQ(p.raw.size(), 44u);
  EXPECT_EQ(p.raw[0][1], 12u);
  EXPECT_EQ(p.rar[0][1], 6u);
  EXPECT_DOUBLE_EQ(p.crr[0][1], 0.5);
  EXPECT_EQ(p.raw[43][0], 1u);
  const std::string page = render_html_report(f);
  EXPECT_NE(page.find("data-w=\"0\" data-r=\"3\" data-v=\"12\""), std::string::npos);
  EXPECT_NE(page.find("data-bucket=\"3\""), std::string::npos);
  EXPECT_EQ(count(page, "class=\"cell\""), 3 * 44u * 44u);
}

TEST(PerfettoView, SectionSpansNestBusyAndWaiting) {
  TimelineFindings t;
  t.origin_ns = 1000;
  t.threads = {{0, "", 1000, 9000}, {1, kEvil, 1500, 8000}};
  TimelineInstance instance;
  instance.id = 1;
  instance.section = "a.c:9";
  instance.team_end_ns = 5000;
  instance.threads = {{0, 2000, 5000}, {1, 2000, 4000}};
  t.instances.push_back(instance);
  const std::string json = render_perfetto(t);
  EXPECT_NE(json.find("\"name\": \"a.c:9 #0\""), std::string::npos);
  EXPECT_NE(json.find("\"name\": \"waiting\""), std::string::npos);
  EXPECT_EQ(count(json, "\"name\": \"waiting\""), 1u);  // thread 0 arrived last
  EXPECT_EQ(count(json, "\"name\": \"busy\""), 2u);
}

}  // namespace
}  // namespace weft
