// BinaryStructure on programs/nested_loops.c built with gcc and clang at -O0
// and -O2 (and as a shared library without build id), on this test binary,
// and its cache.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "static/binary_structure.h"
#include "static/symbolizer.h"

namespace weft_static_test {

// A C++ function with one loop, for demangled names.
__attribute__((noinline)) int sum(const volatile int* values, int count) {
  int total = 0;
  for (int i = 0; i < count; ++i) total += values[i];
  return total;
}

}  // namespace weft_static_test

// Hand-written machine code with every kind of block end, in this binary.
// (0x06 is not an x86-64 instruction: the walk stops there.)
asm(R"(
  .pushsection .text
  .p2align 4
  .type weft_asm_exit, @function
weft_asm_exit:
  ret
  .size weft_asm_exit, .-weft_asm_exit
  .globl weft_asm_shapes
  .type weft_asm_shapes, @function
weft_asm_shapes:
  test %edi, %edi
  je 1f
  ud2
1:
  cmp $3, %edi
  jne 2f
  jmp *%rax
2:
  dec %edi
  jnz 2b
  jmp weft_asm_exit
  .byte 0x06, 0x06
  ret
  .size weft_asm_shapes, .-weft_asm_shapes
  .popsection
)");

namespace weft {
namespace {

namespace fs = std::filesystem;

// Line numbers of the `LINE:name` markers of nested_loops.c.
const std::map<std::string, uint32_t>& marked_lines() {
  static const std::map<std::string, uint32_t> lines = [] {
    std::map<std::string, uint32_t> result;
    std::ifstream in(WEFT_TEST_NESTED_SOURCE);
    std::string text;
    for (uint32_t number = 1; std::getline(in, text); ++number) {
      size_t marker = text.find("// LINE:");
      if (marker != std::string::npos) result[text.substr(marker + 8)] = number;
    }
    return result;
  }();
  return lines;
}

uint32_t line_of(const std::string& marker) {
  auto found = marked_lines().find(marker);
  EXPECT_NE(found, marked_lines().end()) << marker;
  return found == marked_lines().end() ? 0 : found->second;
}

// A temporary WEFT_CACHE_DIR for the lifetime of the object.
class TemporaryCacheDir {
 public:
  TemporaryCacheDir() {
    std::string pattern = (fs::temp_directory_path() / "weft-static-test-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
    setenv("WEFT_CACHE_DIR", path_.c_str(), 1);
  }
  ~TemporaryCacheDir() {
    unsetenv("WEFT_CACHE_DIR");
    std::error_code error;
    fs::remove_all(path_, error);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

BinaryStructureOptions without_cache() {
  BinaryStructureOptions options;
  options.use_cache = false;
  return options;
}

BinaryStructureOptions in_dir(const std::string& cache_dir) {
  BinaryStructureOptions options;
  options.cache_dir = cache_dir;
  return options;
}

struct Program {
  const char* name;
  const char* path;
  bool optimized;
  bool has_build_id;
};

std::ostream& operator<<(std::ostream& out, const Program& program) { return out << program.name; }

class NestedLoops : public ::testing::TestWithParam<Program> {
 protected:
  void SetUp() override {
    if (std::string(GetParam().path).empty()) GTEST_SKIP() << "compiler not found";
  }
};

TEST_P(NestedLoops, FindsTheLoopsAndTheirLines) {
  const Program& program = GetParam();
  TemporaryCacheDir cache;  // keeps the user's cache out of it
  std::unique_ptr<BinaryStructure> binary = BinaryStructure::open(program.path);
  ASSERT_TRUE(binary);
  EXPECT_EQ(binary->build_id().empty(), !program.has_build_id);

  auto nested_functions = binary->functions_named("nested");
  ASSERT_EQ(nested_functions.size(), 1u);
  const FunctionStructure& nested = *nested_functions[0];
  EXPECT_EQ(nested.name, "nested");
  EXPECT_EQ(binary->function_at(nested.start + 1), &nested);
  ASSERT_FALSE(nested.blocks.empty());
  EXPECT_EQ(nested.blocks[0].start, nested.start);

  ASSERT_EQ(nested.loops.size(), 2u);
  const Loop& outer = nested.loops[0];
  const Loop& inner = nested.loops[1];
  EXPECT_EQ(outer.parent, -1);
  EXPECT_EQ(outer.depth, 1u);
  EXPECT_EQ(inner.parent, 0);
  EXPECT_EQ(inner.depth, 2u);
  EXPECT_EQ(inner.index, 1u);
  EXPECT_TRUE(outer.contains(inner.header));

  // Both loops are in the program's own file.
  EXPECT_EQ(fs::path(inner.file).filename(), "nested_loops.c");
  EXPECT_EQ(outer.file, inner.file);
  // The inner loop spans its `for` line (the increment and the test of j,
  // which every compiler keeps in the loop) to the store. Its first line is
  // the `for` line in all four builds.
  EXPECT_EQ(inner.first_line, line_of("inner_for"));
  EXPECT_EQ(inner.last_line, line_of("store"));
  EXPECT_EQ(outer.first_line, line_of("outer_for"));
  EXPECT_EQ(outer.last_line, line_of("outer_last"));
  // The header is where the loop is entered. At -O0 both compilers test the
  // condition in the header (the `for` line). At -O2 both rotate the loop:
  // a guard before the loop tests `j < columns` once, the header is the
  // body (the store) and the test moves to the latch at the bottom.
  EXPECT_EQ(inner.header_line, program.optimized ? line_of("store") : line_of("inner_for"));

  // Every instruction the line table puts on the store line is in the inner
  // loop, except loop-invariant setup that -O2 hoists into the inner loop's
  // preheader (gcc keeps the store's line on it); the store itself is inside.
  Symbolizer symbolizer{ModuleMap{}};
  size_t in_inner = 0;
  for (uint64_t address = nested.start; address < nested.end; ++address) {
    if (symbolizer.symbolize_module_offset(program.path, address).line != line_of("store")) {
      continue;
    }
    const Loop* loop = nested.innermost_loop(address);
    if (loop == &inner) {
      ++in_inner;
      EXPECT_TRUE(inner.contains(address));
      continue;
    }
    ASSERT_TRUE(program.optimized) << std::hex << address;
    EXPECT_EQ(loop, &outer) << std::hex << address;
    const BasicBlock* block = nested.block_at(address);
    ASSERT_NE(block, nullptr);
    const BasicBlock* header = nested.block_at(inner.header);
    EXPECT_TRUE(std::find(header->predecessors.begin(), header->predecessors.end(),
                          block - nested.blocks.data()) != header->predecessors.end())
        << std::hex << address;
  }
  EXPECT_GT(in_inner, 0u);

  // Outside both loops: the entry.
  EXPECT_EQ(nested.innermost_loop(nested.start), nullptr);
  EXPECT_EQ(nested.innermost_loop(inner.header), &inner);

  const FunctionStructure* single = binary->functions_named("single").at(0);
  ASSERT_EQ(single->loops.size(), 1u);
  EXPECT_EQ(single->loops[0].first_line, line_of("single_for"));
  EXPECT_EQ(single->loops[0].last_line, line_of("single_store"));

  const FunctionStructure* straight = binary->functions_named("straight").at(0);
  EXPECT_TRUE(straight->loops.empty());
  EXPECT_GT(straight->instructions, 0u);
  EXPECT_EQ(straight->innermost_loop(straight->start), nullptr);

  EXPECT_EQ(binary->function_at(0), nullptr);
  EXPECT_TRUE(binary->functions_named("no_such_function").empty());

  // Written to the cache if and only if the binary has a build id.
  EXPECT_TRUE(binary->save_cache());
  if (program.has_build_id) {
    EXPECT_EQ(binary->cache_path(),
              cache.path() + "/binary-structure/" + binary->build_id() + ".json");
    EXPECT_TRUE(fs::exists(binary->cache_path()));
  } else {
    EXPECT_TRUE(binary->cache_path().empty());
    EXPECT_FALSE(fs::exists(cache.path() + "/binary-structure"));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Builds, NestedLoops,
    ::testing::Values(Program{"gcc_O0", WEFT_TEST_NESTED_GCC_O0, false, true},
                      Program{"gcc_O2", WEFT_TEST_NESTED_GCC_O2, true, true},
                      Program{"clang_O0", WEFT_TEST_NESTED_CLANG_O0, false, true},
                      Program{"clang_O2", WEFT_TEST_NESTED_CLANG_O2, true, true},
                      Program{"gcc_O2_shared_no_build_id", WEFT_TEST_LIBNESTED_NO_BUILD_ID_SO, true,
                              false}),
    [](const ::testing::TestParamInfo<Program>& info) { return std::string(info.param.name); });

std::string self_path() {
  char buffer[PATH_MAX];
  return realpath("/proc/self/exe", buffer) != nullptr ? buffer : "";
}

TEST(BinaryStructure, DemangledCppFunction) {
  TemporaryCacheDir cache;
  auto binary = BinaryStructure::open(self_path());
  ASSERT_TRUE(binary);
  uint64_t pc = reinterpret_cast<uint64_t>(&weft_static_test::sum);
  EXPECT_EQ(weft_static_test::sum(nullptr, 0), 0);
  auto functions = binary->functions_named("weft_static_test::sum");
  ASSERT_EQ(functions.size(), 1u);
  const FunctionStructure& sum = *functions[0];
  EXPECT_EQ(sum.name, "weft_static_test::sum(int const volatile*, int)");
  EXPECT_EQ(sum.linkage_name, "_ZN16weft_static_test3sumEPVKii");
  EXPECT_EQ(binary->functions_named(sum.name), functions);
  EXPECT_EQ(binary->functions_named(sum.linkage_name), functions);
  EXPECT_GE(sum.loops.size(), 1u);
  // This is a PIE: the function's ELF address is its runtime address minus
  // the load bias, which is page aligned.
  EXPECT_EQ((pc - sum.start) % 4096, 0u);
}

TEST(BinaryStructure, EveryKindOfBlockEnd) {
  TemporaryCacheDir cache;
  auto binary = BinaryStructure::open(self_path());
  ASSERT_TRUE(binary);
  auto functions = binary->functions_named("weft_asm_shapes");
  ASSERT_EQ(functions.size(), 1u);
  const FunctionStructure& shapes = *functions[0];
  EXPECT_EQ(shapes.instructions, 9u);  // the bytes from 0x06 on are not decoded
  ASSERT_EQ(shapes.blocks.size(), 6u);
  using Nodes = std::vector<uint32_t>;
  EXPECT_EQ(shapes.blocks[0].successors, (Nodes{1, 2}));  // je
  EXPECT_EQ(shapes.blocks[1].successors, Nodes{});        // ud2
  EXPECT_EQ(shapes.blocks[1].instructions, 1u);
  EXPECT_EQ(shapes.blocks[2].successors, (Nodes{3, 4}));  // jne
  EXPECT_EQ(shapes.blocks[3].successors, Nodes{});        // jmp *%rax
  EXPECT_TRUE(shapes.blocks[3].ends_in_indirect_jump);
  EXPECT_EQ(shapes.blocks[4].successors, (Nodes{4, 5}));  // dec; jnz to itself
  EXPECT_EQ(shapes.blocks[4].predecessors, (Nodes{2, 4}));
  EXPECT_EQ(shapes.blocks[5].successors, Nodes{});  // jmp to another function
  EXPECT_FALSE(shapes.blocks[5].ends_in_indirect_jump);
  EXPECT_LT(shapes.blocks[5].end, shapes.end);
  EXPECT_EQ(shapes.block_at(shapes.blocks[5].end), nullptr);
  ASSERT_EQ(shapes.loops.size(), 1u);
  EXPECT_EQ(shapes.loops[0].header, shapes.blocks[4].start);
  EXPECT_EQ(shapes.loops[0].blocks, Nodes{4});
  EXPECT_EQ(
      shapes.loops[0].ranges,
      (std::vector<std::pair<uint64_t, uint64_t>>{{shapes.blocks[4].start, shapes.blocks[4].end}}));
}

TEST(BinaryStructure, RejectsWhatIsNotX86ElfCode) {
  EXPECT_EQ(BinaryStructure::open("/nonexistent/file"), nullptr);
  EXPECT_EQ(BinaryStructure::open(WEFT_TEST_NESTED_SOURCE), nullptr);
}

class BinaryStructureCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    program_ = WEFT_TEST_NESTED_GCC_O2;
    if (program_.empty()) GTEST_SKIP() << "gcc not found";
  }

  // Analyzes (or reads) the three functions of the program.
  static std::vector<FunctionStructure> analyze_all(BinaryStructure& binary) {
    std::vector<FunctionStructure> functions;
    for (const char* name : {"nested", "single", "straight"}) {
      auto found = binary.functions_named(name);
      EXPECT_EQ(found.size(), 1u) << name;
      if (!found.empty()) functions.push_back(*found[0]);
    }
    return functions;
  }

  std::string program_;
};

TEST_F(BinaryStructureCacheTest, SecondOpenReadsTheCache) {
  TemporaryCacheDir cache;
  std::vector<FunctionStructure> first;
  std::string cache_path;
  {
    auto binary = BinaryStructure::open(program_);
    ASSERT_TRUE(binary);
    EXPECT_EQ(binary->functions_from_cache(), 0u);
    first = analyze_all(*binary);
    EXPECT_EQ(binary->functions_analyzed(), 3u);
    cache_path = binary->cache_path();
  }  // saved by the destructor
  ASSERT_TRUE(fs::exists(cache_path));
  EXPECT_EQ(fs::path(cache_path).parent_path(), fs::path(cache.path()) / "binary-structure");

  auto again = BinaryStructure::open(program_);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->functions_from_cache(), 3u);
  std::vector<FunctionStructure> second = analyze_all(*again);
  EXPECT_EQ(again->functions_analyzed(), 0u);
  EXPECT_EQ(second, first);
  ASSERT_EQ(second.size(), 3u);
  EXPECT_EQ(second[0].loops.size(), 2u);
  EXPECT_EQ(second[0].loops[1].first_line, line_of("inner_for"));
  // Derived fields are rebuilt on load.
  EXPECT_EQ(second[0].blocks[1].predecessors, first[0].blocks[1].predecessors);
  EXPECT_EQ(second[0].loops[1].ranges, first[0].loops[1].ranges);
}

TEST_F(BinaryStructureCacheTest, CorruptOrOtherVersionFilesAreIgnoredAndRewritten) {
  TemporaryCacheDir cache;
  std::string cache_path;
  std::vector<FunctionStructure> reference;
  {
    auto binary = BinaryStructure::open(program_, without_cache());
    ASSERT_TRUE(binary);
    EXPECT_TRUE(binary->cache_path().empty());
    reference = analyze_all(*binary);
    cache_path = cache.path() + "/binary-structure/" + binary->build_id() + ".json";
  }
  EXPECT_FALSE(fs::exists(cache_path));  // caching was off
  fs::create_directories(fs::path(cache_path).parent_path());

  for (const char* content :
       {"{\"format\": 1, \"build_id\": ", "not json at all", "{\"format\": 999, \"functions\": []}",
        "{\"format\": 1, \"build_id\": \"00\", \"functions\": []}",
        "{\"format\": 1, \"functions\": [{\"name\": 3}]}"}) {
    SCOPED_TRACE(content);
    std::ofstream(cache_path) << content;
    {
      auto binary = BinaryStructure::open(program_);
      ASSERT_TRUE(binary);
      EXPECT_EQ(binary->functions_from_cache(), 0u);
      EXPECT_EQ(analyze_all(*binary), reference);
      EXPECT_EQ(binary->functions_analyzed(), 3u);
    }
    auto reread = BinaryStructure::open(program_);
    EXPECT_EQ(reread->functions_from_cache(), 3u);
  }

  // A cached successor outside the function makes the whole file corrupt.
  nlohmann::json document;
  std::ifstream(cache_path) >> document;
  ASSERT_FALSE(document.at("functions").empty());
  document["functions"][0]["blocks"][0][3] = nlohmann::json::array({999});
  std::ofstream(cache_path) << document.dump();
  auto binary = BinaryStructure::open(program_);
  EXPECT_EQ(binary->functions_from_cache(), 0u);
}

TEST_F(BinaryStructureCacheTest, ConcurrentWritersMergeTheirFunctions) {
  TemporaryCacheDir cache;
  auto first = BinaryStructure::open(program_);
  auto second = BinaryStructure::open(program_);
  ASSERT_TRUE(first && second);
  first->functions_named("nested");
  second->functions_named("single");
  EXPECT_TRUE(first->save_cache());
  EXPECT_TRUE(second->save_cache());
  auto third = BinaryStructure::open(program_);
  EXPECT_EQ(third->functions_from_cache(), 2u);
}

TEST_F(BinaryStructureCacheTest, UnwritableCacheDirNeverFailsTheAnalysis) {
  // A cache dir below a regular file cannot be created.
  TemporaryCacheDir cache;
  std::string blocker = cache.path() + "/file";
  std::ofstream(blocker) << "x";
  auto binary = BinaryStructure::open(program_, in_dir(blocker + "/cache"));
  ASSERT_TRUE(binary);
  EXPECT_FALSE(binary->cache_path().empty());
  EXPECT_EQ(analyze_all(*binary).size(), 3u);
  EXPECT_EQ(binary->functions_named("nested")[0]->loops.size(), 2u);
  EXPECT_FALSE(binary->save_cache());
}

TEST(BinaryStructureCacheDir, FollowsTheEnvironment) {
  const char* saved_weft = std::getenv("WEFT_CACHE_DIR");
  const char* saved_xdg = std::getenv("XDG_CACHE_HOME");
  const char* saved_home = std::getenv("HOME");
  std::string weft = saved_weft ? saved_weft : "", xdg = saved_xdg ? saved_xdg : "",
              home = saved_home ? saved_home : "";
  setenv("WEFT_CACHE_DIR", "/a", 1);
  setenv("XDG_CACHE_HOME", "/b", 1);
  setenv("HOME", "/c", 1);
  EXPECT_EQ(binary_structure_cache_dir(), "/a");
  unsetenv("WEFT_CACHE_DIR");
  EXPECT_EQ(binary_structure_cache_dir(), "/b/weft");
  unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(binary_structure_cache_dir(), "/c/.cache/weft");
  unsetenv("HOME");
  EXPECT_EQ(binary_structure_cache_dir(), "");
  auto restore = [](const char* name, const char* saved, const std::string& value) {
    if (saved) setenv(name, value.c_str(), 1);
  };
  restore("WEFT_CACHE_DIR", saved_weft, weft);
  restore("XDG_CACHE_HOME", saved_xdg, xdg);
  restore("HOME", saved_home, home);
}

TEST(BinaryStructureCache, ManyModulesByPath) {
  if (std::string(WEFT_TEST_NESTED_GCC_O2).empty()) GTEST_SKIP() << "gcc not found";
  TemporaryCacheDir cache;
  BinaryStructureCache modules(without_cache());
  EXPECT_EQ(modules.module("/nonexistent"), nullptr);
  EXPECT_EQ(modules.function_at("/nonexistent", 0x1000), nullptr);
  BinaryStructure* binary = modules.module(WEFT_TEST_NESTED_GCC_O2);
  ASSERT_NE(binary, nullptr);
  EXPECT_EQ(modules.module(WEFT_TEST_NESTED_GCC_O2), binary);
  const FunctionStructure* nested = binary->functions_named("nested").at(0);
  const Loop& inner = nested->loops.at(1);
  EXPECT_EQ(modules.function_at(WEFT_TEST_NESTED_GCC_O2, inner.header), nested);
  EXPECT_EQ(modules.innermost_loop(WEFT_TEST_NESTED_GCC_O2, inner.header), &inner);
  modules.save();
  EXPECT_FALSE(fs::exists(cache.path() + "/binary-structure"));
}

}  // namespace
}  // namespace weft
