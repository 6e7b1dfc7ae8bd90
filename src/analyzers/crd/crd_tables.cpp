#include "analyzers/crd/crd_tables.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>

#include "analyzers/communication/communication_records.h"
#include "analyzers/crd/crd_records.h"
#include "profile/analysis_tables.h"

namespace weft {

namespace {

constexpr const char* kSchemaSql = R"sql(
CREATE TABLE crd_distances(
  region_id INTEGER NOT NULL REFERENCES regions(id), writer INTEGER NOT NULL,
  reader INTEGER NOT NULL, distance INTEGER NOT NULL, count INTEGER NOT NULL,
  PRIMARY KEY(region_id, writer, reader, distance)) WITHOUT ROWID;
CREATE TABLE crd_word_distances(
  region_id INTEGER NOT NULL REFERENCES regions(id), writer INTEGER NOT NULL,
  reader INTEGER NOT NULL, distance INTEGER NOT NULL, count INTEGER NOT NULL,
  PRIMARY KEY(region_id, writer, reader, distance)) WITHOUT ROWID;
CREATE TABLE crd_unmeasured(
  region_id INTEGER NOT NULL REFERENCES regions(id), writer INTEGER NOT NULL,
  reader INTEGER NOT NULL, count INTEGER NOT NULL,
  PRIMARY KEY(region_id, writer, reader)) WITHOUT ROWID;
CREATE TABLE region_footprints(
  region_id INTEGER PRIMARY KEY REFERENCES regions(id), private_granules INTEGER NOT NULL,
  shared_granules INTEGER NOT NULL);
CREATE TABLE crr_epochs(
  id INTEGER PRIMARY KEY, writer INTEGER NOT NULL, reader INTEGER NOT NULL,
  raw_region_id INTEGER NOT NULL REFERENCES regions(id), count INTEGER NOT NULL);
CREATE TABLE crr_epoch_regions(
  epochs_id INTEGER NOT NULL REFERENCES crr_epochs(id),
  region_id INTEGER NOT NULL REFERENCES regions(id),
  PRIMARY KEY(epochs_id, region_id)) WITHOUT ROWID;
)sql";

// Distances per region and pair, pooled over the region's pcs (and per
// section, from the communication analysis' section records); footprints by
// the region of each granule's first access; the communication epochs that
// regions re-read without their true communication, from the readers' sets.
class CrdRows : public AnalysisRows {
 public:
  explicit CrdRows(const RunCapture& capture)
      : distances_(capture.records(kCrdDistances)),
        section_distances_(capture.records(kSectionDistances)),
        footprints_(capture.records(kCrdFootprints)),
        reuse_sets_(capture.records(kCrdReuseSets)) {}

  void add_pcs(std::set<uint64_t>& pcs) const override {
    for (const PcDistanceCount& d : distances_) pcs.insert(d.pc);
    for (const PcFootprint& f : footprints_) pcs.insert(f.pc);
    for (const ReuseSetNode& n : reuse_sets_)
      if (n.kind == kReuseSetCode) pcs.insert(n.tag);
  }
  void add_sections(std::set<std::pair<uint32_t, uint64_t>>& sections) const override {
    for (const PcDistanceCount& d : section_distances_) sections.insert({d.reader, d.pc});
    for (const ReuseSetNode& n : reuse_sets_)
      if (n.kind == kReuseSetSection) sections.insert({n.reader, n.tag});
  }
  void write(const sqlite::Database& db, const RunRegions& regions) const override {
    write_distances(db, regions);
    write_footprints(db, regions);
    write_epochs(db, regions);
  }

