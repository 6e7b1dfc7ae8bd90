// LLVM's x86-64 MC layer (target, registers, instruction info, a CPU-less
// subtarget on which every instruction decodes, disassembler, instruction
// analysis), set up one way for the two files of src/static that decode
// code: binary_structure.cpp (CFG, loops) and loop_performance.cpp (which
// adds a CPU's scheduling model). Internal to src/static: it includes LLVM
// headers, which stay out of the module's public headers.
#pragma once

#include <llvm/MC/MCAsmInfo.h>
#include <llvm/MC/MCContext.h>
#include <llvm/MC/MCDisassembler/MCDisassembler.h>
#include <llvm/MC/MCInstrAnalysis.h>
#include <llvm/MC/MCInstrInfo.h>
#include <llvm/MC/MCRegisterInfo.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>

#include <memory>
#include <string>

namespace weft {

inline constexpr const char* kX86Triple = "x86_64-unknown-linux-gnu";

struct X86MachineCode {
  const llvm::Target* target = nullptr;
  std::unique_ptr<llvm::MCRegisterInfo> registers;
  std::unique_ptr<llvm::MCAsmInfo> asm_info;
  std::unique_ptr<llvm::MCInstrInfo> instr_info;
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget;  // no CPU: every instruction decodes
  std::unique_ptr<llvm::MCContext> context;
  std::unique_ptr<llvm::MCDisassembler> disassembler;
  std::unique_ptr<llvm::MCInstrAnalysis> analysis;

  // Fills every member (LLVM's x86 target registered once per process);
  // false, with the missing part in `error`, when LLVM lacks one.
  bool initialize(std::string& error);
};

}  // namespace weft
