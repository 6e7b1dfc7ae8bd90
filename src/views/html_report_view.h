// `weft report --html`: the report as one self-contained HTML page (styles,
// script and SVG charts inline; nothing fetched when it is opened), from
// findings/html_report_findings.h. Every name from the program (symbols,
// files, regions, source text) is escaped: text, never markup.
//
// The page's script sets body[data-weft-status] to "ok" once it has run,
// or to "error" with body[data-weft-error] on an uncaught error; each
// heatmap cell carries data-w, data-r and data-v (writer, reader, value):
// tests read the rendered page back through them (docs/commands.md).
#pragma once

#include <string>
#include <string_view>

#include "findings/html_report_findings.h"

namespace weft {

std::string render_html_report(const HtmlReportFindings& findings);

// & < > " ' as character references: safe in text and in quoted attributes.
std::string html_escape(std::string_view text);

}  // namespace weft
