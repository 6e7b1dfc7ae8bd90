// ModuleMap: which file a runtime address belongs to, and where that address
// lies in the file's own (link-time) virtual address space, the address that
// symbolizers and disassemblers take. Built from the text of /proc/PID/maps.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace weft {

// One line of /proc/PID/maps.
struct MemoryMapping {
  uint64_t start = 0;
  uint64_t end = 0;  // exclusive
  uint64_t file_offset = 0;
  std::string permissions;  // "r-xp"
  std::string path;         // file path, pseudo name ("[vdso]"), or empty for anonymous memory
};

// A PT_LOAD program header: file bytes [offset, offset + file_size) are
// mapped at link-time address vaddr.
struct LoadSegment {
  uint64_t offset = 0;
  uint64_t file_size = 0;
  uint64_t vaddr = 0;
  bool executable = false;
};

// What weft needs from an ELF file's headers.
struct ElfLayout {
  std::vector<LoadSegment> segments;
  std::string build_id;  // GNU build id in lowercase hex, empty when absent
};

// Reads the program headers and build id of an ELF file (any class and byte
// order). nullopt when the file cannot be read or is not ELF.
std::optional<ElfLayout> read_elf_layout(const std::string& path);

// Where a runtime address lies in its module.
struct ModuleAddress {
  std::string module;          // path of the mapped file, or a pseudo name such as "[vdso]"
  uint64_t module_offset = 0;  // ELF virtual address when in_elf, else offset in the mapping/file
  bool in_elf = false;         // module_offset is an address in the ELF's own address space
};

// Not thread-safe: ELF layouts are read lazily and cached.
class ModuleMap {
 public:
  ModuleMap() = default;

  // Parses /proc/PID/maps text; malformed lines are skipped.
  static ModuleMap parse(std::string_view maps_text);

  // nullopt for addresses outside every mapping and for anonymous memory.
  std::optional<ModuleAddress> resolve(uint64_t pc) const;
  // Like resolve, for a data address: also inside a module's .bss, which
  // lies in the anonymous mapping right after the module's last file
  // mapping. Only ELF addresses (in_elf) are returned.
  std::optional<ModuleAddress> resolve_data(uint64_t address) const;

  // GNU build id (hex) of a mapped file, empty when absent or unreadable.
  std::string build_id(const std::string& module) const;

  const std::vector<MemoryMapping>& mappings() const { return mappings_; }

 private:
  // nullptr when the file is not a readable ELF file.
  const ElfLayout* layout(const std::string& path) const;

  std::vector<MemoryMapping> mappings_;  // sorted by start
  mutable std::map<std::string, std::optional<ElfLayout>> layouts_;
};

}  // namespace weft