 private:
  void write_distances(const sqlite::Database& db, const RunRegions& regions) const {
    using Distances = std::map<std::tuple<int64_t, uint32_t, uint32_t, uint64_t>, uint64_t>;
    Distances lines, words;
    std::map<std::tuple<int64_t, uint32_t, uint32_t>, uint64_t> unmeasured;
    auto add = [&](int64_t region, const PcDistanceCount& d) {
      if (d.distance == kUnmeasuredDistance)
        unmeasured[{region, d.writer, d.reader}] += d.count;
      else if (d.distance & kWordDistance)
        words[{region, d.writer, d.reader, d.distance & ~kWordDistance}] += d.count;
      else
        lines[{region, d.writer, d.reader, d.distance}] += d.count;
    };
    for (const PcDistanceCount& d : distances_) add(regions.of_pc(d.pc), d);
    for (const PcDistanceCount& d : section_distances_) add(regions.of_section(d.reader, d.pc), d);
    for (const auto& [table, rows] :
         {std::pair{"crd_distances", &lines}, std::pair{"crd_word_distances", &words}}) {
      sqlite::Statement insert(db, std::string("INSERT INTO ") + table +
                                       "(region_id, writer, reader, distance, count)"
                                       " VALUES (?, ?, ?, ?, ?)");
      for (const auto& [key, count] : *rows) {
        const auto& [region, writer, reader, distance] = key;
        insert.run(region, writer, reader, static_cast<int64_t>(distance), count);
      }
    }
    sqlite::Statement insert_unmeasured(db,
                                        "INSERT INTO crd_unmeasured(region_id, writer, reader,"
                                        " count) VALUES (?, ?, ?, ?)");
    for (const auto& [key, count] : unmeasured) {
      const auto& [region, writer, reader] = key;
      insert_unmeasured.run(region, writer, reader, count);
    }
  }

  void write_footprints(const sqlite::Database& db, const RunRegions& regions) const {
    std::map<int64_t, std::pair<uint64_t, uint64_t>> footprints;
    for (const PcFootprint& f : footprints_) {
      auto& [private_granules, shared_granules] = footprints[regions.of_pc(f.pc)];
      private_granules += f.private_granules;
      shared_granules += f.shared_granules;
    }
    sqlite::Statement insert_footprint(db,
                                       "INSERT INTO region_footprints(region_id,"
                                       " private_granules, shared_granules) VALUES (?, ?, ?)");
    for (const auto& [region, counts] : footprints)
      insert_footprint.run(region, counts.first, counts.second);
  }

  // Each set with a count becomes the regions of its tags: the root's (its
  // true communication's) and the others; epochs that some other region
  // re-read are rows of crr_epochs, pooled by (pair, raw region, regions).
  void write_epochs(const sqlite::Database& db, const RunRegions& regions) const {
    using Kind = std::tuple<uint32_t, uint32_t>;  // (kind, reader)
    std::map<Kind, std::map<uint32_t, const ReuseSetNode*>> nodes;
    for (const ReuseSetNode& n : reuse_sets_) nodes[{n.kind, n.reader}][n.id] = &n;
    using Epochs = std::tuple<uint32_t, uint32_t, int64_t, std::vector<int64_t>>;
    std::map<Epochs, uint64_t> rows;
    for (const auto& [kind, by_id] : nodes) {
      std::map<uint32_t, int64_t> region_of;  // node id -> region of its tag
      for (const auto& [id, n] : by_id)
        region_of[id] = n->kind == kReuseSetCode ? regions.of_pc(n->tag)
                                                 : regions.of_section(n->reader, n->tag);
      for (const auto& [id, n] : by_id) {
        if (n->count == 0) continue;
        std::set<int64_t> reused;
        uint32_t at = id;
        // A path is at most as long as there are nodes (a damaged capture
        // could loop).
        for (size_t steps = 0; steps < by_id.size(); ++steps) {
          auto it = by_id.find(at);
          if (it == by_id.end()) break;
          if (it->second->parent == 0) {
            const int64_t raw_region = region_of[at];
            reused.erase(raw_region);
            if (!reused.empty())
              rows[{n->writer, n->reader, raw_region, {reused.begin(), reused.end()}}] += n->count;
            break;
          }
          reused.insert(region_of[at]);
          at = it->second->parent;
        }
      }
    }
    sqlite::Statement insert(db,
                             "INSERT INTO crr_epochs(id, writer, reader, raw_region_id, count)"
                             " VALUES (?, ?, ?, ?, ?)");
    sqlite::Statement insert_region(db,
                                    "INSERT INTO crr_epoch_regions(epochs_id, region_id)"
                                    " VALUES (?, ?)");
    int64_t id = 0;
    for (const auto& [key, count] : rows) {
      const auto& [writer, reader, raw_region, reused] = key;
      insert.run(++id, writer, reader, raw_region, count);
      for (int64_t region : reused) insert_region.run(id, region);
    }
  }

