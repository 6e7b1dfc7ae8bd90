#include "static/module_map.h"

#include <llvm/Object/Binary.h>
#include <llvm/Object/ELFObjectFile.h>
#include <llvm/Support/Error.h>

#include <algorithm>
#include <charconv>

namespace weft {
namespace {

template <class ELFT>
ElfLayout layout_of(const llvm::object::ELFFile<ELFT>& elf) {
  ElfLayout layout;
  auto headers = elf.program_headers();
  if (!headers) {
    llvm::consumeError(headers.takeError());
    return layout;
  }
  for (const auto& header : *headers) {
    if (header.p_type == llvm::ELF::PT_LOAD) {
      layout.segments.push_back({header.p_offset, header.p_filesz, header.p_vaddr,
                                 (header.p_flags & llvm::ELF::PF_X) != 0});
    } else if (header.p_type == llvm::ELF::PT_NOTE && layout.build_id.empty()) {
      llvm::Error error = llvm::Error::success();
      for (const auto& note : elf.notes(header, error)) {
        if (note.getType() != llvm::ELF::NT_GNU_BUILD_ID || note.getName() != "GNU") continue;
        static constexpr char kHex[] = "0123456789abcdef";
        for (uint8_t byte : note.getDesc(header.p_align)) {
          layout.build_id += kHex[byte >> 4];
          layout.build_id += kHex[byte & 0xf];
        }
        break;
      }
      llvm::consumeError(std::move(error));
    }
  }
  return layout;
}

bool parse_hex(std::string_view text, uint64_t& value) {
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, 16);
  return error == std::errc() && end == text.data() + text.size();
}

// Splits off the next whitespace-delimited field of `rest`.
std::string_view next_field(std::string_view& rest) {
  size_t begin = rest.find_first_not_of(" \t");
  if (begin == std::string_view::npos) {
    rest = {};
    return {};
  }
  size_t end = rest.find_first_of(" \t", begin);
  if (end == std::string_view::npos) end = rest.size();
  std::string_view field = rest.substr(begin, end - begin);
  rest.remove_prefix(end);
  return field;
}

std::optional<MemoryMapping> parse_line(std::string_view line) {
  std::string_view rest = line;
  std::string_view range = next_field(rest);
  std::string_view permissions = next_field(rest);
  std::string_view offset = next_field(rest);
  std::string_view device = next_field(rest);
  std::string_view inode = next_field(rest);
  if (inode.empty()) return std::nullopt;
  (void)device;

  MemoryMapping mapping;
  size_t dash = range.find('-');
  if (dash == std::string_view::npos || !parse_hex(range.substr(0, dash), mapping.start) ||
      !parse_hex(range.substr(dash + 1), mapping.end) || !parse_hex(offset, mapping.file_offset) ||
      mapping.end <= mapping.start) {
    return std::nullopt;
  }
  mapping.permissions = std::string(permissions);

  // The path is the rest of the line and may contain spaces.
  size_t path_begin = rest.find_first_not_of(" \t");
  if (path_begin != std::string_view::npos) {
    std::string_view path = rest.substr(path_begin);
    while (!path.empty() && (path.back() == '\r' || path.back() == ' ')) path.remove_suffix(1);
    constexpr std::string_view kDeleted = " (deleted)";
    if (path.size() > kDeleted.size() && path.ends_with(kDeleted)) {
      path.remove_suffix(kDeleted.size());
    }
    mapping.path = std::string(path);
  }
  return mapping;
}

}  // namespace

std::optional<ElfLayout> read_elf_layout(const std::string& path) {
  auto binary = llvm::object::createBinary(path);
  if (!binary) {
    llvm::consumeError(binary.takeError());
    return std::nullopt;
  }
  const llvm::object::Binary* object = binary->getBinary();
  if (const auto* elf = llvm::dyn_cast<llvm::object::ELF64LEObjectFile>(object)) {
    return layout_of(elf->getELFFile());
  }
  if (const auto* elf = llvm::dyn_cast<llvm::object::ELF64BEObjectFile>(object)) {
    return layout_of(elf->getELFFile());
  }
  if (const auto* elf = llvm::dyn_cast<llvm::object::ELF32LEObjectFile>(object)) {
    return layout_of(elf->getELFFile());
  }
  if (const auto* elf = llvm::dyn_cast<llvm::object::ELF32BEObjectFile>(object)) {
    return layout_of(elf->getELFFile());
  }
  return std::nullopt;
}

