#include "static/x86_machine_code.h"

#include <llvm/MC/MCTargetOptions.h>
#include <llvm/Support/TargetSelect.h>

#include <mutex>

namespace weft {

bool X86MachineCode::initialize(std::string& error) {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeX86TargetInfo();
    LLVMInitializeX86TargetMC();
    LLVMInitializeX86Disassembler();
  });
  target = llvm::TargetRegistry::lookupTarget(kX86Triple, error);
  if (target == nullptr) return false;
  registers.reset(target->createMCRegInfo(kX86Triple));
  if (!registers) {
    error = "no register info";
    return false;
  }
  llvm::MCTargetOptions options;
  asm_info.reset(target->createMCAsmInfo(*registers, kX86Triple, options));
  subtarget.reset(target->createMCSubtargetInfo(kX86Triple, "", ""));
  instr_info.reset(target->createMCInstrInfo());
  if (!asm_info || !subtarget || !instr_info) {
    error = "an incomplete target";
    return false;
  }
  context = std::make_unique<llvm::MCContext>(llvm::Triple(kX86Triple), asm_info.get(),
                                              registers.get(), subtarget.get());
  disassembler.reset(target->createMCDisassembler(*subtarget, *context));
  analysis.reset(target->createMCInstrAnalysis(instr_info.get()));
  if (!disassembler || !analysis) {
    error = "no disassembler";
    return false;
  }
  return true;
}

}  // namespace weft
