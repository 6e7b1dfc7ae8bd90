#include "static/symbolizer.h"

#include <llvm/DebugInfo/Symbolize/Symbolize.h>
#include <llvm/Support/Error.h>

namespace weft {
namespace {

// LLVM marks what it could not find with "<invalid>" (and sometimes "??").
bool is_missing(const std::string& text) {
  return text.empty() || text == llvm::DILineInfo::BadString ||
         text == llvm::DILineInfo::Addr2LineBadString;
}

CodeLocation unknown_location(std::string module, uint64_t module_offset) {
  CodeLocation location;
  location.module = std::move(module);
  location.module_offset = module_offset;
  location.function = kUnknownFunction;
  return location;
}

}  // namespace

struct Symbolizer::Backend {
  llvm::symbolize::LLVMSymbolizer llvm_symbolizer;

  static llvm::symbolize::LLVMSymbolizer::Options options() {
    llvm::symbolize::LLVMSymbolizer::Options options;
    options.PrintFunctions = llvm::symbolize::FunctionNameKind::LinkageName;
    options.PathStyle = llvm::symbolize::FileLineInfoKind::AbsoluteFilePath;
    options.UseSymbolTable = true;
    options.Demangle = true;
    return options;
  }

  Backend() : llvm_symbolizer(options()) {}
};

Symbolizer::Symbolizer(ModuleMap modules)
    : modules_(std::move(modules)), backend_(std::make_unique<Backend>()) {}

Symbolizer::~Symbolizer() = default;

const CodeLocation& Symbolizer::symbolize(uint64_t pc) {
  auto cached = cache_.find(pc);
  if (cached != cache_.end()) return cached->second;

  CodeLocation location;
  std::optional<ModuleAddress> address = modules_.resolve(pc);
  if (!address) {
    location = unknown_location({}, 0);
  } else if (!address->in_elf) {
    location = unknown_location(address->module, address->module_offset);
  } else {
    location = symbolize_module_offset(address->module, address->module_offset);
  }
  location.pc = pc;
  return cache_.emplace(pc, std::move(location)).first->second;
}

std::optional<DataSymbol> Symbolizer::symbolize_data(uint64_t address) {
  std::optional<ModuleAddress> at = modules_.resolve_data(address);
  if (!at) return std::nullopt;
  auto global = backend_->llvm_symbolizer.symbolizeData(
      at->module, {at->module_offset, llvm::object::SectionedAddress::UndefSection});
  if (!global) {
    llvm::consumeError(global.takeError());
    return std::nullopt;
  }
  if (is_missing(global->Name) || global->Name.empty()) return std::nullopt;
  // Symbols without a size match every address after them: require the
  // address to be inside the variable.
  if (at->module_offset < global->Start || at->module_offset >= global->Start + global->Size)
    return std::nullopt;
  DataSymbol symbol;
  symbol.name = global->Name;
  symbol.address = address - (at->module_offset - global->Start);
  symbol.size = global->Size;
  return symbol;
}

CodeLocation Symbolizer::symbolize_module_offset(const std::string& module,
                                                 uint64_t module_offset) {
  auto inlining = backend_->llvm_symbolizer.symbolizeInlinedCode(
      module, {module_offset, llvm::object::SectionedAddress::UndefSection});
  if (!inlining) {
    llvm::consumeError(inlining.takeError());
    return unknown_location(module, module_offset);
  }

  CodeLocation location = unknown_location(module, module_offset);
  for (uint32_t i = 0; i < inlining->getNumberOfFrames(); ++i) {
    const llvm::DILineInfo& info = inlining->getFrame(i);
    InlineFrame frame;
    frame.function = is_missing(info.FunctionName) ? kUnknownFunction : info.FunctionName;
    frame.file = is_missing(info.FileName) ? std::string() : info.FileName;
    frame.line = info.Line;
    frame.column = info.Column;
    location.frames.push_back(std::move(frame));
  }
  // LLVM answers with one empty frame when it knows nothing.
  if (location.frames.size() == 1 && location.frames[0].function == kUnknownFunction &&
      location.frames[0].file.empty()) {
    location.frames.clear();
  }
  if (location.frames.empty()) return location;

  const InlineFrame& innermost = location.frames.front();
  location.file = innermost.file;
  location.line = innermost.line;
  location.column = innermost.column;
  location.function = location.frames.back().function;
  location.function_decl_line = inlining->getFrame(inlining->getNumberOfFrames() - 1).StartLine;
  return location;
}

}  // namespace weft
