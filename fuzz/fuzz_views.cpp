#include "fuzz_views.h"

#include <functional>
#include <optional>
#include <vector>

#include "findings/comm_findings.h"
#include "findings/crd_findings.h"
#include "findings/diff_findings.h"
#include "findings/false_sharing_findings.h"
#include "findings/imbalance_findings.h"
#include "findings/report_findings.h"
#include "findings/trace_findings.h"
#include "fuzz_support.h"
#include "profile/profile.h"
#include "views/comm_view.h"
#include "views/crd_view.h"
#include "views/diff_view.h"
#include "views/falseshare_view.h"
#include "views/imbalance_view.h"
#include "views/report_view.h"
#include "views/trace_view.h"

namespace weft_fuzz {

using namespace weft;

namespace {

using View = std::function<void(const Profile&, const std::optional<std::string>& region)>;

// Every view in every format it has, each with and without --region where
// it takes one.
std::vector<View> every_view() {
  std::vector<View> views;
  for (OutputFormat format : {OutputFormat::Table, OutputFormat::Json}) {
    views.push_back([format](const Profile& profile, const std::optional<std::string>&) {
      render_report(find_report(profile, ReportOptions{}), format);
    });
    views.push_back([format](const Profile& profile, const std::optional<std::string>&) {
      render_diff(find_diff(profile, profile, DiffOptions{}), format);
    });
    views.push_back([format](const Profile& profile, const std::optional<std::string>&) {
      ImbalanceRenderOptions rendering;
      rendering.format = format;
      render_imbalance(find_imbalance(profile, ImbalanceOptions{}), rendering);
    });
    views.push_back([format](const Profile& profile, const std::optional<std::string>&) {
      FalseShareRenderOptions rendering;
      rendering.format = format;
      render_false_sharing(find_false_sharing(profile, FalseSharingOptions{}), rendering);
    });
    views.push_back([format](const Profile& profile, const std::optional<std::string>&) {
      TraceRenderOptions rendering;
      rendering.json = format == OutputFormat::Json;
      render_traces(find_traces(profile, TraceOptions{}), rendering);
    });
  }
  for (OutputFormat format : {OutputFormat::Table, OutputFormat::Csv, OutputFormat::Json})
    for (bool selected : {false, true}) {
      for (CommKind kind : {CommKind::Raw, CommKind::Rar, CommKind::Inval, CommKind::Crr})
        views.push_back([=](const Profile& profile, const std::optional<std::string>& region) {
          CommOptions options;
          options.kind = kind;
          if (selected) options.region = region;
          render_comm(find_comm(profile, options), format);
        });
      views.push_back([=](const Profile& profile, const std::optional<std::string>& region) {
        CrdOptions options;
        if (selected) options.region = region;
        render_crd(find_crd(profile, options), format);
      });
    }
  return views;
}

void run(const std::string& profile_path, const std::vector<View>& views) {
  expect_bounded([&] {
    const Profile profile = Profile::open(profile_path);
    // A region name the profile holds, for --region (the first one).
    std::optional<std::string> region;
    expect_bounded([&] {
      const std::vector<RegionInfo> regions = profile.regions();
      if (!regions.empty()) region = regions.front().name;
    });
    for (const View& view : views) expect_bounded([&] { view(profile, region); });
  });
}

}  // namespace

void run_every_view(const std::string& profile_path) { run(profile_path, every_view()); }

void run_view(const std::string& profile_path, unsigned choice) {
#ifdef WEFT_FUZZ_REPLAY
  (void)choice;
  run_every_view(profile_path);
#else
  static const std::vector<View> views = every_view();
  run(profile_path, {views[choice % views.size()]});
#endif
}

}  // namespace weft_fuzz
