#include "views/comm_view.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <numeric>

#include "findings/locality.h"
#include "findings/suggestions.h"
#include "views/text_table.h"

namespace weft {
namespace {

// The selected matrix; for crr also the two matrices it is made of, since
// totals of a ratio are ratios of totals. CRR comes from locality_metrics.
struct SelectedMatrix {
  CommKind kind;
  CommunicationMatrix counts;  // raw, rar or inval; raw for crr
  CommunicationMatrix reuse;   // rar, for crr only
  CrrMatrix crr;               // crr_matrix(counts, reuse), for crr only

  size_t size() const { return counts.size(); }

  double value(size_t writer, size_t reader) const {
    if (kind == CommKind::Crr) return crr[writer][reader];
    return static_cast<double>(counts[writer][reader]);
  }

  std::string cell(size_t writer, size_t reader) const {
    if (kind == CommKind::Crr) return fmt::format("{:.2f}", value(writer, reader));
    return std::to_string(counts[writer][reader]);
  }

  // Sums over a set of cells; totals of a ratio are ratios of sums.
  struct Sums {
    uint64_t counts = 0;
    uint64_t reuse = 0;
    void add(const SelectedMatrix& m, size_t writer, size_t reader) {
      counts += m.counts[writer][reader];
      if (m.kind == CommKind::Crr) reuse += m.reuse[writer][reader];
    }
  };

  Sums row_sums(size_t writer) const {
    Sums sums;
    for (size_t reader = 0; reader < size(); ++reader) sums.add(*this, writer, reader);
    return sums;
  }
  Sums column_sums(size_t reader) const {
    Sums sums;
    for (size_t writer = 0; writer < size(); ++writer) sums.add(*this, writer, reader);
    return sums;
  }
  Sums all_sums() const {
    Sums sums;
    for (size_t writer = 0; writer < size(); ++writer) {
      for (size_t reader = 0; reader < size(); ++reader) sums.add(*this, writer, reader);
    }
    return sums;
  }

  std::string format(const Sums& sums) const {
    if (kind == CommKind::Crr) return fmt::format("{:.2f}", crr_ratio(sums.reuse, sums.counts));
    return std::to_string(sums.counts);
  }
};

SelectedMatrix select_matrix(const Profile& profile, const CommOptions& options) {
  std::vector<int64_t> region_ids;
  if (options.region) {
    for (const RegionInfo& region : profile.select_regions(*options.region)) {
      region_ids.push_back(region.id);
    }
  }
  SelectedMatrix selected{options.kind, {}, {}, {}};
  switch (options.kind) {
    case CommKind::Raw:
      selected.counts = profile.matrix(region_ids, MatrixKind::Raw);
      break;
    case CommKind::Rar:
      selected.counts = profile.matrix(region_ids, MatrixKind::Rar);
      break;
    case CommKind::Inval:
      selected.counts = profile.matrix(region_ids, MatrixKind::Inval);
      break;
    case CommKind::Crr:
      selected.counts = profile.matrix(region_ids, MatrixKind::Raw);
      selected.reuse = profile.matrix(region_ids, MatrixKind::Rar);
      selected.crr = crr_matrix(selected.counts, selected.reuse);
      break;
  }
  return selected;
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
      return "communication reuse ratio (RaR / RaW)";
  }
  return "";
}

const char* axes(CommKind kind) {
  return kind == CommKind::Inval
             ? "rows = writing thread, columns = thread whose copy the write invalidated"
             : "rows = writers, columns = readers";
}

std::string render_table(const Profile& profile, const CommOptions& options,
                         const SelectedMatrix& matrix) {
  std::string text = fmt::format(
      "{}: {} in {}; {}\n", comm_kind_name(options.kind), describe(options.kind),
      options.region ? "region " + *options.region : "the whole program", axes(options.kind));
  if (!profile.complete()) {
    text +=
        fmt::format("warning: INCOMPLETE profile ({})\n", profile.meta_value("incomplete_reason"));
  }
  const size_t threads = matrix.size();
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
    for (size_t reader = 0; reader < threads; ++reader) row.push_back(matrix.cell(writer, reader));
    row.push_back(matrix.format(matrix.row_sums(writer)));
    table.add_row(std::move(row));
  }
  std::vector<std::string> totals{"total"};
  for (size_t reader = 0; reader < threads; ++reader)
    totals.push_back(matrix.format(matrix.column_sums(reader)));
  totals.push_back(matrix.format(matrix.all_sums()));
  table.add_row(std::move(totals));
  return text + table.render();
}

std::string render_csv(const SelectedMatrix& matrix) {
  std::string text = "writer\\reader";
  for (size_t reader = 0; reader < matrix.size(); ++reader) text += fmt::format(",t{}", reader);
  text += "\n";
  for (size_t writer = 0; writer < matrix.size(); ++writer) {
    text += fmt::format("t{}", writer);
    for (size_t reader = 0; reader < matrix.size(); ++reader) {
      text += "," + matrix.cell(writer, reader);
    }
    text += "\n";
  }
  return text;
}

std::string render_json(const CommOptions& options, const SelectedMatrix& matrix) {
  nlohmann::json json;
  json["region"] = options.region ? nlohmann::json(*options.region) : nlohmann::json(nullptr);
  json["kind"] = comm_kind_name(options.kind);
  std::vector<size_t> threads(matrix.size());
  std::iota(threads.begin(), threads.end(), size_t{0});
  json["threads"] = threads;
  nlohmann::json rows = nlohmann::json::array();
  for (size_t writer = 0; writer < matrix.size(); ++writer) {
    nlohmann::json row = nlohmann::json::array();
    for (size_t reader = 0; reader < matrix.size(); ++reader) {
      if (options.kind == CommKind::Crr) {
        row.push_back(matrix.value(writer, reader));
      } else {
        row.push_back(matrix.counts[writer][reader]);
      }
    }
    rows.push_back(std::move(row));
  }
  json["matrix"] = std::move(rows);
  SelectedMatrix::Sums total = matrix.all_sums();
  if (options.kind == CommKind::Crr) {
    json["total"] = crr_ratio(total.reuse, total.counts);
  } else {
    json["total"] = total.counts;
  }
  return json.dump() + "\n";
}

}  // namespace

const char* comm_kind_name(CommKind kind) {
  switch (kind) {
    case CommKind::Raw:
      return "raw";
    case CommKind::Rar:
      return "rar";
    case CommKind::Inval:
      return "inval";
    case CommKind::Crr:
      return "crr";
  }
  return "raw";
}

std::optional<CommKind> parse_comm_kind(std::string_view name) {
  for (CommKind kind : {CommKind::Raw, CommKind::Rar, CommKind::Inval, CommKind::Crr}) {
    if (name == comm_kind_name(kind)) return kind;
  }
  return std::nullopt;
}

std::string render_comm(const Profile& profile, const CommOptions& options) {
  SelectedMatrix matrix = select_matrix(profile, options);
  switch (options.format) {
    case OutputFormat::Csv:
      return render_csv(matrix);
    case OutputFormat::Json:
      return render_json(options, matrix);
    case OutputFormat::Table:
      break;
  }
  return render_table(profile, options, matrix);
}

}  // namespace weft
