// ModuleMap and Symbolizer on this test binary (PIE), a shared library it
// links, and hand-written maps text.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <climits>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "static/module_map.h"
#include "static/symbolizer.h"

namespace weft_map_test {

// clang-format off
__attribute__((noinline)) int probe(const volatile int* cell) { return *cell * 3 + 1; } constexpr uint32_t kProbeLine = __LINE__;
// clang-format on

}  // namespace weft_map_test

namespace weft {
namespace {

std::string read_self_maps() {
  std::ifstream in("/proc/self/maps");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string self_path() {
  char buffer[PATH_MAX];
  return realpath("/proc/self/exe", buffer) != nullptr ? buffer : "";
}

uint64_t probe_pc() { return reinterpret_cast<uint64_t>(&weft_map_test::probe); }

TEST(ModuleMap, ParsesEveryKindOfLine) {
  ModuleMap map = ModuleMap::parse(
      "00400000-00452000 r-xp 00000000 08:02 173521      /usr/bin/dbus-daemon\n"
      "7f0000000000-7f0000001000 r-xp 00002000 08:02 42 /tmp/dir with space/lib x.so (deleted)\n"
      "7ffd1000-7ffd3000 r-xp 00000000 00:00 0                  [vdso]\n"
      "7ffe0000-7ffe1000 rw-p 00000000 00:00 0 \n"
      "this line is garbage\n"
      "10-5 r-xp 00000000 00:00 0 /backwards\n");
  ASSERT_EQ(map.mappings().size(), 4u);
  EXPECT_EQ(map.mappings()[0].path, "/usr/bin/dbus-daemon");
  EXPECT_EQ(map.mappings()[0].start, 0x400000u);
  EXPECT_EQ(map.mappings()[0].end, 0x452000u);
  EXPECT_EQ(map.mappings()[0].permissions, "r-xp");
  EXPECT_EQ(map.mappings()[1].path, "[vdso]");
  EXPECT_EQ(map.mappings()[2].path, "");
  EXPECT_EQ(map.mappings()[3].path, "/tmp/dir with space/lib x.so");
  EXPECT_EQ(map.mappings()[3].file_offset, 0x2000u);

  EXPECT_FALSE(map.resolve(0x1000));      // below every mapping
  EXPECT_FALSE(map.resolve(0x452000));    // end is exclusive
  EXPECT_FALSE(map.resolve(0x7ffe0010));  // anonymous memory
  auto vdso = map.resolve(0x7ffd1010);
  ASSERT_TRUE(vdso);
  EXPECT_EQ(vdso->module, "[vdso]");
  EXPECT_FALSE(vdso->in_elf);
  // A file that cannot be read: the file offset is the best it can say.
  auto deleted = map.resolve(0x7f0000000010);
  ASSERT_TRUE(deleted);
  EXPECT_EQ(deleted->module_offset, 0x2010u);
  EXPECT_FALSE(deleted->in_elf);
}

TEST(ModuleMap, ResolvesThisPieBinary) {
  ModuleMap map = ModuleMap::parse(read_self_maps());
  auto address = map.resolve(probe_pc());
  ASSERT_TRUE(address);
  EXPECT_EQ(address->module, self_path());
  EXPECT_TRUE(address->in_elf);
  // A PIE is linked near 0: the ELF address is far below the runtime one.
  EXPECT_LT(address->module_offset, probe_pc());

  std::string build_id = map.build_id(address->module);
  EXPECT_FALSE(build_id.empty());
  EXPECT_EQ(build_id.find_first_not_of("0123456789abcdef"), std::string::npos);
}

TEST(ModuleMap, ElfAddressDoesNotDependOnLoadAddress) {
  // Map this binary's executable segment somewhere else, as a non-PIE or a
  // differently placed library would be, and resolve the same instruction.
  ModuleMap real = ModuleMap::parse(read_self_maps());
  auto address = real.resolve(probe_pc());
  ASSERT_TRUE(address);
  auto layout = read_elf_layout(address->module);
  ASSERT_TRUE(layout);
  const LoadSegment* text = nullptr;
  for (const LoadSegment& segment : layout->segments) {
    if (segment.executable) text = &segment;
  }
  ASSERT_NE(text, nullptr);

  const uint64_t fake_start = 0x10000000;
  const uint64_t page_offset = text->offset & ~uint64_t{0xfff};
  char line[512];
  std::snprintf(line, sizeof line, "%lx-%lx r-xp %08lx 08:02 1 %s\n",
                static_cast<unsigned long>(fake_start),
                static_cast<unsigned long>(fake_start + 0x10000000),
                static_cast<unsigned long>(page_offset), address->module.c_str());
  ModuleMap moved = ModuleMap::parse(line);
  uint64_t moved_pc =
      fake_start + (address->module_offset - text->vaddr) + text->offset - page_offset;
  auto moved_address = moved.resolve(moved_pc);
  ASSERT_TRUE(moved_address);
  EXPECT_TRUE(moved_address->in_elf);
  EXPECT_EQ(moved_address->module_offset, address->module_offset);

  Symbolizer symbolizer(std::move(moved));
  EXPECT_EQ(symbolizer.symbolize(moved_pc).line, weft_map_test::kProbeLine);
}

TEST(Symbolizer, FunctionFileAndLineOfThisBinary) {
  Symbolizer symbolizer(ModuleMap::parse(read_self_maps()));
  const CodeLocation& location = symbolizer.symbolize(probe_pc());
  EXPECT_EQ(location.pc, probe_pc());
  EXPECT_EQ(location.module, self_path());
  EXPECT_EQ(location.function, "weft_map_test::probe(int const volatile*)");
  EXPECT_TRUE(location.file.ends_with("/test_module_map.cpp")) << location.file;
  EXPECT_EQ(location.line, weft_map_test::kProbeLine);
  ASSERT_FALSE(location.frames.empty());
  EXPECT_EQ(location.frames.back().function, location.function);
  EXPECT_EQ(location.function_decl_line, weft_map_test::kProbeLine);
  // Cached: the same object comes back.
  EXPECT_EQ(&symbolizer.symbolize(probe_pc()), &location);
}

TEST(Symbolizer, SharedLibraryBySymbolTable) {
  Symbolizer symbolizer(ModuleMap::parse(read_self_maps()));
  const CodeLocation& location =
      symbolizer.symbolize(reinterpret_cast<uint64_t>(&sqlite3_libversion));
  EXPECT_NE(location.module.find("libsqlite3"), std::string::npos) << location.module;
  EXPECT_EQ(location.function, "sqlite3_libversion");
}

TEST(Symbolizer, UnknownAddresses) {
  Symbolizer symbolizer(ModuleMap::parse(read_self_maps()));
  const CodeLocation& nowhere = symbolizer.symbolize(8);
  EXPECT_FALSE(nowhere.known());
  EXPECT_EQ(nowhere.function, "??");
  EXPECT_EQ(nowhere.module, "");

  Symbolizer vdso(ModuleMap::parse("7ffd1000-7ffd3000 r-xp 00000000 00:00 0 [vdso]\n"));
  const CodeLocation& in_vdso = vdso.symbolize(0x7ffd1010);
  EXPECT_EQ(in_vdso.function, "??");
  EXPECT_EQ(in_vdso.module, "[vdso]");
}

}  // namespace
}  // namespace weft
