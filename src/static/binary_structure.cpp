#include "static/binary_structure.h"

#include <llvm/DebugInfo/Symbolize/Symbolize.h>
#include <llvm/Demangle/Demangle.h>
#include <llvm/MC/MCAsmInfo.h>
#include <llvm/MC/MCContext.h>
#include <llvm/MC/MCDisassembler/MCDisassembler.h>
#include <llvm/MC/MCInst.h>
#include <llvm/MC/MCInstrAnalysis.h>
#include <llvm/MC/MCInstrInfo.h>
#include <llvm/MC/MCRegisterInfo.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/MCTargetOptions.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Object/Binary.h>
#include <llvm/Object/ELFObjectFile.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <unordered_map>

#include "common/cache_dir.h"
#include "static/binary_structure_cache.h"
#include "static/control_flow_graph.h"
#include "static/module_map.h"
#include "static/symbolizer.h"
#include "static/x86_machine_code.h"

namespace weft {
namespace {

// ---------------------------------------------------------------- symbols --

struct FunctionSymbol {
  uint64_t start = 0;
  uint64_t end = 0;
  std::string linkage_name;
  std::string name;       // demangled
  std::string base_name;  // demangled, without parameters (== name for C)
};

// Lower is better: global, then weak, then local; then fewer leading
// underscores (malloc over __libc_malloc), then shorter, then alphabetical.
struct SymbolRank {
  int binding = 0;
  size_t underscores = 0;
  size_t length = 0;
  std::string name;
  auto operator<=>(const SymbolRank&) const = default;
};

SymbolRank rank_of(uint8_t binding, const std::string& name) {
  SymbolRank rank;
  rank.binding = binding == llvm::ELF::STB_GLOBAL ? 0 : binding == llvm::ELF::STB_LOCAL ? 2 : 1;
  rank.underscores = name.find_first_not_of('_');
  if (rank.underscores == std::string::npos) rank.underscores = name.size();
  rank.length = name.size();
  rank.name = name;
  return rank;
}

std::string base_name_of(const std::string& linkage_name, const std::string& demangled) {
  llvm::ItaniumPartialDemangler demangler;
  if (demangler.partialDemangle(linkage_name.c_str()) || !demangler.isFunction()) {
    return demangled;
  }
  char* text = demangler.getFunctionName(nullptr, nullptr);
  if (text == nullptr) return demangled;
  std::string base(text);
  std::free(text);
  return base;
}

// Function symbols (.symtab and .dynsym), one per address, sorted by start.
std::vector<FunctionSymbol> read_function_symbols(const llvm::object::ELFObjectFileBase& object) {
  struct Candidate {
    uint64_t size = 0;
    SymbolRank rank;
  };
  std::map<uint64_t, Candidate> best;
  auto consider = [&](const llvm::object::ELFSymbolRef& symbol) {
    uint8_t type = symbol.getELFType();
    if (type != llvm::ELF::STT_FUNC && type != llvm::ELF::STT_GNU_IFUNC) return;
    if (symbol.getSize() == 0) return;
    auto section = symbol.getSection();
    if (!section) {
      llvm::consumeError(section.takeError());
      return;
    }
    if (*section == object.section_end()) return;  // undefined (imported)
    auto name = symbol.getName();
    auto address = symbol.getAddress();
    if (!name || !address) {
      if (!name) llvm::consumeError(name.takeError());
      if (!address) llvm::consumeError(address.takeError());
      return;
    }
    if (name->empty()) return;
    SymbolRank rank = rank_of(symbol.getBinding(), name->str());
    auto [it, inserted] = best.try_emplace(*address, Candidate{symbol.getSize(), rank});
    if (!inserted) {
      it->second.size = std::max(it->second.size, symbol.getSize());
      if (rank < it->second.rank) it->second.rank = std::move(rank);
    }
  };
  for (const llvm::object::ELFSymbolRef& symbol : object.symbols()) consider(symbol);
  for (const llvm::object::ELFSymbolRef& symbol : object.getDynamicSymbolIterators()) {
    consider(symbol);
  }

  std::vector<FunctionSymbol> symbols;
  symbols.reserve(best.size());
  for (auto& [start, candidate] : best) {
    FunctionSymbol symbol;
    symbol.start = start;
    symbol.end = start + candidate.size;
    symbol.linkage_name = candidate.rank.name;
    symbol.name = llvm::demangle(symbol.linkage_name);
    symbol.base_name = base_name_of(symbol.linkage_name, symbol.name);
    symbols.push_back(std::move(symbol));
  }
  return symbols;
}

// ----------------------------------------------------------- disassembly --

// The MC layer, created on first use; null when LLVM has no x86-64
// disassembler.
struct Disassembler : X86MachineCode {
  static std::unique_ptr<Disassembler> create() {
    auto result = std::make_unique<Disassembler>();
    std::string error;
    return result->initialize(error) ? std::move(result) : nullptr;
  }
};

enum class Flow { kNext, kConditional, kJump, kIndirectJump, kReturn, kTrap };

struct Instruction {
  uint64_t address = 0;
  uint64_t size = 0;
  Flow flow = Flow::kNext;
  bool has_target = false;
  uint64_t target = 0;
};

// Linear sweep of [start, start + bytes.size()); stops at the first byte
// that does not decode into an instruction lying wholly inside the range.
std::vector<Instruction> disassemble(const Disassembler& mc, llvm::ArrayRef<uint8_t> bytes,
                                     uint64_t start) {
  std::vector<Instruction> instructions;
  uint64_t offset = 0;
  while (offset < bytes.size()) {
    llvm::MCInst inst;
    uint64_t size = 0;
    auto status = mc.disassembler->getInstruction(inst, size, bytes.slice(offset), start + offset,
                                                  llvm::nulls());
    if (status == llvm::MCDisassembler::Fail || size == 0 || offset + size > bytes.size()) break;
    Instruction instruction;
    instruction.address = start + offset;
    instruction.size = size;
    const llvm::MCInstrAnalysis& analysis = *mc.analysis;
    if (analysis.isReturn(inst)) {
      instruction.flow = Flow::kReturn;
    } else if (analysis.isIndirectBranch(inst)) {
      instruction.flow = Flow::kIndirectJump;
    } else if (analysis.isConditionalBranch(inst)) {
      instruction.flow = Flow::kConditional;
    } else if (analysis.isUnconditionalBranch(inst)) {
      instruction.flow = Flow::kJump;
    } else if (mc.instr_info->get(inst.getOpcode()).isTrap()) {
      instruction.flow = Flow::kTrap;  // ud2
    }
    if (instruction.flow == Flow::kConditional || instruction.flow == Flow::kJump) {
      instruction.has_target =
          analysis.evaluateBranch(inst, instruction.address, size, instruction.target);
    }
    instructions.push_back(instruction);
    offset += size;
  }
  return instructions;
}

// ------------------------------------------------------ function results --

// Index of the instruction starting exactly at address, or -1.
int64_t instruction_at(const std::vector<Instruction>& instructions, uint64_t address) {
  const uint64_t walk_end = instructions.back().address + instructions.back().size;
  if (address < instructions.front().address || address >= walk_end) return -1;
  auto it = std::lower_bound(
      instructions.begin(), instructions.end(), address,
      [](const Instruction& instruction, uint64_t a) { return instruction.address < a; });
  if (it == instructions.end() || it->address != address) return -1;
  return it - instructions.begin();
}

struct BlockBounds {
  std::vector<uint32_t> first_instruction;  // per block, plus one past the last block
  std::vector<uint32_t> block_of;           // per instruction
};

// Blocks start at the leaders: the entry, every branch target inside the
// function, and every instruction after a branch, return or trap.
BlockBounds find_block_bounds(const std::vector<Instruction>& instructions) {
  std::vector<bool> leader(instructions.size(), false);
  leader[0] = true;
  for (size_t i = 0; i < instructions.size(); ++i) {
    const Instruction& instruction = instructions[i];
    if (instruction.flow == Flow::kNext) continue;
    if (i + 1 < instructions.size()) leader[i + 1] = true;
    if (instruction.has_target) {
      int64_t target = instruction_at(instructions, instruction.target);
      if (target >= 0) leader[static_cast<size_t>(target)] = true;
    }
  }
  BlockBounds bounds;
  bounds.block_of.resize(instructions.size());
  for (uint32_t i = 0; i < instructions.size(); ++i) {
    if (leader[i]) bounds.first_instruction.push_back(i);
    bounds.block_of[i] = static_cast<uint32_t>(bounds.first_instruction.size() - 1);
  }
  bounds.first_instruction.push_back(static_cast<uint32_t>(instructions.size()));
  return bounds;
}

// The basic blocks and their successors inside the function.
std::vector<BasicBlock> build_blocks(const std::vector<Instruction>& instructions,
                                     const BlockBounds& bounds) {
  const std::vector<uint32_t>& first_instruction = bounds.first_instruction;
  const uint32_t block_count = static_cast<uint32_t>(first_instruction.size() - 1);
  std::vector<BasicBlock> blocks;
  for (uint32_t b = 0; b < block_count; ++b) {
    const Instruction& first = instructions[first_instruction[b]];
    const Instruction& last = instructions[first_instruction[b + 1] - 1];
    BasicBlock block;
    block.start = first.address;
    block.end = last.address + last.size;
    block.instructions = first_instruction[b + 1] - first_instruction[b];
    block.last_instruction = last.address;
    bool falls_through = last.flow == Flow::kNext || last.flow == Flow::kConditional;
    if (falls_through && b + 1 < block_count) block.successors.push_back(b + 1);
    if ((last.flow == Flow::kConditional || last.flow == Flow::kJump) && last.has_target) {
      // A target outside the function (tail call, gcc's .cold part) or inside
      // an instruction is no edge.
      int64_t target = instruction_at(instructions, last.target);
      if (target >= 0) block.successors.push_back(bounds.block_of[static_cast<size_t>(target)]);
    }
    block.ends_in_indirect_jump = last.flow == Flow::kIndirectJump;
    std::sort(block.successors.begin(), block.successors.end());
    block.successors.erase(std::unique(block.successors.begin(), block.successors.end()),
                           block.successors.end());
    blocks.push_back(std::move(block));
  }
  return blocks;
}

// The natural loops of the blocks' control-flow graph (entry: block 0),
// without the derived fields complete() sets.
std::vector<Loop> find_block_loops(const std::vector<BasicBlock>& blocks) {
  Successors graph;
  for (const BasicBlock& block : blocks) graph.push_back(block.successors);
  LoopForest forest = find_loops(graph, 0);
  std::vector<Loop> loops;
  for (const NaturalLoop& natural : forest.loops) {
    Loop loop;
    loop.parent = natural.parent;
    loop.depth = natural.depth;
    loop.header = blocks[natural.header].start;
    loop.blocks = natural.body;
    loops.push_back(std::move(loop));
  }
  return loops;
}

struct SourceLine {
  std::string file;
  uint32_t line = 0;
};

// Sets file, first_line, last_line and header_line of each loop from the
// outermost inlined frame of each of its instructions.
template <class LineOf>
void attach_lines(FunctionStructure& function, const std::vector<Instruction>& instructions,
                  const std::vector<uint32_t>& first_instruction, LineOf line_of) {
  for (Loop& loop : function.loops) {
    std::vector<std::pair<uint64_t, SourceLine>> lines;  // instruction address -> line
    for (uint32_t b : loop.blocks) {
      for (uint32_t i = first_instruction[b]; i < first_instruction[b + 1]; ++i) {
        lines.emplace_back(instructions[i].address, line_of(instructions[i].address));
      }
    }
    std::map<std::string, size_t> count;
    for (const auto& [address, line] : lines) {
      if (line.line != 0 && !line.file.empty()) ++count[line.file];
    }
    if (count.empty()) continue;
    auto most = std::max_element(count.begin(), count.end(), [](const auto& a, const auto& b) {
      return a.second < b.second;  // first (alphabetical) among equals
    });
    loop.file = most->first;
    for (const auto& [address, line] : lines) {
      if (line.line == 0 || line.file != loop.file) continue;
      loop.first_line = loop.first_line == 0 ? line.line : std::min(loop.first_line, line.line);
      loop.last_line = std::max(loop.last_line, line.line);
    }
    const BasicBlock* header = function.block_at(loop.header);
    for (const auto& [address, line] : lines) {
      if (address < header->start || address >= header->end) continue;
      if (line.line != 0 && line.file == loop.file) {
        loop.header_line = line.line;
        break;
      }
    }
  }
}

}  // namespace

// ------------------------------------------------------------- interface --

bool Loop::contains(uint64_t vaddr) const {
  auto after = std::upper_bound(ranges.begin(), ranges.end(), vaddr,
                                [](uint64_t a, const auto& range) { return a < range.first; });
  return after != ranges.begin() && vaddr < std::prev(after)->second;
}

const Loop* FunctionStructure::innermost_loop(uint64_t vaddr) const {
  // Loops containing one address form a chain of nested loops: the deepest wins.
  const Loop* innermost = nullptr;
  for (const Loop& loop : loops) {
    if ((innermost == nullptr || loop.depth > innermost->depth) && loop.contains(vaddr)) {
      innermost = &loop;
    }
  }
  return innermost;
}

const BasicBlock* FunctionStructure::block_at(uint64_t vaddr) const {
  auto after =
      std::upper_bound(blocks.begin(), blocks.end(), vaddr,
                       [](uint64_t a, const BasicBlock& block) { return a < block.start; });
  if (after == blocks.begin()) return nullptr;
  const BasicBlock& block = *std::prev(after);
  return vaddr < block.end ? &block : nullptr;
}

std::string binary_structure_cache_dir() { return weft_cache_dir(); }

struct BinaryStructure::Backend {
  llvm::object::OwningBinary<llvm::object::Binary> binary;
  const llvm::object::ELFObjectFileBase* object = nullptr;
  std::vector<FunctionSymbol> symbols;  // sorted by start

