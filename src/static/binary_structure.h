// BinaryStructure: the functions, basic blocks and natural loops of one x86-64
// ELF file (executable, PIE or shared library), and the source lines of each
// loop. Functions come from the ELF symbol table and are analyzed on demand
// (disassembly, CFG, dominators, loops, DWARF lines); results are cached on
// disk per GNU build id so a binary is analyzed once.
//
// All addresses are ELF virtual addresses (ModuleAddress::module_offset).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace weft {

struct BasicBlock {
  uint64_t start = 0;
  uint64_t end = 0;  // exclusive
  uint32_t instructions = 0;
  uint64_t last_instruction = 0;       // address of the block's last instruction (its branch)
  std::vector<uint32_t> successors;    // indices into FunctionStructure::blocks, sorted
  std::vector<uint32_t> predecessors;  // indices into FunctionStructure::blocks, sorted
  // Ends in an indirect jump (jump table, indirect tail call): its successors
  // are unknown and not listed.
  bool ends_in_indirect_jump = false;

  bool operator==(const BasicBlock&) const = default;
};

struct Loop {
  uint32_t index = 0;            // position in FunctionStructure::loops
  int32_t parent = -1;           // index of the smallest enclosing loop, -1 at top level
  uint32_t depth = 1;            // 1 = outermost
  uint64_t header = 0;           // address of the header block
  std::vector<uint32_t> blocks;  // indices into FunctionStructure::blocks, sorted; header included
  std::vector<std::pair<uint64_t, uint64_t>> ranges;  // [lo, hi) of its blocks, merged and sorted
  // Source, from the outermost inlined frame (the physical function's own
  // lines) of each instruction: `file` is the file most instructions are in;
  // the lines are the min and max non-zero line in that file; header_line is
  // the first non-zero line in that file of the header block. Empty / 0
  // without debug info.
  std::string file;
  uint32_t first_line = 0;
  uint32_t last_line = 0;
  uint32_t header_line = 0;

  bool contains(uint64_t vaddr) const;
  bool operator==(const Loop&) const = default;
};

struct FunctionStructure {
  std::string name;          // demangled
  std::string linkage_name;  // as in the symbol table
  uint64_t start = 0;
  uint64_t end = 0;  // exclusive (start + symbol size)
  uint32_t instructions = 0;
  std::vector<BasicBlock> blocks;  // in address order; blocks[0] is the entry (at `start`)
  std::vector<Loop> loops;         // parents before children

  // The innermost loop whose blocks contain vaddr; nullptr outside every loop.
  const Loop* innermost_loop(uint64_t vaddr) const;
  // The block containing vaddr; nullptr outside every block (after an
  // undecodable byte, or outside the function).
  const BasicBlock* block_at(uint64_t vaddr) const;

  bool operator==(const FunctionStructure&) const = default;
};

struct BinaryStructureOptions {
  bool use_cache = true;
  // Empty: binary_structure_cache_dir().
  std::string cache_dir;
};

// weft_cache_dir() (common/cache_dir.h): $WEFT_CACHE_DIR if set, else
// $XDG_CACHE_HOME/weft, else $HOME/.cache/weft;
// empty when none of them is set.
std::string binary_structure_cache_dir();

// The functions a cache file holds for `build_id`, as BinaryStructure
// loads them: empty when the file is absent, corrupt, inconsistent (a block
// or loop out of range), of another format version or of another build id.
// Public for tests and fuzz/fuzz_binary_structure_cache.cpp.
std::map<uint64_t, FunctionStructure> read_binary_structure_cache(const std::string& path,
                                                                  const std::string& build_id);

// One ELF file. Not thread-safe: functions are analyzed lazily.
//
// Disassembly (LLVM MC, x86-64) is a linear sweep of the bytes covered by the
// function's symbol, which stops at the first undecodable byte. Calls fall
// through (calls to noreturn functions are not recognized); returns, `ud2`,
// jumps out of the function (tail calls) and indirect jumps end a block with
// no successor; jump tables are not resolved. Code that a compiler split into
// another symbol (gcc's `foo.cold`) is a function of its own.
//
// Cache: <cache dir>/binary-structure/<build-id>.json holds the functions
// analyzed so far (with a format version); it is read when the file is
// opened and rewritten (temporary file + rename, merged with what another
// process may have written) by save_cache() and the destructor. A corrupt
// file or one of another version is ignored and replaced. Files without a GNU
// build id are never cached. Cache errors never fail the analysis. Lines come
// from the debug info found at analysis time (including separate debug files
// found by LLVM's symbolizer); a debug file installed later is not seen for
// functions already cached.
class BinaryStructure {
 public:
  // nullptr when path is not a readable x86-64 ELF file.
  static std::unique_ptr<BinaryStructure> open(const std::string& path,
                                               const BinaryStructureOptions& options = {});
  ~BinaryStructure();
  BinaryStructure(const BinaryStructure&) = delete;
  BinaryStructure& operator=(const BinaryStructure&) = delete;

  // The function whose symbol covers vaddr (analyzed now unless cached);
  // nullptr when no function symbol covers it. The pointer stays valid for
  // the lifetime of this object.
  const FunctionStructure* function_at(uint64_t vaddr);

  // Every function whose linkage name, demangled name, or demangled name
  // without parameters (`ns::f` for `ns::f(int)`) is `name`, in address order.
  std::vector<const FunctionStructure*> functions_named(std::string_view name);

  // Writes the functions analyzed so far to the cache (no-op without a build
  // id, with caching off, or when nothing new was analyzed). False when the
  // file could not be written.
  bool save_cache();

  const std::string& path() const { return path_; }
  const std::string& build_id() const { return build_id_; }
  // The cache file; empty when this file is not cached.
  const std::string& cache_path() const { return cache_path_; }
  // The start of every function symbol, ascending (to analyze all of them
  // through function_at).
  std::vector<uint64_t> function_starts() const;
  // How many functions were analyzed (disassembled) by this object, and how
  // many the cache file held when it was opened.
  size_t functions_analyzed() const { return analyzed_; }
  size_t functions_from_cache() const { return from_cache_; }

 private:
  struct Backend;  // keeps LLVM's headers out of this one
  BinaryStructure(std::string path, std::unique_ptr<Backend> backend);
  void load_cache();

  std::string path_;
  std::string build_id_;
  std::string cache_path_;
  std::unique_ptr<Backend> backend_;
  std::map<uint64_t, FunctionStructure> functions_;  // analyzed or cached, by start
  bool dirty_ = false;
  size_t analyzed_ = 0;
  size_t from_cache_ = 0;
};

// Many modules at once, keyed by path (what the profile builder uses).
// Not thread-safe.
class BinaryStructureCache {
 public:
  explicit BinaryStructureCache(BinaryStructureOptions options = {});
  ~BinaryStructureCache();

  // nullptr when the module is not a readable x86-64 ELF file.
  BinaryStructure* module(const std::string& module_path);
  // nullptr when the module cannot be read or no function covers vaddr.
  const FunctionStructure* function_at(const std::string& module_path, uint64_t vaddr);
  const Loop* innermost_loop(const std::string& module_path, uint64_t vaddr);
  // Saves every module's cache now (also done on destruction).
  void save();

 private:
  BinaryStructureOptions options_;
  std::map<std::string, std::unique_ptr<BinaryStructure>> modules_;
};

}  // namespace weft