  std::vector<PcDistanceCount> distances_;
  std::vector<PcDistanceCount> section_distances_;
  std::vector<PcFootprint> footprints_;
  std::vector<ReuseSetNode> reuse_sets_;
};

}  // namespace

const AnalysisTables crd_tables = {
    kSchemaSql,
    [](const ProfileBuild& build) -> std::unique_ptr<AnalysisRows> {
      return std::make_unique<CrdRows>(build.capture);
    },
};

namespace {

std::vector<DistanceCount> read_distances(const Profile& profile, const char* table,
                                          const std::vector<int64_t>& region_ids, uint64_t scale) {
  return profile.read([&](const sqlite::Database& db) {
    std::vector<DistanceCount> out;
    sqlite::Statement query(db, std::string("SELECT writer, reader, distance, SUM(count) FROM ") +
                                    table + " WHERE " + region_filter(region_ids) +
                                    " GROUP BY writer, reader, distance"
                                    " ORDER BY writer, reader, distance");
    while (query.step())
      out.push_back({static_cast<uint32_t>(query.column_int(0)),
                     static_cast<uint32_t>(query.column_int(1)), query.column_u64(2) * scale,
                     query.column_u64(3) * scale});
    return out;
  });
}

}  // namespace

std::vector<DistanceCount> crd_distances(const Profile& profile,
                                         const std::vector<int64_t>& region_ids) {
  return read_distances(profile, "crd_distances", region_ids, 1);
}

std::vector<DistanceCount> crd_word_distances(const Profile& profile,
                                              const std::vector<int64_t>& region_ids,
                                              uint64_t granularity) {
  return read_distances(profile, "crd_word_distances", region_ids,
                        std::max<uint64_t>(granularity / kWordBytes, 1));
}

std::vector<PairCount> crd_unmeasured(const Profile& profile,
                                      const std::vector<int64_t>& region_ids) {
  return profile.read([&](const sqlite::Database& db) {
    std::vector<PairCount> out;
    sqlite::Statement query(db, "SELECT writer, reader, SUM(count) FROM crd_unmeasured WHERE " +
                                    region_filter(region_ids) +
                                    " GROUP BY writer, reader ORDER BY writer, reader");
    while (query.step())
      out.push_back({static_cast<uint32_t>(query.column_int(0)),
                     static_cast<uint32_t>(query.column_int(1)), query.column_u64(2)});
    return out;
  });
}

std::optional<CommunicationMatrix> crr_borrowed(const Profile& profile,
                                                const std::vector<int64_t>& region_ids) {
  if (!profile.has_analysis(AnalysisId::Crd) || !profile.has_table("crr_epochs"))
    return std::nullopt;
  const uint32_t threads = profile.thread_count();
  return profile.read([&](const sqlite::Database& db) -> std::optional<CommunicationMatrix> {
    CommunicationMatrix borrowed(threads, std::vector<uint64_t>(threads, 0));
    // The whole program holds every true communication: nothing to borrow.
    if (region_ids.empty()) return borrowed;
    std::string ids;
    for (int64_t id : region_ids) ids += (ids.empty() ? "" : ",") + std::to_string(id);
    sqlite::Statement query(
        db,
        "SELECT e.writer, e.reader, SUM(e.count) FROM crr_epochs e WHERE e.raw_region_id NOT IN (" +
            ids +
            ") AND EXISTS (SELECT 1 FROM crr_epoch_regions m WHERE m.epochs_id = e.id AND "
            "m.region_id IN (" +
            ids + ")) GROUP BY e.writer, e.reader");
    while (query.step()) {
      const auto writer = static_cast<size_t>(query.column_int(0));
      const auto reader = static_cast<size_t>(query.column_int(1));
      if (writer < threads && reader < threads) borrowed[writer][reader] = query.column_u64(2);
    }
    return borrowed;
  });
}

Footprint footprint(const Profile& profile, const std::vector<int64_t>& region_ids) {
  return profile.read([&](const sqlite::Database& db) {
    Footprint out;
    sqlite::Statement query(db,
                            "SELECT SUM(private_granules), SUM(shared_granules) FROM"
                            " region_footprints WHERE " +
                                region_filter(region_ids));
    if (query.step() && !query.is_null(0)) {
      out.private_granules = query.column_u64(0);
      out.shared_granules = query.column_u64(1);
    }
    return out;
  });
}

}  // namespace weft
