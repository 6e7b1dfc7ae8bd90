// Average-linkage (UPGMA) hierarchical clustering of events on the Pearson
// correlation of their per-thread counts, the clustering step of LIME's
// load-imbalance diagnosis (see README.md).
#pragma once

#include <Eigen/Dense>
#include <cstddef>
#include <vector>

namespace weft {

// Rows of `centered_unit` scaled so that each row is centered (mean 0) and
// has Euclidean norm 1; a row whose values are (near) constant becomes all
// zeros. For such rows, the Pearson correlation of rows i and j is the dot
// product of rows i and j.
Eigen::MatrixXd centered_unit_rows(const Eigen::MatrixXd& rows);

// Clusters the rows of `rows` (events x threads).
//
// The similarity of two events is the Pearson correlation of their rows;
// the linkage between two clusters is the mean correlation over all pairs
// of members (UPGMA). Clusters are merged, most similar pair first, while
// the linkage is >= `threshold`. Before that, every pair of events whose
// correlation is >= `bulk_threshold` is merged at once (transitively), as in
// LIME's "bulk clustering"; a bulk_threshold below `threshold` is raised to
// it, and a value above 1 disables bulk merging (exact UPGMA).
//
// Constant rows have correlation 0 with everything and stay singletons.
//
// Rows that are identical once centered and scaled are merged first (they
// correlate 1). Candidate pairs (correlation >= threshold) among the others
// come from the correlation matrix computed `block_rows` x `block_rows` at a
// time (screened in single precision, decided in double precision near the
// threshold), so memory stays bounded whatever the number of events; events
// without a candidate partner
// stay singletons, and UPGMA runs separately (with a cached proximity
// matrix) inside each connected component of the candidate pairs, which is
// exact: the average linkage of two clusters can only reach the threshold if
// some pair of their members does.
//
// Returns the clusters as lists of row indices, each sorted ascending, the
// clusters ordered by their smallest member. Every row is in exactly one
// cluster.
std::vector<std::vector<size_t>> cluster_events(const Eigen::MatrixXd& rows, double threshold,
                                                double bulk_threshold,
                                                Eigen::Index block_rows = 1024);

}  // namespace weft
