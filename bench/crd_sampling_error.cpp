// weft_crd_sampling_error: how far a profile's CRD histograms are from a
// reference profile's, meant for sampled CRD (`weft record`) against exact
// (`weft record --exact`) on the same program and input
// (src/findings/crd_sampling_error.h; bench/README.md, "Sampled-vs-exact
// CRD error").
//
//   weft_crd_sampling_error [--brief] SAMPLED.db EXACT.db
//
// Prints the whole program's largest per-bin mass difference (percentage
// points) and median-bin difference, then every region's and the worst
// ones. --brief prints one tab-separated line instead:
//   program_pp program_median_bins region_pp region_median_bins region_events worst_region
// (the regions' worst values, each over all regions; region_events and
// worst_region are those of region_pp's region, its events in EXACT.db: a
// region of a few events can be far off by chance; "-" where there is none). Exit status 1 with a
// one-line cause on a bad profile.
#include "findings/crd_sampling_error.h"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "profile/profile.h"

namespace {

std::string median_text(const std::optional<int>& difference) {
  if (!difference) return "-";
  return (*difference > 0 ? "+" : "") + std::to_string(*difference);
}

void print_error(const char* what, const weft::CrdHistogramError& e) {
  std::printf("%-60s %12llu %12llu %8.2f %4u %6s\n", what,
              static_cast<unsigned long long>(e.events),
              static_cast<unsigned long long>(e.reference_events), e.max_bin_error_pp, e.worst_bin,
              median_text(e.median_bin_difference).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  bool brief = false;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--brief")
      brief = true;
    else
      paths.push_back(arg);
  }
  if (paths.size() != 2) {
    std::fprintf(stderr, "usage: weft_crd_sampling_error [--brief] SAMPLED.db EXACT.db\n");
    return 2;
  }
  try {
    const weft::Profile sampled = weft::Profile::open(paths[0]);
    const weft::Profile exact = weft::Profile::open(paths[1]);
    const weft::CrdSamplingError error = weft::crd_sampling_error(sampled, exact);
    if (brief) {
      std::string region_pp = "-", region_median = "-", region_events = "-", region_name = "-";
      if (error.worst_mass_region) {
        const weft::RegionCrdError& r = error.regions[*error.worst_mass_region];
        char text[32];
        std::snprintf(text, sizeof text, "%.2f", r.error.max_bin_error_pp);
        region_pp = text;
        region_events = std::to_string(r.error.reference_events);
        region_name = r.name;
      }
      if (error.worst_median_region)
        region_median =
            median_text(error.regions[*error.worst_median_region].error.median_bin_difference);
      std::printf("%.2f\t%s\t%s\t%s\t%s\t%s\n", error.program.max_bin_error_pp,
                  median_text(error.program.median_bin_difference).c_str(), region_pp.c_str(),
                  region_median.c_str(), region_events.c_str(), region_name.c_str());
      return 0;
    }
    std::printf(
        "# CRD of %s against %s: largest per-bin mass difference (percentage points)\n"
        "# and the difference of the median's bin (line visits; + = sampled higher)\n",
        paths[0].c_str(), paths[1].c_str());
    std::printf("%-60s %12s %12s %8s %4s %6s\n", "region", "events", "ref_events", "max_pp", "bin",
                "median");
    print_error("whole program", error.program);
    for (const weft::RegionCrdError& r : error.regions) print_error(r.name.c_str(), r.error);
    if (error.worst_mass_region)
      std::printf("worst region by mass: %s (%.2f pp)\n",
                  error.regions[*error.worst_mass_region].name.c_str(),
                  error.regions[*error.worst_mass_region].error.max_bin_error_pp);
    if (error.worst_median_region)
      std::printf("worst region by median: %s (%s bins)\n",
                  error.regions[*error.worst_median_region].name.c_str(),
                  median_text(error.regions[*error.worst_median_region].error.median_bin_difference)
                      .c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "weft_crd_sampling_error: %s\n", e.what());
    return 1;
  }
}