ModuleMap ModuleMap::parse(std::string_view maps_text) {
  ModuleMap map;
  while (!maps_text.empty()) {
    size_t newline = maps_text.find('\n');
    std::string_view line = maps_text.substr(0, newline);
    maps_text.remove_prefix(newline == std::string_view::npos ? maps_text.size() : newline + 1);
    if (auto mapping = parse_line(line)) map.mappings_.push_back(std::move(*mapping));
  }
  std::sort(map.mappings_.begin(), map.mappings_.end(),
            [](const MemoryMapping& a, const MemoryMapping& b) { return a.start < b.start; });
  return map;
}

const ElfLayout* ModuleMap::layout(const std::string& path) const {
  auto it = layouts_.find(path);
  if (it == layouts_.end()) it = layouts_.emplace(path, read_elf_layout(path)).first;
  return it->second ? &*it->second : nullptr;
}

std::optional<ModuleAddress> ModuleMap::resolve_data(uint64_t address) const {
  if (std::optional<ModuleAddress> direct = resolve(address); direct && direct->in_elf)
    return direct;
  // The nearest file mapping below: its load bias places the whole module,
  // .bss included (the ELF's memory size extends past its file size).
  auto after =
      std::upper_bound(mappings_.begin(), mappings_.end(), address,
                       [](uint64_t value, const MemoryMapping& m) { return value < m.start; });
  for (auto it = after; it != mappings_.begin();) {
    const MemoryMapping& mapping = *--it;
    if (mapping.path.empty()) continue;
    if (mapping.path.front() != '/') return std::nullopt;
    const ElfLayout* elf = layout(mapping.path);
    if (elf == nullptr) return std::nullopt;
    for (const LoadSegment& segment : elf->segments) {
      if (mapping.file_offset < segment.offset ||
          mapping.file_offset >= segment.offset + segment.file_size)
        continue;
      const uint64_t bias = mapping.start - (mapping.file_offset - segment.offset + segment.vaddr);
      ModuleAddress result;
      result.module = mapping.path;
      result.module_offset = address - bias;
      result.in_elf = true;
      return result;
    }
    return std::nullopt;
  }
  return std::nullopt;
}

std::optional<ModuleAddress> ModuleMap::resolve(uint64_t pc) const {
  auto after =
      std::upper_bound(mappings_.begin(), mappings_.end(), pc,
                       [](uint64_t value, const MemoryMapping& m) { return value < m.start; });
  if (after == mappings_.begin()) return std::nullopt;
  const MemoryMapping& mapping = *std::prev(after);
  if (pc >= mapping.end || mapping.path.empty()) return std::nullopt;

  ModuleAddress address;
  address.module = mapping.path;
  if (mapping.path.front() != '/') {  // [vdso], [heap], [stack]...: no file behind it
    address.module_offset = pc - mapping.start;
    return address;
  }
  const uint64_t file_offset = pc - mapping.start + mapping.file_offset;
  address.module_offset = file_offset;
  const ElfLayout* elf = layout(mapping.path);
  if (elf == nullptr) return address;

  // Segments' file ranges may share a page; prefer the one whose executability
  // matches the mapping the pc was found in.
  const bool executable_mapping = mapping.permissions.find('x') != std::string::npos;
  const LoadSegment* best = nullptr;
  for (const LoadSegment& segment : elf->segments) {
    if (file_offset < segment.offset || file_offset >= segment.offset + segment.file_size) continue;
    if (best == nullptr || segment.executable == executable_mapping) best = &segment;
  }
  if (best != nullptr) {
    address.module_offset = file_offset - best->offset + best->vaddr;
    address.in_elf = true;
  }
  return address;
}

std::string ModuleMap::build_id(const std::string& module) const {
  if (module.empty() || module.front() != '/') return {};
  const ElfLayout* elf = layout(module);
  return elf ? elf->build_id : std::string();
}

}  // namespace weft
