#include "views/comm_view.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <numeric>

#include "views/text_table.h"

namespace weft {
namespace {

std::string cell(const CommFindings& f, size_t writer, size_t reader) {
  if (f.kind == CommKind::Crr) return fmt::format("{:.2f}", f.crr[writer][reader]);
  return std::to_string(f.counts[writer][reader]);
}

std::string total_text(const CommFindings& f, const CommTotal& total) {
  if (f.kind == CommKind::Crr) return fmt::format("{:.2f}", total.crr);
  return std::to_string(total.counts);
}

const char* describe(CommKind kind) {
  switch (kind) {
    case CommKind::Raw:
      return "true communication (RaW)";
    case CommKind::Rar:
      return "communication reuse (RaR)";
    case CommKind::Inval:
      return "invalidations";
    case CommKind::Crr:
      return "communication reuse ratio (RaR / true communications of the data read)";
  }
  return "";
}

const char* axes(CommKind kind) {
  return kind == CommKind::Inval
             ? "rows = writing thread, columns = thread whose copy the write invalidated"
             : "rows = writers, columns = readers";
}

std::string render_table(const CommFindings& f) {
  std::string text =
      fmt::format("{}: {} in {}; {}\n", comm_kind_name(f.kind), describe(f.kind),
                  f.region ? "region " + *f.region : "the whole program", axes(f.kind));
  if (!f.profile.complete) {
    text += fmt::format("warning: INCOMPLETE profile ({})\n", f.profile.incomplete_reason);
  }
  if (const std::string note = crd_sampling_note(f.profile);
      f.kind == CommKind::Crr && f.borrowed_known && !note.empty())
    text += "note: borrowed epochs estimated: " + note + "\n";
  if (f.kind == CommKind::Crr && !f.borrowed_known)
    text +=
        "note: this profile does not tell which data the region re-read after its first read "
        "elsewhere (recorded without crd, or by an older weft): its CRR is RaR / its own RaW\n";
  const size_t threads = f.counts.size();
  if (threads == 0) return text + "no threads recorded\n";

  std::vector<TextTable::Align> columns(threads + 2, TextTable::Align::Right);
  columns[0] = TextTable::Align::Left;
  TextTable table(columns);
  std::vector<std::string> header{"w\\r"};
  for (size_t reader = 0; reader < threads; ++reader) header.push_back(std::to_string(reader));
  header.push_back("total");
  table.add_row(std::move(header));
  for (size_t writer = 0; writer < threads; ++writer) {
    std::vector<std::string> row{std::to_string(writer)};
    for (size_t reader = 0; reader < threads; ++reader) row.push_back(cell(f, writer, reader));
    row.push_back(total_text(f, f.row_totals[writer]));
    table.add_row(std::move(row));
  }
  std::vector<std::string> totals{"total"};
  for (size_t reader = 0; reader < threads; ++reader)
    totals.push_back(total_text(f, f.column_totals[reader]));
  totals.push_back(total_text(f, f.total));
  table.add_row(std::move(totals));
  return text + table.render();
}

std::string render_csv(const CommFindings& f) {
  const size_t threads = f.counts.size();
  std::string text = "writer\\reader";
  for (size_t reader = 0; reader < threads; ++reader) text += fmt::format(",t{}", reader);
  text += "\n";
  for (size_t writer = 0; writer < threads; ++writer) {
    text += fmt::format("t{}", writer);
    for (size_t reader = 0; reader < threads; ++reader) text += "," + cell(f, writer, reader);
    text += "\n";
  }
  return text;
}

std::string render_json(const CommFindings& f) {
  nlohmann::json json;
  json["region"] = f.region ? nlohmann::json(*f.region) : nlohmann::json(nullptr);
  json["kind"] = comm_kind_name(f.kind);
  std::vector<size_t> threads(f.counts.size());
  std::iota(threads.begin(), threads.end(), size_t{0});
  json["threads"] = threads;
  nlohmann::json rows = nlohmann::json::array();
  for (size_t writer = 0; writer < f.counts.size(); ++writer) {
    nlohmann::json row = nlohmann::json::array();
    for (size_t reader = 0; reader < f.counts.size(); ++reader) {
      if (f.kind == CommKind::Crr) {
        row.push_back(f.crr[writer][reader]);
      } else {
        row.push_back(f.counts[writer][reader]);
      }
    }
    rows.push_back(std::move(row));
  }
  json["matrix"] = std::move(rows);
  if (f.kind == CommKind::Crr) {
    json["total"] = f.total.crr;
    json["communicated"] = f.counts;
  } else {
    json["total"] = f.total.counts;
  }
  return json.dump() + "\n";
}

}  // namespace

std::string render_comm(const CommFindings& findings, OutputFormat format) {
  switch (format) {
    case OutputFormat::Csv:
      return render_csv(findings);
    case OutputFormat::Json:
      return render_json(findings);
    case OutputFormat::Table:
      break;
  }
  return render_table(findings);
}

}  // namespace weft
