#include <gtest/gtest.h>

#include "profile/region_naming.h"
#include "profile/run_regions.h"
#include "static/binary_structure.h"

namespace weft {
namespace {

TEST(RegionNaming, RecognisesOutlinedOpenMpBodies) {
  EXPECT_TRUE(is_omp_outlined("foo._omp_fn.0"));
  EXPECT_TRUE(is_omp_outlined("foo(int) (._omp_fn.12)"));
  EXPECT_TRUE(is_omp_outlined(".omp_outlined."));
  EXPECT_TRUE(is_omp_outlined(".omp_outlined._debug__"));
  EXPECT_TRUE(is_omp_outlined("foo.omp_outlined"));
  EXPECT_TRUE(is_omp_outlined("__omp_outlined__3"));
  EXPECT_FALSE(is_omp_outlined("main"));
  EXPECT_FALSE(is_omp_outlined("omp_fn_user(int)"));

  EXPECT_TRUE(is_anonymous_omp_outlined(".omp_outlined."));
  EXPECT_FALSE(is_anonymous_omp_outlined("foo._omp_fn.0"));
}

TEST(RegionNaming, ParentOfOutlinedBody) {
  EXPECT_EQ(omp_parent_function("foo._omp_fn.0"), "foo");
  EXPECT_EQ(omp_parent_function("ns::foo(int) (._omp_fn.3)"), "ns::foo(int)");
  EXPECT_EQ(omp_parent_function("foo(int) (.omp_outlined)"), "foo(int)");
  EXPECT_EQ(omp_parent_function("foo.omp_outlined"), "foo");
  EXPECT_EQ(omp_parent_function(".omp_outlined."), "");
  EXPECT_EQ(omp_parent_function("main"), "");
}

TEST(RegionNaming, BaseNameDropsParametersAndReturnType) {
  EXPECT_EQ(function_base_name("main"), "main");
  EXPECT_EQ(function_base_name("foo(int)"), "foo");
  EXPECT_EQ(function_base_name("ns::Grid<int>::step(int, double) const"), "ns::Grid<int>::step");
  EXPECT_EQ(function_base_name("void ns::apply<void (*)(int)>(void (*)(int))"),
            "ns::apply<void (*)(int)>");
  EXPECT_EQ(function_base_name("(anonymous namespace)::worker(void*)"),
            "(anonymous namespace)::worker");
  EXPECT_EQ(function_base_name("foo(int) (._omp_fn.0)"), "foo");
  EXPECT_EQ(function_base_name("foo(int) [clone .constprop.0]"), "foo");
  EXPECT_EQ(function_base_name("operator new(unsigned long)"), "operator new");
  EXPECT_EQ(function_base_name("??"), "??");
}

TEST(RegionNaming, Basename) {
  EXPECT_EQ(path_basename("/a/b/c.cpp"), "c.cpp");
  EXPECT_EQ(path_basename("c.cpp"), "c.cpp");
}

}  // namespace
}  // namespace weft

namespace weft {
namespace {

TEST(RegionNaming, CompilerClonesKeepTheirFunctionName) {
  EXPECT_EQ(without_clone_suffix("moments.constprop.0"), "moments");
  EXPECT_EQ(without_clone_suffix("solve.isra.12"), "solve");
  EXPECT_EQ(without_clone_suffix("solve.part.0.cold"), "solve");
  EXPECT_EQ(without_clone_suffix("ns::f(int) [clone .constprop.0]"), "ns::f(int)");
  EXPECT_EQ(without_clone_suffix("main._omp_fn.0"), "main._omp_fn.0");
  EXPECT_EQ(without_clone_suffix("version.2"), "version.2");
  EXPECT_EQ(without_clone_suffix(".constprop.0"), ".constprop.0");
  EXPECT_EQ(without_clone_suffix("plain"), "plain");
}

// Loops starting on one source line (an outer loop and a helper's loop
// inlined at its call, whose lines are the call's) are numbered by their
// place in the function, outer first, whichever one's accesses a recording
// names first: before, the first named kept the plain name, and two
// recordings of one binary swapped them.
TEST(RegionNaming, LoopsOnOneLineAreNumberedOuterFirstInAnyOrder) {
  FunctionStructure f;
  f.name = "filter";
  Loop outer;
  outer.index = 0;
  outer.depth = 1;
  outer.header = 0x1200;
  outer.file = "/src/pf.c";
  outer.first_line = 101;
  outer.last_line = 110;
  Loop inner = outer;  // the bisection, inlined: below the outer's header
  inner.index = 1;
  inner.parent = 0;
  inner.depth = 2;
  inner.header = 0x1100;
  Loop later = outer;  // a second top-level loop on the line
  later.index = 2;
  later.header = 0x1400;
  f.loops = {outer, inner, later};
  for (const std::vector<size_t>& order :
       std::vector<std::vector<size_t>>{{0, 1, 2}, {1, 2, 0}, {2, 1, 0}}) {
    RegionBuilder regions;
    std::vector<std::string> names(3);
    for (size_t i : order) names[i] = regions.add_loop("filter", f, f.loops[i]);
    EXPECT_EQ(names[0], "filter:loop@pf.c:101");
    EXPECT_EQ(names[2], "filter:loop@pf.c:101#2");
    EXPECT_EQ(names[1], "filter:loop@pf.c:101#3");
    EXPECT_EQ(regions.drafts().at(names[1]).parent_name, names[0]);
  }
}

}  // namespace
}  // namespace weft
