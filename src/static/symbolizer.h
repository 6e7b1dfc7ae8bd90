// Symbolizer: runtime pc -> function, source line and inlining chain, using
// LLVM's symbolizer on the DWARF and symbol tables of the mapped modules.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "static/module_map.h"

namespace weft {

struct InlineFrame {
  std::string function;  // demangled; "??" when unknown
  std::string file;      // empty when unknown
  uint32_t line = 0;
  uint32_t column = 0;
};

inline constexpr const char* kUnknownFunction = "??";

// clang outlines a parallel region as `.omp_outlined.`, which calls an
// inlined `.omp_outlined._debug__` copy holding the user's code: a frame of
// that copy is part of the body itself, not an inlined callee. Used wherever
// "the physical function's own line" is wanted.
inline bool is_outlined_body_copy(std::string_view function) {
  return function.find("omp_outlined._debug__") != std::string_view::npos;
}

struct CodeLocation {
  uint64_t pc = 0;
  std::string module;          // empty when the pc is in no file-backed mapping
  uint64_t module_offset = 0;  // see ModuleAddress::module_offset
  // The physical (outermost, non-inlined) function containing the pc,
  // demangled; kUnknownFunction when unknown.
  std::string function;
  // Source position of the instruction itself (the innermost inlined frame).
  std::string file;
  uint32_t line = 0;
  uint32_t column = 0;
  std::vector<InlineFrame> frames;  // innermost first; the last one is in `function`
  uint32_t function_decl_line = 0;  // DWARF decl line of `function`, 0 when unknown

  bool known() const { return function != kUnknownFunction; }
};

// A global or static variable, from the symbol table.
struct DataSymbol {
  std::string name;      // demangled
  uint64_t address = 0;  // runtime address of its first byte
  uint64_t size = 0;
};

// Not thread-safe. Results are cached per pc.
class Symbolizer {
 public:
  explicit Symbolizer(ModuleMap modules);
  ~Symbolizer();
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;

  // The reference stays valid for the symbolizer's lifetime.
  const CodeLocation& symbolize(uint64_t pc);

  // The variable of a module's data or bss containing `address`, if any.
  std::optional<DataSymbol> symbolize_data(uint64_t address);

  // For a file rather than a process: module_offset is an ELF virtual address.
  CodeLocation symbolize_module_offset(const std::string& module, uint64_t module_offset);

  const ModuleMap& modules() const { return modules_; }

 private:
  struct Backend;  // keeps LLVM's headers out of this one
  ModuleMap modules_;
  std::unique_ptr<Backend> backend_;
  std::unordered_map<uint64_t, CodeLocation> cache_;
};

}  // namespace weft