  struct CodeSection {
    uint64_t address = 0;
    llvm::ArrayRef<uint8_t> bytes;
  };
  std::vector<CodeSection> code_sections;

  std::unique_ptr<Disassembler> mc;  // created on first use
  bool mc_failed = false;
  std::unique_ptr<llvm::symbolize::LLVMSymbolizer> symbolizer;  // created on first use

  const FunctionSymbol* symbol_at(uint64_t vaddr) const {
    auto after =
        std::upper_bound(symbols.begin(), symbols.end(), vaddr,
                         [](uint64_t a, const FunctionSymbol& symbol) { return a < symbol.start; });
    // A few symbols may nest (an alias of a part of a function): look back a little.
    for (int steps = 0; after != symbols.begin() && steps < 16; ++steps) {
      --after;
      if (vaddr < after->end) return &*after;
    }
    return nullptr;
  }

  const Disassembler* disassembler() {
    if (!mc && !mc_failed) {
      mc = Disassembler::create();
      mc_failed = !mc;
    }
    return mc.get();
  }

  // Source position of the outermost inlined frame at vaddr.
  SourceLine outermost_line(const std::string& path, uint64_t vaddr) {
    if (!symbolizer) {
      llvm::symbolize::LLVMSymbolizer::Options options;
      options.PrintFunctions = llvm::symbolize::FunctionNameKind::LinkageName;
      options.PathStyle = llvm::symbolize::FileLineInfoKind::AbsoluteFilePath;
      options.UseSymbolTable = false;
      options.Demangle = false;
      symbolizer = std::make_unique<llvm::symbolize::LLVMSymbolizer>(options);
    }
    SourceLine result;
    auto inlining = symbolizer->symbolizeInlinedCode(
        path, {vaddr, llvm::object::SectionedAddress::UndefSection});
    if (!inlining) {
      llvm::consumeError(inlining.takeError());
      return result;
    }
    if (inlining->getNumberOfFrames() == 0) return result;
    // The outermost frame, or the outlined body's inlined copy (its own lines).
    uint32_t index = inlining->getNumberOfFrames() - 1;
    while (index > 0 && is_outlined_body_copy(inlining->getFrame(index - 1).FunctionName)) --index;
    const llvm::DILineInfo& frame = inlining->getFrame(index);
    if (frame.FileName != llvm::DILineInfo::BadString &&
        frame.FileName != llvm::DILineInfo::Addr2LineBadString) {
      result.file = frame.FileName;
      result.line = frame.Line;
    }
    return result;
  }

