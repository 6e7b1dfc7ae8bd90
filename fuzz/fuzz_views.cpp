#include "fuzz_views.h"

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

void run_every_view(const std::string& profile_path) {
  expect_bounded([&] {
    const Profile profile = Profile::open(profile_path);
    // A region name the profile holds, for --region (the first one).
    std::optional<std::string> region;
    expect_bounded([&] {
      const std::vector<RegionInfo> regions = profile.regions();
      if (!regions.empty()) region = regions.front().name;
    });
    for (OutputFormat format : {OutputFormat::Table, OutputFormat::Json})
      expect_bounded([&] { render_report(find_report(profile, ReportOptions{}), format); });
    for (CommKind kind : {CommKind::Raw, CommKind::Rar, CommKind::Inval, CommKind::Crr})
      for (const std::optional<std::string>& selection : {std::optional<std::string>(), region})
        for (OutputFormat format : {OutputFormat::Table, OutputFormat::Csv, OutputFormat::Json})
          expect_bounded([&] {
            CommOptions options;
            options.kind = kind;
            options.region = selection;
            render_comm(find_comm(profile, options), format);
          });
    for (const std::optional<std::string>& selection : {std::optional<std::string>(), region})
      for (OutputFormat format : {OutputFormat::Table, OutputFormat::Csv, OutputFormat::Json})
        expect_bounded([&] {
          CrdOptions options;
          options.region = selection;
          render_crd(find_crd(profile, options), format);
        });
    for (OutputFormat format : {OutputFormat::Table, OutputFormat::Json})
      expect_bounded([&] { render_diff(find_diff(profile, profile, DiffOptions{}), format); });
    for (OutputFormat format : {OutputFormat::Table, OutputFormat::Json}) {
      expect_bounded([&] {
        ImbalanceRenderOptions rendering;
        rendering.format = format;
        render_imbalance(find_imbalance(profile, ImbalanceOptions{}), rendering);
      });
      expect_bounded([&] {
        FalseShareRenderOptions rendering;
        rendering.format = format;
        render_false_sharing(find_false_sharing(profile, FalseSharingOptions{}), rendering);
      });
      expect_bounded([&] {
        TraceRenderOptions rendering;
        rendering.json = format == OutputFormat::Json;
        render_traces(find_traces(profile, TraceOptions{}), rendering);
      });
    }
  });
}

}  // namespace weft_fuzz
