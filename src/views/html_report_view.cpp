#include "views/html_report_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "findings/source_lines.h"
#include "views/imbalance_view.h"
#include "views/loops_view.h"
#include "views/report_view.h"
#include "views/view_format.h"

namespace weft {

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

namespace {

std::string esc(std::string_view text) { return html_escape(text); }

constexpr const char* kStyle = R"(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d2330;background:#fafbfc}
header{background:#1d2330;color:#fff;padding:10px 24px}
header h1{font-size:18px;margin:0}
nav{position:sticky;top:0;background:#eef1f5;padding:6px 24px;border-bottom:1px solid #d5dae1;z-index:1}
nav a{margin-right:14px;color:#1d4f91;text-decoration:none}
main{max-width:1200px;margin:0 auto;padding:0 24px 48px}
section{margin-top:28px}
h2{border-bottom:2px solid #1d2330;padding-bottom:2px}
h3{margin-bottom:4px}
table{border-collapse:collapse;margin:6px 0}
td,th{border:1px solid #d5dae1;padding:2px 8px;text-align:left;vertical-align:top}
th{background:#eef1f5}
td.n{text-align:right;font-variant-numeric:tabular-nums}
code,pre{font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-size:12.5px}
pre.src{background:#fff;border:1px solid #d5dae1;padding:4px 0;overflow-x:auto}
pre.src span{display:block;padding:0 8px;white-space:pre}
pre.src span.hl{background:#ffe9a8}
pre.src b{display:inline-block;width:4em;color:#8a93a3;font-weight:normal;user-select:none}
.finding{background:#fff;border:1px solid #d5dae1;border-left:4px solid #c2410c;padding:6px 10px;margin:8px 0}
.finding.imbalance{border-left-color:#7c3aed}
.finding.memory{border-left-color:#0f766e}
.note{color:#5b6474}
.warn{color:#b91c1c;font-weight:bold}
.charts{display:flex;flex-wrap:wrap;gap:18px}
figure{margin:0}
figcaption{font-size:12px;color:#5b6474}
svg text{font:11px system-ui,sans-serif;fill:#1d2330}
.crd-grid{display:flex;flex-wrap:wrap;gap:0 28px}
.crd-region{width:540px}
.crd-region h3{font-size:14px;overflow-wrap:anywhere}
.panel{display:none}
.panel.shown{display:block}
)";

// Runs first: an uncaught error anywhere in the page is written into the
// DOM, where a test (or a person) reads it.
constexpr const char* kErrorScript = R"(
window.addEventListener('error', function (e) {
  document.documentElement.setAttribute('data-weft-status', 'error');
  document.documentElement.setAttribute('data-weft-error', String(e.message));
});
)";

// The region picker; then the page says it ran.
constexpr const char* kPageScript = R"(
(function () {
  var picker = document.getElementById('region-picker');
  function show() {
    var panels = document.querySelectorAll('#communication .panel');
    for (var i = 0; i < panels.length; ++i)
      panels[i].classList.toggle('shown', panels[i].getAttribute('data-panel') === picker.value);
  }
  if (picker) { picker.addEventListener('change', show); show(); }
  if (document.documentElement.getAttribute('data-weft-status') !== 'error')
    document.documentElement.setAttribute('data-weft-status', 'ok');
})();
)";

std::string number(double value) { return fmt::format("{:.4g}", value); }

std::string bytes_text(uint64_t bytes) { return human_bytes(bytes); }

// A white-to-dark-red ramp for a share of the largest value.
// The opening tag of a chart: its class, `attributes` (each with its
// leading space), its size as both its box and its view box.
std::string svg_open(std::string_view cls, double width, double height,
                     std::string_view attributes = {}) {
  return fmt::format(
      "<svg class=\"{0}\"{1} width=\"{2:.0f}\" height=\"{3:.0f}\" viewBox=\"0 0 {2:.0f} "
      "{3:.0f}\" role=\"img\">",
      cls, attributes, width, height);
}

std::string heat_colour(double share) {
  if (!(share > 0)) return "#f1f3f6";
  share = std::clamp(share, 0.0, 1.0);
  const double light = 92 - 62 * std::sqrt(share);
  return fmt::format("hsl(8,78%,{:.0f}%)", light);
}

// One heatmap; every cell (zeros too) carries its value, and the threads
// it stands for (data-w, data-r: the first of its block of `bucket`).
template <class Matrix>
std::string heatmap_svg(const Matrix& matrix, size_t bucket, const std::string& kind,
                        const std::string& panel, bool ratio) {
  const size_t cells = matrix.size();
  double max = 0;
  for (const auto& row : matrix)
    for (const auto value : row) max = std::max(max, static_cast<double>(value));
  const double cell = cells == 0 ? 20 : std::clamp(320.0 / static_cast<double>(cells), 4.0, 28.0);
  const double margin = 34;
  const double size = margin + cell * static_cast<double>(cells) + 4;
  std::string svg = svg_open("heatmap", size, size,
                             fmt::format(" data-kind=\"{}\" data-panel=\"{}\" data-cells=\"{}\" "
                                         "data-bucket=\"{}\"",
                                         kind, panel, cells, bucket));
  const bool labels = cell >= 12;
  for (size_t c = 0; c < cells; ++c) {
    if (!labels && c % 8 != 0) continue;
    svg += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>"
        "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>",
        margin + cell * (static_cast<double>(c) + 0.5), margin - 6, c * bucket, margin - 4,
        margin + cell * (static_cast<double>(c) + 0.5) + 4, c * bucket);
  }
  auto threads = [&](size_t c) {
    return bucket == 1 ? fmt::format("T{}", c)
                       : fmt::format("T{}-{}", c * bucket, (c + 1) * bucket - 1);
  };
  for (size_t w = 0; w < cells; ++w) {
    for (size_t r = 0; r < cells; ++r) {
      const double value = static_cast<double>(matrix[w][r]);
      const std::string shown =
          ratio ? fmt::format("{:.6g}", value) : fmt::format("{}", matrix[w][r]);
      svg += fmt::format(
          "<rect class=\"cell\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
          "fill=\"{}\" data-w=\"{}\" data-r=\"{}\" data-v=\"{}\"><title>{} \u2192 {}: {} "
          "{}</title></rect>",
          margin + cell * static_cast<double>(r), margin + cell * static_cast<double>(w), cell,
          cell, heat_colour(max > 0 ? value / max : 0), w * bucket, r * bucket, shown, threads(w),
          threads(r), kind, shown);
    }
  }
  return svg + "</svg>";
}

std::string figure(const std::string& svg, const std::string& caption) {
  return "<figure>" + svg + "<figcaption>" + caption + "</figcaption></figure>";
}

// Threads on a circle, an edge per communicating pair, its width by volume.
std::string graph_svg(const ThreadVolumes& volume) {
  const size_t threads = volume.size();
  const double size = 360, centre = size / 2, radius = threads <= 1 ? 0 : 140;
  double max = 0;
  for (size_t i = 0; i < threads; ++i)
    for (size_t j = i + 1; j < threads; ++j) max = std::max(max, volume[i][j]);
  auto x = [&](size_t t) {
    return centre + radius * std::sin(2 * std::numbers::pi * static_cast<double>(t) /
                                      static_cast<double>(threads));
  };
  auto y = [&](size_t t) {
    return centre - radius * std::cos(2 * std::numbers::pi * static_cast<double>(t) /
                                      static_cast<double>(threads));
  };
  std::string svg = svg_open("graph", size, size);
  for (size_t i = 0; i < threads; ++i)
    for (size_t j = i + 1; j < threads; ++j) {
      if (!(volume[i][j] > 0)) continue;
      svg += fmt::format(
          "<line class=\"edge\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" "
          "stroke=\"#c2410c\" stroke-opacity=\"0.7\" stroke-width=\"{:.2f}\" data-a=\"{}\" "
          "data-b=\"{}\" data-v=\"{:.0f}\"><title>T{} \u2194 T{}: {:.0f} events</title></line>",
          x(i), y(i), x(j), y(j), 0.5 + 9.5 * volume[i][j] / max, i, j, volume[i][j], i, j,
          volume[i][j]);
    }
  for (size_t t = 0; t < threads; ++t)
    svg += fmt::format(
        "<circle cx=\"{0:.1f}\" cy=\"{1:.1f}\" r=\"11\" fill=\"#1d4f91\"/><text x=\"{0:.1f}\" "
        "y=\"{2:.1f}\" text-anchor=\"middle\" style=\"fill:#fff\">{3}</text>",
        x(t), y(t), y(t) + 4, t);
  return svg + "</svg>";
}

// A CRD histogram (log2 bins), with the min and max cutoffs drawn.
std::string crd_svg(const LocalityMetrics& m) {
  const std::vector<CrdBin> bins = contiguous_bins(m.crd.histogram);
  if (bins.empty()) return "<p class=\"note\">no distances measured</p>";
  const double width = 520, height = 170, left = 44, bottom = 34, top = 10;
  uint64_t max = 0;
  for (const CrdBin& bin : bins) max = std::max(max, bin.count);
  // The axis spans the bins and the cutoffs, by bin index.
  auto index_of = [](uint64_t distance) {
    return distance == 0 ? 0.0 : std::log2(static_cast<double>(distance)) + 1;
  };
  double first = bins.front().index, last = static_cast<double>(bins.back().index) + 1;
  for (uint64_t cutoff : {m.cutoffs.min, m.cutoffs.max})
    if (cutoff > 0) {
      first = std::min(first, std::floor(index_of(cutoff)));
      last = std::max(last, index_of(cutoff) + 0.5);
    }
  const double span = std::max(1.0, last - first);
  const double plot = width - left - 10;
  auto xpos = [&](double index) { return left + plot * (index - first) / span; };
  std::string svg = svg_open("crd", width, height) +
                    fmt::format(
                        "<line x1=\"{0:.0f}\" y1=\"{1:.0f}\" x2=\"{2:.0f}\" y2=\"{1:.0f}\" "
                        "stroke=\"#8a93a3\"/><text x=\"4\" y=\"{3:.0f}\">{4}</text>",
                        left, height - bottom, width - 10, top + 10, max);
  for (const CrdBin& bin : bins) {
    const double h = max == 0 ? 0
                              : (height - bottom - top) * static_cast<double>(bin.count) /
                                    static_cast<double>(max);
    const double x0 = xpos(bin.index), x1 = xpos(bin.index + 1.0);
    svg += fmt::format(
        "<rect class=\"bin\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
        "fill=\"#1d4f91\" data-lo=\"{}\" data-hi=\"{}\" data-v=\"{}\"><title>distance {}-{}: {} "
        "events</title></rect>",
        x0 + 1, height - bottom - h, std::max(1.0, x1 - x0 - 2), h, bin.lo, bin.hi, bin.count,
        bin.lo, bin.hi, bin.count);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.0f}\" text-anchor=\"middle\">{}</text>",
                       (x0 + x1) / 2, height - bottom + 13, bin.lo);
  }
  const char* names[] = {"min", "max"};
  const uint64_t cutoffs[] = {m.cutoffs.min, m.cutoffs.max};
  for (int i = 0; i < 2; ++i) {
    if (cutoffs[i] == 0) continue;
    const double x = xpos(index_of(cutoffs[i]));
    svg += fmt::format(
        "<line class=\"cutoff\" data-cutoff=\"{0}\" x1=\"{1:.1f}\" y1=\"{2:.0f}\" x2=\"{1:.1f}\" "
        "y2=\"{3:.0f}\" stroke=\"{4}\" stroke-dasharray=\"4 3\" stroke-width=\"2\"/>"
        "<text x=\"{1:.1f}\" y=\"{5:.0f}\" text-anchor=\"{7}\" style=\"fill:{4}\">{0} "
        "cutoff {6}</text>",
        names[i], x, top, height - bottom, i == 0 ? "#ca8a04" : "#b91c1c",
        i == 0 ? height - 4 : top + 8, cutoffs[i], x > width - 120 ? "end" : "middle");
  }
  return svg + "</svg>";
}

// Per thread: a busy bar and its idle rest up to the busiest thread.
std::string instance_svg(const InstanceBars& bars) {
  const double row = 16, left = 40, width = 460;
  const double height = row * static_cast<double>(bars.threads.size()) + 6;
  std::string svg = svg_open("instance", left + width + 10, height);
  for (size_t i = 0; i < bars.threads.size(); ++i) {
    const InstanceThreadBar& t = bars.threads[i];
    const double y = 3 + row * static_cast<double>(i);
    const double busy = bars.max_busy > 0 ? width * t.busy / bars.max_busy : 0;
    svg += fmt::format(
        "<text x=\"4\" y=\"{:.0f}\">T{}</text><rect class=\"busy\" x=\"{:.0f}\" y=\"{:.0f}\" "
        "width=\"{:.1f}\" height=\"{:.0f}\" fill=\"#1d4f91\" data-thread=\"{}\" "
        "data-v=\"{:.6g}\"><title>T{} busy {:.4g} modeled cycles</title></rect>"
        "<rect class=\"idle\" x=\"{:.1f}\" y=\"{:.0f}\" width=\"{:.1f}\" height=\"{:.0f}\" "
        "fill=\"#e2e8f0\"><title>T{} idle {:.4g}</title></rect>",
        y + 11, t.thread, left, y, busy, row - 4, t.thread, t.busy, t.thread, t.busy, left + busy,
        y, width - busy, row - 4, t.thread, bars.max_busy - t.busy);
  }
  return svg + "</svg>";
}

// The bytes of a line each thread used, drawn on the line.
std::string offsets_svg(const SharingItem& item) {
  uint32_t line_bytes = 64;
  for (const ThreadOffsets& t : item.threads)
    for (const auto& [first, last] : t.ranges) line_bytes = std::max(line_bytes, last + 1);
  const double row = 16, left = 40, width = 448;
  const double scale = width / line_bytes;
  const double height = row * static_cast<double>(item.threads.size()) + 20;
  std::string svg = svg_open("offsets", left + width + 30, height);
  for (size_t i = 0; i < item.threads.size(); ++i) {
    const ThreadOffsets& t = item.threads[i];
    const double y = 2 + row * static_cast<double>(i);
    svg += fmt::format(
        "<text x=\"4\" y=\"{:.0f}\">T{}</text><rect x=\"{:.0f}\" y=\"{:.0f}\" width=\"{:.0f}\" "
        "height=\"{:.0f}\" fill=\"#f1f3f6\"/>",
        y + 11, t.thread, left, y, width, row - 4);
    for (const auto& [first, last] : t.ranges)
      svg += fmt::format(
          "<rect class=\"range\" x=\"{:.1f}\" y=\"{:.0f}\" width=\"{:.1f}\" height=\"{:.0f}\" "
          "fill=\"#0f766e\"><title>T{} bytes {}-{}</title></rect>",
          left + scale * first, y, std::max(1.0, scale * (last - first + 1)), row - 4, t.thread,
          first, last);
  }
  const double axis = row * static_cast<double>(item.threads.size()) + 14;
  for (uint32_t b = 0; b <= line_bytes; b += line_bytes / 4)
    svg += fmt::format("<text x=\"{:.0f}\" y=\"{:.0f}\" text-anchor=\"middle\">{}</text>",
                       left + scale * b, axis, b);
  return svg + "</svg>";
}

struct Page {
  const HtmlReportFindings& data;
  std::string html;

  // A link to the snippet holding file:line, with the location as text.
  std::string source_link(const std::string& file, uint32_t line, const std::string& text) const {
    const SourceSnippet* snippet = find_snippet(data.snippets, file, line);
    if (!snippet) return "<code>" + esc(text) + "</code>";
    return fmt::format("<a href=\"#src-{}-{}\"><code>{}</code></a>", snippet - data.snippets.data(),
                       line, esc(text));
  }

  void run() {
    const ReportFindings& r = data.report;
    const RunFacts& run = r.run;
    std::string command = run.command;
    for (const std::string& arg : run.args) command += " " + arg;
    html += "<section id=\"run\"><h2>The run</h2><table>";
    auto row = [&](const std::string& key, const std::string& value_html) {
      html += "<tr><th>" + key + "</th><td>" + value_html + "</td></tr>";
    };
    row("command", "<code>" + esc(command) + "</code>");
    row("directory", "<code>" + esc(run.cwd) + "</code>");
    row("source", esc(run.source));
    row("started", esc(run.start_time) + " on " + esc(run.hostname));
    row("machine", esc(run.topology));
    row("cache model", r.crd ? esc(bytes_text(r.cache.bytes)) + " (" + esc(r.cache.origin) + ")"
                             : std::string("none (CRD not recorded)"));
    row("threads", std::to_string(r.profile.threads));
    row("duration", fmt::format("{:.3f} s", run.duration_s));
    row("exit", esc(!run.exit_signal.empty()        ? "killed by " + run.exit_signal
                    : !run.exit_status_text.empty() ? "status " + run.exit_status_text
                                                    : std::string("unknown")));
    row("profile",
        r.profile.complete
            ? std::string("complete")
            : "<span class=\"warn\">INCOMPLETE: " + esc(r.profile.incomplete_reason) + "</span>");
    row("granularity", esc(r.profile.granularity) + " bytes");
    if (const std::string note = crd_sampling_note(r.profile); !note.empty()) row("crd", esc(note));
    if (const std::string note = instance_sampling_note(r.profile); !note.empty())
      row("sampled", esc(note));
    if (run.dropped_events.value_or(0) != 0 || run.dropped_sync_events.value_or(0) != 0)
      row("dropped",
          fmt::format("{} accesses, {} sync events not accounted", run.dropped_events.value_or(0),
                      run.dropped_sync_events.value_or(0)));
    row("weft", esc(run.weft_version) + ", profile <code>" + esc(r.profile.path) + "</code>");
    html += "</table></section>";
  }

  // The panel index of a region of the communication section, by name.
  std::string region_panel(const std::string& region) const {
    const ReportFindings& r = data.report;
    for (size_t i = 0; i < r.locality.size(); ++i)
      if (r.locality[i].volume.region.name == region) return fmt::format("{}", i + 1);
    return "";
  }

  void findings() {
    const ReportFindings& r = data.report;
    html += "<section id=\"findings\"><h2>Findings</h2>";
    size_t count = 0;
    for (const Suggestion& s : r.suggestions) {
      ++count;
      const std::string panel = region_panel(s.region);
      html += fmt::format(
          "<div class=\"finding suggestion\"><b>{}</b> <code>{}</code> ({}) ",
          esc(suggestion_kind_name(s.kind)), esc(s.region),
          s.first_line > 0 ? source_link(s.file, s.first_line, s.location) : esc(s.location));
      if (!panel.empty()) html += fmt::format("<a href=\"#locality-{}\">locality</a>", panel);
      html += "<br>" + esc(s.evidence);
      if (!s.reads_at.empty())
        html += "<br>reads at <code>" + esc(s.reads_at) + "</code> " + esc(s.reads_code);
      if (s.reads_object) html += "<br>data: " + esc(s.reads_object->description);
      if (!s.also_in.empty()) {
        std::string others;
        for (const std::string& o : s.also_in) others += (others.empty() ? "" : ", ") + o;
        html += "<br>also in: <code>" + esc(others) + "</code>";
      }
      html += "<ul>";
      for (const std::string& action : s.actions) html += "<li>" + esc(action) + "</li>";
      html += "</ul></div>";
    }
    for (size_t i = 0; i < r.imbalance.size(); ++i) {
      ++count;
      const SectionImbalance& s = r.imbalance[i];
      html += fmt::format(
          "<div class=\"finding imbalance\"><b>load imbalance</b> <a "
          "href=\"#section-{}\"><code>{}</code></a>: {:.1f}% idle on average, lost {} ({:.0f}% "
          "of all lost; idle {} of its thread-time)",
          i, esc(section_location(s.region)), 100 * s.imbalance, number(s.lost),
          r.imbalance_total_lost > 0 ? 100 * s.lost / r.imbalance_total_lost : 0.0,
          share_text(s.idle_share));
      if (s.ranks_causes()) {
        const ImbalanceCauseLine& c = s.causes.front();
        html += "<br>top cause: " + esc(c.level.empty() ? c.kind : c.kind + " " + c.level) +
                " at " + source_link(c.position.file, c.position.line, cause_location(c));
      } else {
        html += "<br>" + esc(imbalance_unranked_note(s, ""));
      }
      html += "</div>";
    }
    for (size_t i = 0; i < r.memory.hints.size(); ++i) {
      ++count;
      const MemoryHint& h = r.memory.hints[i];
      html += fmt::format(
          "<div class=\"finding memory\"><b>{}</b> <a href=\"#hint-{}\">detail</a> at {}<br>{}"
          "<br>fix: {}</div>",
          esc(h.kind), i,
          source_link(h.position.file, h.position.line, code_location(h.position, h.pc)),
          esc(h.evidence), esc(h.suggestion));
    }
    if (count == 0) html += "<p>No finding crosses a threshold.</p>";
    html += "</section>";
  }

  void communication() {
    html += "<section id=\"communication\"><h2>Communication</h2>";
    const std::vector<HeatmapPanel>& panels = data.panels;
    html += "<p><label>region <select id=\"region-picker\">";
    for (size_t i = 0; i < panels.size(); ++i)
      html +=
          fmt::format("<option value=\"{}\">{}{}</option>", i, esc(panels[i].volume.region.name),
                      panels[i].volume.region.kind == "section" ? " (section)" : "");
    html +=
        "</select></label> <span class=\"note\">writer rows, reader columns; raw: true "
        "communications, rar: communication reuses, crr = rar / raw</span></p>";
    for (size_t i = 0; i < panels.size(); ++i) {
      const HeatmapPanel& p = panels[i];
      const std::string panel = std::to_string(i);
      html += fmt::format(
          "<div class=\"panel{}\" data-panel=\"{}\" data-region=\"{}\"><h3>{}</h3><p>raw {} rar "
          "{} inval {}; homogeneity {} balance {:.1f}%</p><div class=\"charts\">",
          i == 0 ? " shown" : "", i, esc(p.volume.region.name), esc(p.volume.region.name),
          p.volume.raw, p.volume.rar, p.volume.inval, number(p.homogeneity), p.balance);
      if (p.bucket > 1)
        html +=
            fmt::format("<p class=\"note\">each cell sums {} x {} threads</p>", p.bucket, p.bucket);
      html += figure(heatmap_svg(p.raw, p.bucket, "raw", panel, false), "raw");
      html += figure(heatmap_svg(p.rar, p.bucket, "rar", panel, false), "rar");
      html += figure(heatmap_svg(p.crr, p.bucket, "crr", panel, true),
                     p.borrowed_known ? "crr" : "crr (rar / raw: borrowed not recorded)");
      html += "</div></div>";
    }
    html += "<h3>Communication graph (whole program)</h3>";
    html += figure(graph_svg(data.pair_volume),
                   "threads as nodes; edge width by the pair's raw + rar, both directions");
    html += "<h3>Thread placement</h3>";
    if (!data.placement) {
      html +=
          "<p class=\"note\">The profile keeps only a summary of its machine; give "
          "<code>--topology XML</code> or <code>--synthetic SPEC</code> to <code>weft report "
          "--html</code> for the placement payoff.</p>";
    } else {
      const PlacementFindings& p = *data.placement;
      const double scatter = p.row(MappingAlgorithm::Scatter).cost.hop_bytes;
      html += "<p>machine: " + esc(p.machine) +
              "</p><table><tr><th>mapping</th><th>threads "
              "\u2192 PU</th><th>hop-bytes</th><th>vs scatter</th><th>vs unpinned</th></tr>";
      for (const PlacementRow& row : p.rows) {
        std::string pus;
        for (size_t t = 0; t < row.mapping.pu.size(); ++t)
          pus += fmt::format("{}T{}:{}", t ? " " : "", t,
                             row.mapping.pu[t] < p.pu_os_index.size()
                                 ? p.pu_os_index[row.mapping.pu[t]]
                                 : row.mapping.pu[t]);
        html += fmt::format(
            "<tr><td>{}{}</td><td><code>{}</code></td><td class=\"n\">{}</td><td "
            "class=\"n\">{:.1f}%</td><td class=\"n\">{:.1f}%</td></tr>",
            mapping_algorithm_name(row.mapping.algorithm),
            row.mapping.algorithm == p.chosen ? " (chosen)" : "", pus, number(row.cost.hop_bytes),
            100 * p.reduction(row.mapping.algorithm, scatter),
            100 * p.reduction(row.mapping.algorithm, p.unpinned.hop_bytes));
      }
      html += "</table>";
    }
    html += "</section>";
  }

  void locality() {
    const ReportFindings& r = data.report;
    html += "<section id=\"locality\"><h2>Locality</h2>";
    if (!r.crd) {
      html +=
          "<p class=\"note\">CRD not recorded: record with <code>--analyses "
          "comm,crd</code>.</p></section>";
      return;
    }
    html += "<p>cache " + esc(bytes_text(r.cache.bytes)) + " (" + esc(r.cache.origin) +
            "); distances in granules; below the min cutoff no capacity miss, between probable, "
            "above the max cutoff certain.</p>";
    html +=
        "<table><tr><th>region</th><th>raw+rar</th><th>CRD events</th><th>median "
        "CRD</th><th>beyond min</th><th>H</th><th>B</th></tr>";
    std::vector<const RegionLocality*> rows = {&r.program};
    for (const RegionLocality& l : r.locality) rows.push_back(&l);
    for (size_t i = 0; i < rows.size(); ++i) {
      const LocalityMetrics& m = rows[i]->metrics;
      html += fmt::format(
          "<tr><td><a href=\"#locality-{}\"><code>{}</code></a></td><td class=\"n\">{}</td><td "
          "class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{:.1f}%</td><td "
          "class=\"n\">{}</td><td class=\"n\">{:.1f}%</td></tr>",
          i, esc(rows[i]->volume.region.name), rows[i]->volume.raw + rows[i]->volume.rar,
          m.crd.events, m.median() ? std::to_string(*m.median()) : "-",
          100 * m.crd.fraction_beyond_min(), number(m.homogeneity), m.balance);
    }
    html += "</table><div class=\"crd-grid\">";
    for (size_t i = 0; i < rows.size(); ++i) {
      const LocalityMetrics& m = rows[i]->metrics;
      html += fmt::format(
          "<div id=\"locality-{}\" class=\"crd-region\" data-region=\"{}\"><h3>{}</h3><p>min "
          "cutoff {} max cutoff {} granules; {:.1f}% below min, {:.1f}% between, {:.1f}% above "
          "max</p>",
          i, esc(rows[i]->volume.region.name), esc(rows[i]->volume.region.name), m.cutoffs.min,
          m.cutoffs.max, 100 * m.crd.fraction_below_min, 100 * m.crd.fraction_between,
          100 * m.crd.fraction_above_max);
      html += crd_svg(m) + "</div>";
    }
    html += "</div></section>";
  }

  void imbalance() {
    const ReportFindings& r = data.report;
    html += "<section id=\"imbalance\"><h2>Load imbalance</h2>";
    if (!r.has_imbalance) {
      html += "<p class=\"note\">not recorded (record with the imbalance analysis)</p></section>";
      return;
    }
    if (r.profile.no_barrier_recognised())
      html += "<p class=\"note\">" + esc(no_barrier_note(r.profile.threads, "")) + "</p>";
    if (r.imbalance.empty()) html += "<p>No section had an idle thread.</p>";
    for (size_t i = 0; i < r.imbalance.size(); ++i) {
      const SectionImbalance& s = r.imbalance[i];
      html += fmt::format(
          "<div id=\"section-{}\" class=\"section\"><h3><code>{}</code></h3><p>{} instances; "
          "imbalance {:.1f}%; lost {} modeled cycles</p>",
          i, esc(section_location(s.region)), s.instances, 100 * s.imbalance, number(s.lost));
      if (i < data.instances.size()) {
        const SectionInstanceBars& bars = data.instances[i];
        html += fmt::format(
            "<p class=\"note\">the {} most imbalanced of {} instances: busy "
            "(blue) and idle (grey) modeled cycles per thread</p><div "
            "class=\"charts\">",
            bars.shown.size(), bars.instances);
        for (const InstanceBars& b : bars.shown)
          html += figure(instance_svg(b), fmt::format("instance {}: imbalance {:.1f}%", b.instance,
                                                      100 * b.imbalance));
        html += "</div>";
      }
      if (!s.ranks_causes()) {
        html += "<p>" + esc(imbalance_unranked_note(s, "")) + "</p>";
      } else {
        html += "<table><tr><th>#</th><th>cause</th><th>score</th><th>where</th><th>code</th></tr>";
        for (size_t c = 0; c < s.causes.size(); ++c) {
          const ImbalanceCauseLine& cause = s.causes[c];
          html += fmt::format(
              "<tr><td>{}</td><td>{}</td><td class=\"n\">{:.3f}</td><td>{}</td><td><code>{}</code>"
              "</td></tr>",
              c + 1, esc(cause.level.empty() ? cause.kind : cause.kind + " " + cause.level),
              cause.score,
              source_link(cause.position.file, cause.position.line, cause_location(cause)),
              esc(cause.code));
        }
        html += "</table>";
      }
      html += "</div>";
    }
    html += "</section>";
  }

  void memory() {
    const ReportFindings& r = data.report;
    html += "<section id=\"memory\"><h2>Memory</h2>";
    html += "<h3>False sharing and possible data races</h3>";
    if (!data.has_false_sharing) {
      html += "<p class=\"note\">not recorded (the falseshare analysis)</p>";
    } else if (data.sharing.items.empty()) {
      html += "<p>none</p>";
    }
    for (size_t i = 0; i < data.sharing.items.size(); ++i) {
      const SharingItem& item = data.sharing.items[i];
      html += fmt::format(
          "<div id=\"sharing-{}\" class=\"finding memory\"><b>{}</b> {}<br>{} events; data: {}", i,
          sharing_kind_name(item.kind), esc(item_headline(item)), group_digits(item.events),
          esc(data_object_description(item)));
      if (item.allocated_at)
        html += "<br>allocated at " + source_link(item.allocated_at->file, item.allocated_at->line,
                                                  code_location(*item.allocated_at, 0));
      html += "<br>lines: ";
      for (size_t l = 0; l < item.source_lines.size() && l < 5; ++l) {
        const SharingSourceLine& line = item.source_lines[l];
        html += (l ? ", " : "") + source_link(line.position.file, line.position.line,
                                              code_location(line.position, line.pc));
      }
      html += "<br>" + offsets_svg(item) + "<br>fix: " + esc(item.fix) + "</div>";
    }
    if (data.sharing.smaller_items > 0)
      html += fmt::format(
          "<p class=\"note\">{} smaller false-sharing items ({} events) not "
          "shown</p>",
          data.sharing.smaller_items, data.sharing.smaller_events);
    html += "<h3>Findings from the memory traces</h3>";
    if (!r.memory.traces && !r.memory.false_sharing)
      html += "<p class=\"note\">not recorded (the traces analysis)</p>";
    else if (r.memory.hints.empty())
      html += "<p>none</p>";
    for (size_t i = 0; i < r.memory.hints.size(); ++i) {
      const MemoryHint& h = r.memory.hints[i];
      html += fmt::format(
          "<div id=\"hint-{}\" class=\"finding memory\"><b>{}</b> {} <code>{}</code><br>{}<br>"
          "fix: {}</div>",
          i, esc(h.kind),
          source_link(h.position.file, h.position.line, code_location(h.position, h.pc)),
          esc(h.code), esc(h.evidence), esc(h.suggestion));
    }
    html += "<h3>OpenMP schedules executed</h3>";
    if (r.memory.schedules.empty())
      html += "<p>none recorded</p>";
    else {
      html +=
          "<table><tr><th>loop</th><th>schedule</th><th>executions</th><th>from</th><th>"
          "evidence</th></tr>";
      for (const LoopSchedule& s : r.memory.schedules) {
        html += fmt::format(
            "<tr><td>{}</td><td><code>{}</code></td><td class=\"n\">{} of {}</td><td>{}</td><td>{}"
            "{}</td></tr>",
            source_link(s.position.file, s.position.line, code_location(s.position, s.pc)),
            esc(s.name), s.schedule.agreeing, s.schedule.executions, esc(s.source),
            esc(s.schedule.evidence),
            s.warning.empty() ? "" : "<br><span class=\"warn\">" + esc(s.warning) + "</span>");
      }
      html += "</table>";
    }
    html += "</section>";
  }

  void sources() {
    html += "<section id=\"source\"><h2>Source</h2>";
    if (data.snippets.empty())
      html += "<p class=\"note\">no source file the findings name is readable here</p>";
    for (size_t i = 0; i < data.snippets.size(); ++i) {
      const SourceSnippet& s = data.snippets[i];
      html += fmt::format("<h3><code>{}</code></h3><pre class=\"src\">", esc(s.file));
      for (const SnippetLine& line : s.lines)
        html += fmt::format("<span id=\"src-{}-{}\"{}><b>{}</b>{}</span>", i, line.number,
                            line.highlighted ? " class=\"hl\"" : "", line.number, esc(line.text));
      html += "</pre>";
    }
    html += "</section>";
  }

  void loops() {
    const HotLoopFindings& h = data.report.hot_loops;
    html += "<section id=\"loops\"><h2>Hot loops</h2>";
    if (!h.recorded || h.loops.empty()) {
      html +=
          "<p class=\"note\">none recorded (the imbalance analysis counts the loops' "
          "instructions)</p></section>";
      return;
    }
    html +=
        "<p>the loops that executed the most instructions, with their static analysis on "
        "CPU model " +
        esc(h.cpu) + "</p>";
    if (!h.calibration_note.empty())
      html += "<p class=\"note\">" + esc(h.calibration_note) + "</p>";
    for (const std::string& caveat : h.cpu_caveats)
      html += "<p class=\"note\">model caveat: " + esc(caveat) + "</p>";
    html +=
        "<table><tr><th>share</th><th>loop</th><th>raw</th><th>rar</th><th>crd</th><th>busiest "
        "thread</th><th>static analysis</th></tr>";
    for (const HotLoop& loop : h.loops) {
      std::string analysis = loop.performance ? loop_summary_line(*loop.performance)
                                              : "no static analysis: " + loop.not_analyzed;
      if (loop.hot_path_blocks != 0)
        analysis +=
            fmt::format("; on its hot path ({} of {} blocks; every block: L1 {:.2f})",
                        loop.hot_path_blocks, loop.performance->blocks, loop.all_paths_cycles);
      if (loop.performance && !loop.performance->memory_levels.empty())
        for (const MemoryLevelEstimate& level : loop.performance->memory_levels)
          analysis += fmt::format("; {} {:.2f} ({})", level.level, level.cycles_per_iteration,
                                  level.bottleneck);
      if (loop.performance && !loop.performance->memory_levels.empty())
        analysis += "; strides " + hot_loop_strides_text(loop);
      html += fmt::format(
          "<tr><td class=\"n\">{:.1f}%</td><td>{}</td><td class=\"n\">{}</td><td "
          "class=\"n\">{}</td><td>{}</td><td class=\"n\">{:.2f}x</td><td>{}</td></tr>",
          100 * loop.share,
          loop.region.first_line > 0
              ? source_link(loop.region.file, loop.region.first_line, loop.region.name)
              : "<code>" + esc(loop.region.name) + "</code>",
          loop.raw, loop.rar, esc(loop.crd ? hot_loop_crd_text(loop) : "-"), loop.thread_spread,
          esc(analysis));
    }
    html += "</table></section>";
  }
};

}  // namespace

std::string render_html_report(const HtmlReportFindings& findings) {
  Page page{findings, {}};
  const std::string command = findings.report.run.command;
  page.html =
      "<!DOCTYPE html>\n<html lang=\"en\" data-weft-status=\"loading\"><head><meta "
      "charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, "
      "initial-scale=1\"><title>weft report: " +
      esc(command.substr(command.rfind('/') + 1)) + "</title><style>" + kStyle +
      "</style><script>" + kErrorScript + "</script></head><body><header><h1>weft report: <code>" +
      esc(command) +
      "</code></h1></header><nav><a href=\"#run\">run</a><a "
      "href=\"#findings\">findings</a><a href=\"#communication\">communication</a><a "
      "href=\"#locality\">locality</a><a href=\"#imbalance\">imbalance</a><a "
      "href=\"#memory\">memory</a><a href=\"#source\">source</a><a "
      "href=\"#loops\">loops</a></nav><main>";
  page.run();
  page.findings();
  page.communication();
  page.locality();
  page.imbalance();
  page.memory();
  page.sources();
  page.loops();
  page.html += std::string("</main><script>") + kPageScript + "</script></body></html>\n";
  return page.html;
}

}  // namespace weft