  // The code section holding vaddr (the last one listed), or nullptr.
  const CodeSection* code_section_at(uint64_t vaddr) const {
    const CodeSection* section = nullptr;
    for (const CodeSection& candidate : code_sections) {
      if (vaddr >= candidate.address && vaddr < candidate.address + candidate.bytes.size()) {
        section = &candidate;
      }
    }
    return section;
  }

  FunctionStructure analyze(const std::string& path, const FunctionSymbol& symbol);
};

FunctionStructure BinaryStructure::Backend::analyze(const std::string& path,
                                                    const FunctionSymbol& symbol) {
  FunctionStructure function;
  function.name = symbol.name;
  function.linkage_name = symbol.linkage_name;
  function.start = symbol.start;
  function.end = symbol.end;

  const Disassembler* mc = disassembler();
  const CodeSection* section = code_section_at(symbol.start);
  if (mc == nullptr || section == nullptr) return function;
  uint64_t offset = symbol.start - section->address;
  uint64_t length = std::min<uint64_t>(symbol.end - symbol.start, section->bytes.size() - offset);
  std::vector<Instruction> instructions =
      disassemble(*mc, section->bytes.slice(offset, length), symbol.start);
  if (instructions.empty()) return function;
  function.instructions = static_cast<uint32_t>(instructions.size());

  const BlockBounds bounds = find_block_bounds(instructions);
  function.blocks = build_blocks(instructions, bounds);
  function.loops = find_block_loops(function.blocks);
  complete_function(function);

  std::unordered_map<uint64_t, SourceLine> lines;
  attach_lines(function, instructions, bounds.first_instruction, [&](uint64_t address) {
    auto found = lines.find(address);
    if (found == lines.end()) found = lines.emplace(address, outermost_line(path, address)).first;
    return found->second;
  });
  return function;
}

BinaryStructure::BinaryStructure(std::string path, std::unique_ptr<Backend> backend)
    : path_(std::move(path)), backend_(std::move(backend)) {}

std::unique_ptr<BinaryStructure> BinaryStructure::open(const std::string& path,
                                                       const BinaryStructureOptions& options) {
  auto binary = llvm::object::createBinary(path);
  if (!binary) {
    llvm::consumeError(binary.takeError());
    return nullptr;
  }
  const auto* object = llvm::dyn_cast<llvm::object::ELF64LEObjectFile>(binary->getBinary());
  // Executables, PIEs and shared libraries: relocatable objects have no
  // virtual addresses of their own, core files no symbols.
  if (object == nullptr) return nullptr;
  const auto& header = object->getELFFile().getHeader();
  if (header.e_machine != llvm::ELF::EM_X86_64 ||
      (header.e_type != llvm::ELF::ET_EXEC && header.e_type != llvm::ELF::ET_DYN)) {
    return nullptr;
  }

  auto backend = std::make_unique<Backend>();
  backend->object = object;
  backend->symbols = read_function_symbols(*object);
  for (const llvm::object::SectionRef& section : object->sections()) {
    if (!section.isText() || section.isVirtual()) continue;
    auto contents = section.getContents();
    if (!contents) {
      llvm::consumeError(contents.takeError());
      continue;
    }
    backend->code_sections.push_back(
        {section.getAddress(), llvm::arrayRefFromStringRef(*contents)});
  }
  backend->binary = std::move(*binary);

  std::unique_ptr<BinaryStructure> structure(new BinaryStructure(path, std::move(backend)));
  if (std::optional<ElfLayout> layout = read_elf_layout(path)) {
    structure->build_id_ = layout->build_id;
  }
  if (options.use_cache && !structure->build_id_.empty()) {
    std::string dir = options.cache_dir.empty() ? binary_structure_cache_dir() : options.cache_dir;
    if (!dir.empty()) {
      structure->cache_path_ = dir + "/binary-structure/" + structure->build_id_ + ".json";
      structure->load_cache();
    }
  }
  return structure;
}

BinaryStructure::~BinaryStructure() {
  try {
    save_cache();
  } catch (...) {
    // The cache is an optimization: never fail because of it.
  }
}

void BinaryStructure::load_cache() {
  functions_ = read_binary_structure_cache(cache_path_, build_id_);
  from_cache_ = functions_.size();
}

std::vector<uint64_t> BinaryStructure::function_starts() const {
  std::vector<uint64_t> starts;
  starts.reserve(backend_->symbols.size());
  for (const FunctionSymbol& symbol : backend_->symbols) starts.push_back(symbol.start);
  return starts;
}

const FunctionStructure* BinaryStructure::function_at(uint64_t vaddr) {
  const FunctionSymbol* symbol = backend_->symbol_at(vaddr);
  if (symbol == nullptr) return nullptr;
  auto found = functions_.find(symbol->start);
  if (found != functions_.end() && found->second.end == symbol->end) return &found->second;
  FunctionStructure function = backend_->analyze(path_, *symbol);
  ++analyzed_;
  dirty_ = true;
  return &(functions_[symbol->start] = std::move(function));
}

std::vector<const FunctionStructure*> BinaryStructure::functions_named(std::string_view name) {
  std::vector<const FunctionStructure*> result;
  for (const FunctionSymbol& symbol : backend_->symbols) {
    if (symbol.linkage_name == name || symbol.name == name || symbol.base_name == name) {
      if (const FunctionStructure* function = function_at(symbol.start)) result.push_back(function);
    }
  }
  return result;
}

bool BinaryStructure::save_cache() {
  if (cache_path_.empty() || !dirty_) return true;
  namespace fs = std::filesystem;
  std::error_code error;
  fs::path target(cache_path_);
  fs::create_directories(target.parent_path(), error);
  if (error) return false;

  // Keep what another process may have added since this one read the file.
  const std::string text = binary_structure_cache_text(build_id_, functions_, cache_path_);

  static std::atomic<uint64_t> counter{0};
  std::string temporary =
      cache_path_ + ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter.fetch_add(1));
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) {
      fs::remove(temporary, error);
      return false;
    }
  }
  fs::rename(temporary, target, error);
  if (error) {
    fs::remove(temporary, error);
    return false;
  }
  dirty_ = false;
  return true;
}

BinaryStructureCache::BinaryStructureCache(BinaryStructureOptions options)
    : options_(std::move(options)) {}

BinaryStructureCache::~BinaryStructureCache() = default;

BinaryStructure* BinaryStructureCache::module(const std::string& module_path) {
  auto found = modules_.find(module_path);
  if (found == modules_.end()) {
    found = modules_.emplace(module_path, BinaryStructure::open(module_path, options_)).first;
  }
  return found->second.get();
}

const FunctionStructure* BinaryStructureCache::function_at(const std::string& module_path,
                                                           uint64_t vaddr) {
  BinaryStructure* structure = module(module_path);
  return structure != nullptr ? structure->function_at(vaddr) : nullptr;
}

const Loop* BinaryStructureCache::innermost_loop(const std::string& module_path, uint64_t vaddr) {
  const FunctionStructure* function = function_at(module_path, vaddr);
  return function != nullptr ? function->innermost_loop(vaddr) : nullptr;
}

void BinaryStructureCache::save() {
  for (auto& [path, structure] : modules_) {
    if (structure) structure->save_cache();
  }
}

}  // namespace weft
