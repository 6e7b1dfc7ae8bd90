#include "static/loop_performance.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/MC/MCAsmInfo.h>
#include <llvm/MC/MCContext.h>
#include <llvm/MC/MCDisassembler/MCDisassembler.h>
#include <llvm/MC/MCInst.h>
#include <llvm/MC/MCInstPrinter.h>
#include <llvm/MC/MCInstrAnalysis.h>
#include <llvm/MC/MCInstrInfo.h>
#include <llvm/MC/MCRegisterInfo.h>
#include <llvm/MC/MCSchedule.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/MCTargetOptions.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/MCA/Context.h>
#include <llvm/MCA/CustomBehaviour.h>
#include <llvm/MCA/HWEventListener.h>
#include <llvm/MCA/InstrBuilder.h>
#include <llvm/MCA/Pipeline.h>
#include <llvm/MCA/SourceMgr.h>
#include <llvm/MCA/Support.h>
#include <llvm/Object/Binary.h>
#include <llvm/Object/ELFObjectFile.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MathExtras.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/TargetParser/Host.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <unordered_map>

#include "static/x86_machine_code.h"

namespace weft {
namespace {

// Simulated iterations: the steady state is measured over the second half,
// after the pipeline has filled.
constexpr unsigned kSimulatedIterations = 200;
// Unrolled iterations of the dependence-chain computation (the bound is the
// growth of the longest path over the second half).
constexpr unsigned kChainIterations = 128;
// The linked LLVM's major version, as its tools are suffixed (llvm-mca-19).
const std::string kLlvmMajor = std::to_string(LLVM_VERSION_MAJOR);

std::string lower(std::string_view text) {
  std::string result(text);
  for (char& c : result) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return result;
}

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}
bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

std::string error_text(llvm::Error error) {
  std::string text = llvm::toString(std::move(error));
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

// What an opcode is, read from its LLVM name (X86's names are systematic:
// [V]ADDSDrm, VADDPDYrr, VFMADD231PDZ256m, VDIVSSZrr_Int, ...).
struct FpOpcode {
  std::optional<FpKind> arithmetic;  // add/sub, mul, fma or div
  bool scalar_move = false;          // [V]MOVSD / [V]MOVSS
  bool packed = false;               // PS/PD (else SS/SD)
  uint32_t element_bits = 0;         // 32 or 64; 0: not an FP opcode weft knows
  std::string base;                  // "ADD", "FMADD231", "MOV"
  std::string form;                  // what follows the type and width: "rr", "rm", "mr", "r", "m"
  bool vex_or_evex = false;          // the name starts with V
};

FpOpcode parse_fp_opcode(std::string_view name) {
  FpOpcode result;
  std::string_view rest = name;
  if (starts_with(rest, "V")) {
    result.vex_or_evex = true;
    rest.remove_prefix(1);
  }
  struct Base {
    std::string_view prefix;
    std::optional<FpKind> kind;
    bool digits;  // FMA's 132/213/231
  };
  static const Base bases[] = {
      {"FMADDSUB", FpKind::kFma, true},   {"FMSUBADD", FpKind::kFma, true},
      {"FNMADD", FpKind::kFma, true},     {"FNMSUB", FpKind::kFma, true},
      {"FMADD", FpKind::kFma, true},      {"FMSUB", FpKind::kFma, true},
      {"ADDSUB", FpKind::kAddSub, false}, {"ADD", FpKind::kAddSub, false},
      {"SUB", FpKind::kAddSub, false},    {"MUL", FpKind::kMul, false},
      {"DIV", FpKind::kDiv, false},       {"MOV", std::nullopt, false},
  };
  for (const Base& base : bases) {
    if (!starts_with(rest, base.prefix)) continue;
    std::string_view after = rest.substr(base.prefix.size());
    size_t digits = 0;
    if (base.digits)
      while (digits < after.size() && std::isdigit(static_cast<unsigned char>(after[digits])))
        ++digits;
    if (base.digits && digits != 3) return result;
    const std::string_view type = after.substr(digits, 2);
    if (type != "PS" && type != "PD" && type != "SS" && type != "SD") return result;
    if (!base.kind && type[0] == 'P') return result;  // MOVPS is no name; MOVAPS etc. are kept
    result.base = std::string(rest.substr(0, base.prefix.size() + digits));
    result.packed = type[0] == 'P';
    result.element_bits = type[1] == 'D' ? 64 : 32;
    result.arithmetic = base.kind;
    result.scalar_move = !base.kind;
    std::string_view form = after.substr(digits + 2);
    // The width marks of the packed forms (Y, Z, Z128, Z256) and EVEX's Z
    // on scalar ones.
    for (std::string_view mark : {"Z128", "Z256", "Z", "Y"})
      if (starts_with(form, mark)) {
        form.remove_prefix(mark.size());
        break;
      }
    result.form = std::string(form);
    return result;
  }
  return result;
}

// The one-iteration sequence of a loop, decoded.
struct DecodedLoop {
  std::vector<llvm::MCInst> instructions;
  std::vector<std::string> text;
  std::vector<uint64_t> addresses;  // of each instruction (ELF virtual addresses)
};

// The part of the instruction stream a listener of MCA's pipeline records.
class PipelineRecorder : public llvm::mca::HWEventListener {
 public:
  PipelineRecorder(unsigned sequence_length, unsigned iterations,
                   std::vector<uint32_t> unit_slot_of_resource, uint32_t unit_slots)
      : sequence_length_(sequence_length),
        iteration_retired_(iterations, 0),
        unit_slot_of_resource_(std::move(unit_slot_of_resource)),
        unit_cycles_(unit_slots, 0.0) {}

  void onCycleEnd() override { ++cycle_; }

  void onEvent(const llvm::mca::HWInstructionEvent& event) override {
    const unsigned index = event.IR.getSourceIndex();
    if (event.Type == llvm::mca::HWInstructionEvent::Retired) {
      // In-order retirement: the last instruction of an iteration retires
      // after all of it.
      if (index % sequence_length_ == sequence_length_ - 1)
        iteration_retired_[index / sequence_length_] = cycle_;
      return;
    }
    if (event.Type != llvm::mca::HWInstructionEvent::Issued) return;
    const auto& issued = static_cast<const llvm::mca::HWInstructionIssuedEvent&>(event);
    for (const llvm::mca::ResourceUse& use : issued.UsedResources) {
      // The execute stage reports the processor resource index and, for a
      // resource of several units, the unit's bit.
      const uint64_t resource = use.first.first;
      if (resource >= unit_slot_of_resource_.size() ||
          unit_slot_of_resource_[resource] == UINT32_MAX)
        continue;
      const uint32_t slot = unit_slot_of_resource_[resource] +
                            static_cast<uint32_t>(llvm::countr_zero(use.first.second));
      if (slot < unit_cycles_.size()) unit_cycles_[slot] += static_cast<double>(use.second);
    }
  }

  void onEvent(const llvm::mca::HWStallEvent& event) override {
    if (event.Type < stalls_.size()) ++stalls_[event.Type];
  }

  // Cycles per iteration over the second half of the run.
  double steady_cycles_per_iteration() const {
    const size_t n = iteration_retired_.size();
    const size_t half = n / 2;
    return static_cast<double>(iteration_retired_[n - 1] - iteration_retired_[half - 1]) /
           static_cast<double>(n - half);
  }
  const std::vector<double>& unit_cycles() const { return unit_cycles_; }
  // Stall events by HWStallEvent::GenericEventType.
  const std::array<uint64_t, llvm::mca::HWStallEvent::LastGenericEvent>& stalls() const {
    return stalls_;
  }

 private:
  unsigned sequence_length_;
  unsigned cycle_ = 0;
  std::vector<unsigned> iteration_retired_;
  std::vector<uint32_t> unit_slot_of_resource_;
  std::vector<double> unit_cycles_;
  std::array<uint64_t, llvm::mca::HWStallEvent::LastGenericEvent> stalls_{};
};

// What a dispatch stall of MCA means, for the window bottleneck.
const char* stall_name(unsigned type) {
  switch (type) {
    case llvm::mca::HWStallEvent::RegisterFileStall:
      return "register file full";
    case llvm::mca::HWStallEvent::RetireControlUnitStall:
      return "reorder buffer full";
    case llvm::mca::HWStallEvent::DispatchGroupStall:
      return "dispatch group";
    case llvm::mca::HWStallEvent::SchedulerQueueFull:
      return "scheduler full";
    case llvm::mca::HWStallEvent::LoadQueueFull:
      return "load queue full";
    case llvm::mca::HWStallEvent::StoreQueueFull:
      return "store queue full";
    default:
      return "other stall";
  }
}

struct Simulation {
  bool ok = false;
  std::string error;
  double cycles_per_iteration = 0;
  uint32_t micro_ops = 0;
  double front_end_bound = 0;
  double port_bound = 0;
  std::string port_bound_resource;
  uint32_t port_bound_resource_index = 0;
  std::vector<double> unit_cycles;  // per unit slot, per iteration
  double latency_bound = 0;
  std::vector<uint32_t> latency_chain;  // sequence indices
  // Per instruction: its cycles on the resource of the port bound, its latency.
  std::vector<double> bound_resource_use;
  std::vector<unsigned> latencies;
  std::string most_frequent_stall;  // empty: no stall
};

}  // namespace

const char* fp_kind_name(FpKind kind) {
  switch (kind) {
    case FpKind::kLoad:
      return "load";
    case FpKind::kStore:
      return "store";
    case FpKind::kAddSub:
      return "add_sub";
    case FpKind::kMul:
      return "mul";
    case FpKind::kFma:
      return "fma";
    case FpKind::kDiv:
      return "div";
  }
  return "?";
}

const char* bottleneck_kind_name(BottleneckKind kind) {
  switch (kind) {
    case BottleneckKind::kFrontEnd:
      return "front_end";
    case BottleneckKind::kPort:
      return "port";
    case BottleneckKind::kDependenceChain:
      return "dependence_chain";
    case BottleneckKind::kWindow:
      return "out_of_order_window";
  }
  return "?";
}

const char* access_pattern_name(AccessPattern pattern) {
  switch (pattern) {
    case AccessPattern::kStrided:
      return "strided";
    case AccessPattern::kIrregular:
      return "irregular";
    case AccessPattern::kUnknownStride:
      return "unknown_stride";
  }
  return "?";
}

namespace {
std::optional<double> ratio(uint32_t part, uint32_t total) {
  if (total == 0) return std::nullopt;
  return static_cast<double>(part) / static_cast<double>(total);
}
}  // namespace

std::optional<double> VectorizationCounts::full_width_ratio() const {
  return ratio(full_width, total());
}
std::optional<double> VectorizationCounts::below_width_ratio() const {
  return ratio(below_width, total());
}
std::optional<double> VectorizationCounts::scalar_ratio() const { return ratio(scalar, total()); }

// The MC layer (X86MachineCode: its `subtarget` has no CPU, so every
// instruction decodes), plus the CPU's own subtarget for its model.
struct LoopPerformanceAnalyzer::Backend : X86MachineCode {
  std::string path;
  llvm::object::OwningBinary<llvm::object::Binary> binary;
  struct CodeSection {
    uint64_t address = 0;
    llvm::ArrayRef<uint8_t> bytes;
  };
  std::vector<CodeSection> code_sections;

  std::unique_ptr<llvm::MCSubtargetInfo> cpu_subtarget;
  std::unique_ptr<llvm::MCInstPrinter> printer;

  bool divider_unmodeled = false;  // the model's caveat: divsd costs the ports under 2 cycles
  std::unordered_map<std::string, unsigned> opcode_by_name;
  std::unordered_map<std::string, unsigned> register_by_name;
  std::vector<uint64_t> resource_masks;  // by processor resource index
  std::vector<uint32_t> unit_slot_of_resource;
  std::vector<std::string> unit_names;
  uint32_t vector_width = 128;

  const llvm::MCSchedModel& model() const { return cpu_subtarget->getSchedModel(); }

  // The widest vector register among the operands (128, 256, 512), 0 if none.
  uint32_t vector_register_bits(const llvm::MCInst& inst) const {
    uint32_t bits = 0;
    for (const llvm::MCOperand& operand : inst) {
      if (!operand.isReg() || operand.getReg() == 0) continue;
      const llvm::StringRef name = registers->getName(operand.getReg());
      if (name.starts_with("XMM")) bits = std::max(bits, 128u);
      if (name.starts_with("YMM")) bits = std::max(bits, 256u);
      if (name.starts_with("ZMM")) bits = std::max(bits, 512u);
    }
    return bits;
  }

  std::string mnemonic(const llvm::MCInst& inst) const {
    const auto m = printer->getMnemonic(&inst);
    return m.first ? lower(llvm::StringRef(m.first).trim().str()) : std::string();
  }

  // A memory access of one element: scalar SSE/AVX forms, 32/64-bit moves
  // and inserts, broadcasts (one element read, then copied).
  bool scalar_memory_access(const llvm::MCInst& inst, const FpOpcode& fp) const {
    if (fp.element_bits != 0) return !fp.packed;
    const std::string m = mnemonic(inst);
    if (ends_with(m, "ss") || ends_with(m, "sd") || ends_with(m, "sh")) return true;
    for (std::string_view prefix :
         {"movq",      "movd",       "vmovq",    "vmovd",      "movlp",       "movhp",   "vmovlp",
          "vmovhp",    "pinsr",      "vpinsr",   "vbroadcast", "vpbroadcast", "pextr",   "vpextr",
          "extractps", "vextractps", "insertps", "vinsertps",  "movddup",     "vmovddup"})
      if (starts_with(m, prefix)) return true;
    return false;
  }

  std::optional<DecodedLoop> decode(const Loop& loop, const FunctionStructure& function,
                                    std::string& error) const {
    return decode_blocks(loop.blocks, function, error);
  }

  // The blocks' instructions, in the order given.
  std::optional<DecodedLoop> decode_blocks(const std::vector<uint32_t>& blocks,
                                           const FunctionStructure& function,
                                           std::string& error) const {
    DecodedLoop result;
    for (uint32_t block_index : blocks) {
      const BasicBlock& block = function.blocks[block_index];
      const CodeSection* section = nullptr;
      for (const CodeSection& candidate : code_sections)
        if (block.start >= candidate.address &&
            block.end <= candidate.address + candidate.bytes.size())
          section = &candidate;
      if (section == nullptr) {
        error = "the loop's bytes are in no code section";
        return std::nullopt;
      }
      uint64_t address = block.start;
      while (address < block.end) {
        llvm::MCInst inst;
        uint64_t size = 0;
        const auto bytes = section->bytes.slice(address - section->address, block.end - address);
        if (disassembler->getInstruction(inst, size, bytes, address, llvm::nulls()) !=
                llvm::MCDisassembler::Success ||
            size == 0) {
          error = "undecodable instruction in the loop";
          return std::nullopt;
        }
        std::string text;
        llvm::raw_string_ostream out(text);
        // X86's printer adds a branch's displacement to the address it is
        // given, which must be the next instruction's for the right target.
        printer->printInst(&inst, address + size, "", *subtarget, out);
        out.flush();
        const size_t first = text.find_first_not_of(" \t");
        text = first == std::string::npos ? std::string() : text.substr(first);
        std::replace(text.begin(), text.end(), '\t', ' ');
        result.text.push_back(text);
        result.instructions.push_back(inst);
        result.addresses.push_back(address);
        address += size;
      }
    }
    return result;
  }

  // The first operand of the instruction's memory reference (X86's five:
  // base, scale, index, displacement, segment), or -1.
  int memory_operand(const llvm::MCInst& inst) const {
    const llvm::MCInstrDesc& desc = instr_info->get(inst.getOpcode());
    for (unsigned i = 0; i < desc.getNumOperands() && i + 4 < inst.getNumOperands(); ++i)
      if (desc.operands()[i].OperandType == llvm::MCOI::OPERAND_MEMORY) return static_cast<int>(i);
    return -1;
  }

  // How a register moves from one iteration to the next.
  struct RegisterStep {
    enum class Kind { kConstant, kLoadDependent, kUnknown } kind = Kind::kConstant;
    int64_t step = 0;  // kConstant: added per iteration (0: loop-invariant)
  };

  // The registers (widest aliases) each instruction writes, flags and the
  // instruction pointer left out.
  std::vector<unsigned> written_registers(const llvm::MCInst& inst) const {
    const llvm::MCInstrDesc& desc = instr_info->get(inst.getOpcode());
    std::vector<unsigned> written;
    for (unsigned i = 0; i < desc.getNumDefs() && i < inst.getNumOperands(); ++i)
      if (inst.getOperand(i).isReg() && inst.getOperand(i).getReg() != 0)
        written.push_back(widest_alias(inst.getOperand(i).getReg()));
    for (const llvm::MCPhysReg reg : desc.implicit_defs()) {
      const llvm::StringRef name = registers->getName(reg);
      if (name == "EFLAGS" || name == "RIP" || name == "MXCSR" || name == "FPSW") continue;
      written.push_back(widest_alias(reg));
    }
    return written;
  }

  // The registers an instruction reads (explicit and implicit uses).
  std::vector<unsigned> read_registers(const llvm::MCInst& inst) const {
    const llvm::MCInstrDesc& desc = instr_info->get(inst.getOpcode());
    std::vector<unsigned> read;
    for (unsigned i = desc.getNumDefs(); i < inst.getNumOperands(); ++i)
      if (inst.getOperand(i).isReg() && inst.getOperand(i).getReg() != 0)
        read.push_back(widest_alias(inst.getOperand(i).getReg()));
    for (const llvm::MCPhysReg reg : desc.implicit_uses()) read.push_back(widest_alias(reg));
    return read;
  }

  // Per register written in the loop, what its writes make of it: the sum
  // of constant increments (`add rax, 8`, `inc`, `lea rax, [rax + 8]`); a
  // copy or linear combination of other registers (`mov`, `movsxd`,
  // `lea rdx, [rsi + 4*rax]`) when that is its one write; a loaded value or
  // anything computed from one; else unknown.
  class RegisterSteps {
   public:
    RegisterSteps(const Backend& backend, const std::vector<llvm::MCInst>& instructions)
        : backend_(backend), instructions_(instructions) {
      for (size_t i = 0; i < instructions.size(); ++i)
        for (unsigned reg : backend.written_registers(instructions[i])) writers_[reg].push_back(i);
    }

    RegisterStep of(unsigned reg) {
      if (reg == 0) return {};
      reg = backend_.widest_alias(reg);
      const auto writers = writers_.find(reg);
      if (writers == writers_.end()) return {};  // loop-invariant
      if (const auto known = known_.find(reg); known != known_.end()) return known->second;
      if (!visiting_.insert(reg).second) return {RegisterStep::Kind::kUnknown, 0};
      const RegisterStep step = classify(reg, writers->second);
      visiting_.erase(reg);
      known_[reg] = step;
      return step;
    }

   private:
    RegisterStep classify(unsigned reg, const std::vector<size_t>& writers) {
      int64_t increments = 0;
      bool only_increments = true;
      for (size_t index : writers) {
        const llvm::MCInst& inst = instructions_[index];
        if (backend_.instr_info->get(inst.getOpcode()).mayLoad())
          return {RegisterStep::Kind::kLoadDependent, 0};
        const std::optional<int64_t> delta = increment(reg, inst);
        if (delta)
          increments += *delta;
        else
          only_increments = false;
      }
      if (only_increments) return {RegisterStep::Kind::kConstant, increments};
      if (writers.size() == 1)
        if (const std::optional<RegisterStep> derived = combination(instructions_[writers[0]]))
          return *derived;
      // Anything else: load-dependent if a read register is.
      for (size_t index : writers)
        for (unsigned read : backend_.read_registers(instructions_[index]))
          if (read != reg && of(read).kind == RegisterStep::Kind::kLoadDependent)
            return {RegisterStep::Kind::kLoadDependent, 0};
      return {RegisterStep::Kind::kUnknown, 0};
    }

    // `reg += constant`, or nullopt.
    std::optional<int64_t> increment(unsigned reg, const llvm::MCInst& inst) const {
      const std::string name = backend_.instr_info->getName(inst.getOpcode()).str();
      auto is_reg = [&](unsigned i) {
        return i < inst.getNumOperands() && inst.getOperand(i).isReg() &&
               backend_.widest_alias(inst.getOperand(i).getReg()) == reg;
      };
      auto last_immediate = [&]() -> std::optional<int64_t> {
        for (unsigned i = inst.getNumOperands(); i-- > 0;)
          if (inst.getOperand(i).isImm()) return inst.getOperand(i).getImm();
        return std::nullopt;
      };
      const bool add = starts_with(name, "ADD"), sub = starts_with(name, "SUB");
      if ((add || sub) && name.find("ri") != std::string::npos && is_reg(0) && is_reg(1)) {
        const std::optional<int64_t> value = last_immediate();
        if (value) return add ? *value : -*value;
      }
      // The accumulator forms (`add rax, 0x1000` encoded as ADD64i32): the
      // register is implicit.
      static const std::regex accumulator_form("(ADD|SUB)(8|16|32|64)i(8|16|32)");
      if ((add || sub) && std::regex_match(name, accumulator_form)) {
        const llvm::MCInstrDesc& desc = backend_.instr_info->get(inst.getOpcode());
        const std::optional<int64_t> value = last_immediate();
        if (value && !desc.implicit_defs().empty() &&
            backend_.widest_alias(desc.implicit_defs()[0]) == reg)
          return add ? *value : -*value;
      }
      if ((starts_with(name, "INC") || starts_with(name, "DEC")) && ends_with(name, "r") &&
          is_reg(0))
        return starts_with(name, "INC") ? 1 : -1;
      if (starts_with(name, "LEA") && is_reg(0) && inst.getNumOperands() >= 6 &&
          inst.getOperand(4).isImm()) {
        const unsigned base = inst.getOperand(1).getReg(), index = inst.getOperand(3).getReg();
        const bool base_is_reg = base != 0 && backend_.widest_alias(base) == reg;
        const bool index_is_reg = index != 0 && backend_.widest_alias(index) == reg;
        if ((base_is_reg && index == 0) ||
            (index_is_reg && base == 0 && inst.getOperand(2).getImm() == 1))
          return inst.getOperand(4).getImm();
      }
      return std::nullopt;
    }

    // A copy (`mov`, `movsxd`) or linear combination (`lea`) of registers:
    // its step from theirs; nullopt for anything else.
    std::optional<RegisterStep> combination(const llvm::MCInst& inst) {
      const std::string name = backend_.instr_info->getName(inst.getOpcode()).str();
      auto combine = [&](unsigned a, int64_t scale_a, unsigned b, int64_t scale_b) {
        const RegisterStep first = of(a), second = of(b);
        if (first.kind == RegisterStep::Kind::kLoadDependent ||
            second.kind == RegisterStep::Kind::kLoadDependent)
          return RegisterStep{RegisterStep::Kind::kLoadDependent, 0};
        if (first.kind == RegisterStep::Kind::kUnknown ||
            second.kind == RegisterStep::Kind::kUnknown)
          return RegisterStep{RegisterStep::Kind::kUnknown, 0};
        return RegisterStep{RegisterStep::Kind::kConstant,
                            scale_a * first.step + scale_b * second.step};
      };
      const bool copy = name == "MOV64rr" || name == "MOV32rr" || name == "MOVSX64rr32" ||
                        name == "MOVSX64rr16" || name == "MOVSX32rr16" || name == "MOVZX32rr16";
      if (copy && inst.getNumOperands() == 2 && inst.getOperand(1).isReg())
        return combine(inst.getOperand(1).getReg(), 1, 0, 0);
      if (starts_with(name, "LEA") && inst.getNumOperands() >= 6 && inst.getOperand(2).isImm())
        return combine(inst.getOperand(1).getReg(), 1, inst.getOperand(3).getReg(),
                       inst.getOperand(2).getImm());
      return std::nullopt;
    }

    const Backend& backend_;
    const std::vector<llvm::MCInst>& instructions_;
    std::unordered_map<unsigned, std::vector<size_t>> writers_;
    std::unordered_map<unsigned, RegisterStep> known_;
    std::set<unsigned> visiting_;
  };

  // The bytes of a memory operand, from the printed size ("qword ptr"); 0
  // when the text names none.
  static uint32_t operand_bytes(const std::string& text) {
    static const std::pair<const char*, uint32_t> sizes[] = {
        {"zmmword ptr", 64}, {"ymmword ptr", 32}, {"xmmword ptr", 16}, {"tbyte ptr", 10},
        {"qword ptr", 8},    {"dword ptr", 4},    {"word ptr", 2},     {"byte ptr", 1}};
    for (const auto& [word, bytes] : sizes)
      if (text.find(word) != std::string::npos) return bytes;
    return 0;
  }

  std::vector<MemoryAccess> memory_accesses(const DecodedLoop& decoded) const {
    RegisterSteps steps(*this, decoded.instructions);
    std::vector<MemoryAccess> accesses;
    for (size_t i = 0; i < decoded.instructions.size(); ++i) {
      const llvm::MCInst& inst = decoded.instructions[i];
      const llvm::MCInstrDesc& desc = instr_info->get(inst.getOpcode());
      if (!desc.mayLoad() && !desc.mayStore()) continue;
      MemoryAccess access;
      access.instruction = static_cast<uint32_t>(i);
      access.bytes = operand_bytes(decoded.text[i]);
      const int memory = memory_operand(inst);
      if (memory >= 0) {
        const unsigned m = static_cast<unsigned>(memory);
        const unsigned base = inst.getOperand(m).getReg();
        const int64_t scale = inst.getOperand(m + 1).getImm();
        const unsigned index = inst.getOperand(m + 2).getReg();
        if (inst.getOperand(m + 3).isImm()) access.displacement = inst.getOperand(m + 3).getImm();
        if (base != 0) access.address = lower(registers->getName(base));
        if (index != 0)
          access.address += (access.address.empty() ? "" : " + ") +
                            (scale == 1 ? "" : std::to_string(scale) + "*") +
                            lower(registers->getName(index));
        if (access.address.empty()) access.address = "absolute";
        // A gather's vector of indices (VSIB addressing).
        const llvm::StringRef index_name = index != 0 ? registers->getName(index) : "";
        const bool vector_index = index_name.starts_with("XMM") || index_name.starts_with("YMM") ||
                                  index_name.starts_with("ZMM");
        const RegisterStep base_step = steps.of(base), index_step = steps.of(index);
        if (vector_index || base_step.kind == RegisterStep::Kind::kLoadDependent ||
            index_step.kind == RegisterStep::Kind::kLoadDependent) {
          access.pattern = AccessPattern::kIrregular;
        } else if (base_step.kind == RegisterStep::Kind::kUnknown ||
                   index_step.kind == RegisterStep::Kind::kUnknown) {
          access.pattern = AccessPattern::kUnknownStride;
        } else {
          access.pattern = AccessPattern::kStrided;
          access.stride = base_step.step + scale * index_step.step;
        }
      }
      // A read-modify-write instruction is a load and a store.
      if (desc.mayLoad()) accesses.push_back(access);
      if (desc.mayStore()) {
        access.store = true;
        accesses.push_back(access);
      }
    }
    return accesses;
  }

  // The register every alias of `reg` is tracked as (RAX for EAX, ZMM0 for XMM0).
  unsigned widest_alias(unsigned reg) const {
    unsigned widest = reg;
    for (llvm::MCSuperRegIterator super(reg, registers.get()); super.isValid(); ++super)
      if (llvm::MCSuperRegIterator(*super, registers.get()).isValid() == false) widest = *super;
    return widest;
  }

  // The longest loop-carried register dependence cycle per iteration: the
  // growth of the longest latency path through many unrolled iterations
  // (resources ignored, memory dependences ignored). Latencies are the
  // writes' latencies minus the reading operand's ReadAdvance (a folded load
  // reads its register operand late), as MCA's register file does.
  void latency_bound(const std::vector<std::unique_ptr<llvm::mca::Instruction>>& sequence,
                     Simulation& simulation) const {
    struct RegisterState {
      double ready = 0;
      unsigned write_resource = 0;
      int64_t producer = -1;  // node index
    };
    const size_t n = sequence.size();
    const size_t nodes = n * kChainIterations;
    std::vector<double> finish(nodes, 0.0);
    std::vector<int64_t> predecessor(nodes, -1);
    std::unordered_map<unsigned, RegisterState> registers_state;
    std::vector<double> latest_finish(kChainIterations, 0.0);
    std::vector<int64_t> latest_node(kChainIterations, -1);
    double running_max = 0;
    int64_t running_node = -1;
    for (size_t node = 0; node < nodes; ++node) {
      const llvm::mca::Instruction& inst = *sequence[node % n];
      double start = 0;
      int64_t from = -1;
      for (const llvm::mca::ReadState& read : inst.getUses()) {
        if (read.isIndependentFromDef() || read.getRegisterID() == 0) continue;
        const auto it = registers_state.find(widest_alias(read.getRegisterID()));
        if (it == registers_state.end()) continue;
        const llvm::MCSchedClassDesc* sched_class =
            model().getSchedClassDesc(read.getDescriptor().SchedClassID);
        const int advance = cpu_subtarget->getReadAdvanceCycles(
            sched_class, read.getDescriptor().UseIndex, it->second.write_resource);
        const double ready = std::max(0.0, it->second.ready - advance);
        if (ready > start || (ready == start && from < 0 && it->second.producer >= 0)) {
          start = ready;
          from = it->second.producer;
        }
      }
      double end = start;
      for (const llvm::mca::WriteState& write : inst.getDefs()) {
        if (write.getRegisterID() == 0) continue;
        const double ready = start + write.getLatency();
        end = std::max(end, ready);
        registers_state[widest_alias(write.getRegisterID())] = {ready, write.getWriteResourceID(),
                                                                static_cast<int64_t>(node)};
      }
      finish[node] = end;
      predecessor[node] = from;
      if (end >= running_max) {
        running_max = end;
        running_node = static_cast<int64_t>(node);
      }
      if (node % n == n - 1) {
        latest_finish[node / n] = running_max;
        latest_node[node / n] = running_node;
      }
    }
    const unsigned half = kChainIterations / 2;
    simulation.latency_bound =
        (latest_finish[kChainIterations - 1] - latest_finish[half - 1]) / static_cast<double>(half);
    // The cycle: the instructions of the critical path within one
    // iteration of the middle of the run.
    std::set<uint32_t> on_chain;
    const size_t low = n * (half / 2), high = n * (half / 2 + 1);
    for (int64_t node = latest_node[kChainIterations - 1]; node >= 0; node = predecessor[node])
      if (static_cast<size_t>(node) >= low && static_cast<size_t>(node) < high)
        on_chain.insert(static_cast<uint32_t>(node % n));
    simulation.latency_chain.assign(on_chain.begin(), on_chain.end());
  }

  // MCA over `iterations` repetitions of the sequence; with `bounds`, the
  // front-end, port and dependence-chain bounds too.
  Simulation simulate(const std::vector<llvm::MCInst>& instructions,
                      unsigned iterations = kSimulatedIterations, bool bounds = true) const {
    Simulation result;
    // No instruments (llvm-mca's source comments), and llvm-mca's default
    // latency of a call.
    const llvm::mca::InstrumentManager instruments(*cpu_subtarget, *instr_info);
    constexpr unsigned kCallLatency = 100;
    llvm::mca::InstrBuilder builder(*cpu_subtarget, *instr_info, *registers, analysis.get(),
                                    instruments, kCallLatency);
    const llvm::SmallVector<llvm::mca::Instrument*> no_instruments;
    std::vector<std::unique_ptr<llvm::mca::Instruction>> sequence;
    for (const llvm::MCInst& inst : instructions) {
      auto built = builder.createInstruction(inst, no_instruments);
      if (!built) {
        result.error =
            "LLVM MCA cannot model '" + mnemonic(inst) + "': " + error_text(built.takeError());
        return result;
      }
      sequence.push_back(std::move(*built));
    }
    if (sequence.empty()) {
      result.error = "empty loop";
      return result;
    }

    if (bounds) compute_bounds(sequence, result);
    run_pipeline(sequence, iterations, result);
    return result;
  }

  // Bounds from the instructions' descriptions (what llvm-mca's summary
  // calls the block reciprocal throughput, split in its two parts) and the
  // dependence chain.
  void compute_bounds(const std::vector<std::unique_ptr<llvm::mca::Instruction>>& sequence,
                      Simulation& result) const {
    const llvm::MCSchedModel& sm = model();
    std::vector<double> resource_cycles(sm.getNumProcResourceKinds(), 0.0);
    std::map<uint64_t, unsigned> index_of_mask;
    for (unsigned i = 1; i < sm.getNumProcResourceKinds(); ++i)
      index_of_mask[resource_masks[i]] = i;
    std::vector<std::vector<double>> use_by_instruction(
        sequence.size(), std::vector<double>(resource_cycles.size()));
    for (size_t i = 0; i < sequence.size(); ++i) {
      const llvm::mca::InstrDesc& desc = sequence[i]->getDesc();
      result.micro_ops += desc.NumMicroOps;
      for (const auto& [mask, usage] : desc.Resources) {
        const auto it = index_of_mask.find(mask);
        if (it == index_of_mask.end() || usage.size() == 0) continue;
        resource_cycles[it->second] += usage.size();
        use_by_instruction[i][it->second] += usage.size();
      }
    }
    const unsigned dispatch_width = sm.IssueWidth;
    result.front_end_bound = static_cast<double>(result.micro_ops) / dispatch_width;
    for (unsigned i = 1; i < resource_cycles.size(); ++i) {
      const llvm::MCProcResourceDesc& resource = *sm.getProcResource(i);
      if (resource.NumUnits == 0) continue;
      const double bound = resource_cycles[i] / resource.NumUnits;
      if (bound > result.port_bound) {
        result.port_bound = bound;
        result.port_bound_resource = resource.Name;
        result.port_bound_resource_index = i;
      }
    }
    for (const auto& uses : use_by_instruction)
      result.bound_resource_use.push_back(uses[result.port_bound_resource_index]);
    for (const auto& inst : sequence) result.latencies.push_back(inst->getDesc().MaxLatency);

    latency_bound(sequence, result);
  }

  void run_pipeline(const std::vector<std::unique_ptr<llvm::mca::Instruction>>& sequence,
                    unsigned iterations, Simulation& result) const {
    llvm::mca::CircularSourceMgr source(sequence, iterations);
    llvm::mca::Context mca_context(*registers, *cpu_subtarget);
    // llvm-mca's defaults: the model's queue sizes and widths, no aliasing
    // between loads and stores.
    llvm::mca::PipelineOptions options(0, 0, 0, 0, 0, 0, true, false);
    llvm::mca::CustomBehaviour behaviour(*cpu_subtarget, source, *instr_info);
    auto pipeline = mca_context.createDefaultPipeline(options, source, behaviour);
    PipelineRecorder recorder(static_cast<unsigned>(sequence.size()), iterations,
                              unit_slot_of_resource, static_cast<uint32_t>(unit_names.size()));
    pipeline->addEventListener(&recorder);
    auto cycles = pipeline->run();
    if (!cycles) {
      result.error = "LLVM MCA failed: " + error_text(cycles.takeError());
      return;
    }
    result.cycles_per_iteration = recorder.steady_cycles_per_iteration();
    for (double total : recorder.unit_cycles()) result.unit_cycles.push_back(total / iterations);
    uint64_t most = 0;
    for (unsigned type = 1; type < recorder.stalls().size(); ++type)
      if (recorder.stalls()[type] > most) {
        most = recorder.stalls()[type];
        result.most_frequent_stall = stall_name(type);
      }
    result.ok = true;
  }

  // The loop run `trip_count_of(header)` iterations per entry: the
  // enclosing loop's iteration, its own blocks with the body of this loop
  // and of every sibling with a trip count repeated that many times;
  // nullopt when the enclosing loop's own blocks or a sibling cannot be
  // simulated (a call, an instruction MCA cannot build).
  template <class TripCountOf>
  std::optional<TripCountEstimate> with_trip_count(const FunctionStructure& function,
                                                   const Loop& loop,
                                                   TripCountOf&& trip_count_of) const {
    const Loop& parent = function.loops[static_cast<size_t>(loop.parent)];
    // The enclosing loop's own blocks: those of no loop nested in it. The
    // inner loops simulated: its innermost children with a trip count.
    std::set<uint32_t> nested;
    std::vector<bool> has_child(function.loops.size(), false);
    for (const Loop& other : function.loops)
      if (other.parent >= 0) has_child[static_cast<size_t>(other.parent)] = true;
    std::vector<const Loop*> inner;
    for (const Loop& other : function.loops)
      for (int32_t up = other.parent; up >= 0; up = function.loops[static_cast<size_t>(up)].parent)
        if (static_cast<uint32_t>(up) == parent.index) {
          nested.insert(other.blocks.begin(), other.blocks.end());
          if (other.parent == static_cast<int32_t>(parent.index) && !has_child[other.index] &&
              trip_count_of(other.header) > 0)
            inner.push_back(&other);
          break;
        }
    std::vector<uint32_t> own;
    for (uint32_t block : parent.blocks)
      if (!nested.count(block)) own.push_back(block);
    std::sort(own.begin(), own.end(), [&](uint32_t x, uint32_t y) {
      return function.blocks[x].start < function.blocks[y].start;
    });
    std::sort(inner.begin(), inner.end(),
              [](const Loop* x, const Loop* y) { return x->header < y->header; });

    TripCountEstimate estimate;
    estimate.trip_count = trip_count_of(loop.header);
    estimate.inner_loops = static_cast<uint32_t>(inner.size());
    // In address order: each inner loop's copies at its header's place.
    std::vector<llvm::MCInst> sequence;
    uint64_t iterations_per_entry = 0, inner_instructions = 0;
    size_t next_block = 0;
    std::string error;
    auto own_blocks_before = [&](uint64_t address) -> bool {
      std::vector<uint32_t> blocks;
      for (; next_block < own.size() && function.blocks[own[next_block]].start < address;
           ++next_block)
        blocks.push_back(own[next_block]);
      const std::optional<DecodedLoop> decoded = decode_blocks(blocks, function, error);
      if (!decoded) return false;
      for (const llvm::MCInst& inst : decoded->instructions)
        if (instr_info->get(inst.getOpcode()).isCall()) return false;
      estimate.enclosing_instructions += static_cast<uint32_t>(decoded->instructions.size());
      sequence.insert(sequence.end(), decoded->instructions.begin(), decoded->instructions.end());
      return true;
    };
    std::vector<std::pair<std::vector<llvm::MCInst>, uint32_t>> bodies;
    for (const Loop* other : inner) {
      if (!own_blocks_before(other->header)) return std::nullopt;
      const std::optional<DecodedLoop> body = decode(*other, function, error);
      if (!body) return std::nullopt;
      const uint32_t count = trip_count_of(other->header);
      iterations_per_entry += count;
      inner_instructions += static_cast<uint64_t>(count) * body->instructions.size();
      if (inner_instructions > kMaxTripCountInstructions) {
        // An entry far outlasts the window: the caller keeps the endless figure.
        if (!own_blocks_before(UINT64_MAX)) return std::nullopt;
        return estimate;
      }
      for (uint32_t i = 0; i < count; ++i)
        sequence.insert(sequence.end(), body->instructions.begin(), body->instructions.end());
    }
    if (!own_blocks_before(UINT64_MAX) || iterations_per_entry == 0) return std::nullopt;
    // About 400,000 simulated instructions, at least 8 iterations of the
    // enclosing loop (the steady state is their second half).
    const unsigned iterations = static_cast<unsigned>(
        std::clamp<size_t>(400000 / sequence.size() / 2 * 2, 8, kSimulatedIterations));
    const Simulation simulation = simulate(sequence, iterations, false);
    if (!simulation.ok) return std::nullopt;
    estimate.simulated = true;
    estimate.cycles_per_iteration =
        simulation.cycles_per_iteration / static_cast<double>(iterations_per_entry);
    return estimate;
  }

  // The opcode of the packed form at the CPU's width, or 0.
  unsigned packed_opcode(const FpOpcode& fp) const {
    std::string form = fp.form;
    for (std::string_view suffix : {"_Int", "_alt"})
      if (ends_with(form, suffix)) form.resize(form.size() - suffix.size());
    std::string base = fp.scalar_move ? "MOVUP" : fp.base;
    const std::string type = fp.scalar_move ? (fp.element_bits == 64 ? "D" : "S")
                                            : (fp.element_bits == 64 ? "PD" : "PS");
    const bool vex = vector_width > 128 || fp.vex_or_evex;
    const std::string width = vector_width == 512 ? "Z" : vector_width == 256 ? "Y" : "";
    const std::string name = (vex ? "V" : "") + base + type + width + form;
    const auto it = opcode_by_name.find(name);
    return it == opcode_by_name.end() ? 0 : it->second;
  }

  // The cycles the model's ports spend on one `divsd xmm0, xmm1` (its
  // divider occupancy: every x86 core takes 4 or more); 0 if the model
  // cannot build it.
  double scalar_divide_port_cycles() const {
    const auto opcode = opcode_by_name.find("DIVSDrr");
    const auto xmm0 = register_by_name.find("XMM0"), xmm1 = register_by_name.find("XMM1");
    if (opcode == opcode_by_name.end() || xmm0 == register_by_name.end() ||
        xmm1 == register_by_name.end())
      return 0;
    llvm::MCInst divide;
    divide.setOpcode(opcode->second);
    const unsigned operands = instr_info->get(opcode->second).getNumOperands();
    for (unsigned i = 0; i < operands; ++i)
      divide.addOperand(
          llvm::MCOperand::createReg(i + 1 == operands ? xmm1->second : xmm0->second));
    const Simulation simulation = simulate({divide}, 16);
    return simulation.ok ? simulation.port_bound : 0;
  }

  unsigned widened_register(unsigned reg) const {
    const std::string name = registers->getName(reg);
    if (!starts_with(name, "XMM") || vector_width == 128) return reg;
    const auto it = register_by_name.find((vector_width == 512 ? "Z" : "Y") + name.substr(1));
    return it == register_by_name.end() ? reg : it->second;
  }

  void project(const DecodedLoop& decoded, LoopPerformance& loop) const {
    VectorizationProjection& projection = loop.projection;
    std::vector<llvm::MCInst> projected;
    uint32_t element_bits = 0;
    for (const llvm::MCInst& inst : decoded.instructions) {
      const FpOpcode fp = parse_fp_opcode(instr_info->getName(inst.getOpcode()));
      if (fp.element_bits == 0 || fp.packed) {
        projected.push_back(inst);
        continue;
      }
      const unsigned opcode = packed_opcode(fp);
      // Only when the packed form takes the same operands (register-register
      // scalar moves merge two registers and have no packed twin).
      if (opcode == 0 || instr_info->get(opcode).getNumOperands() != inst.getNumOperands()) {
        ++projection.kept_scalar_instructions;
        projected.push_back(inst);
        continue;
      }
      llvm::MCInst packed = inst;
      packed.setOpcode(opcode);
      for (llvm::MCOperand& operand : packed)
        if (operand.isReg() && operand.getReg() != 0)
          operand.setReg(widened_register(operand.getReg()));
      projected.push_back(packed);
      ++projection.replaced_instructions;
      element_bits = std::max(element_bits, fp.element_bits);
    }
    if (projection.replaced_instructions == 0) {
      projection.reason = projection.kept_scalar_instructions > 0
                              ? "no scalar FP instruction has a packed form weft knows"
                              : "no scalar FP instruction";
      return;
    }
    const Simulation simulation = simulate(projected);
    if (!simulation.ok) {
      projection.reason = simulation.error;
      return;
    }
    // With mixed precisions, the wider element (fewer per vector) is the
    // conservative factor.
    projection.elements_per_vector = vector_width / element_bits;
    projection.cycles_per_iteration = simulation.cycles_per_iteration;
    projection.cycles_per_source_iteration =
        simulation.cycles_per_iteration / projection.elements_per_vector;
    projection.speedup = projection.cycles_per_source_iteration > 0
                             ? loop.cycles_per_iteration / projection.cycles_per_source_iteration
                             : 0;
    projection.projected = true;
  }
};

LoopPerformanceAnalyzer::LoopPerformanceAnalyzer(const std::string& elf_path,
                                                 const std::string& cpu)
    : backend_(std::make_unique<Backend>()) {
  Backend& b = *backend_;
  b.path = elf_path;
  if (std::string error; !b.initialize(error))
    throw LoopPerformanceError("LLVM's x86-64 target is incomplete: " + error);

  cpu_.host = cpu.empty();
  cpu_.llvm_version = LLVM_VERSION_MAJOR;
  cpu_.name = cpu.empty() ? llvm::sys::getHostCPUName().str() : cpu;
  // Checked first: LLVM only warns on stderr about a CPU it does not know.
  if (!b.subtarget->isCPUStringValid(cpu_.name))
    throw LoopPerformanceError("unknown CPU '" + cpu_.name + "' for LLVM " + kLlvmMajor +
                               " (`llvm-mca-" + kLlvmMajor +
                               " -mcpu=help` lists the names it knows)");
  b.cpu_subtarget.reset(b.target->createMCSubtargetInfo(kX86Triple, cpu_.name, ""));
  if (!b.cpu_subtarget || !b.cpu_subtarget->getSchedModel().hasInstrSchedModel())
    throw LoopPerformanceError("LLVM " + kLlvmMajor + " has no scheduling model for CPU '" +
                               cpu_.name + "'");

  // Syntax variant 1: Intel.
  b.printer.reset(b.target->createMCInstPrinter(llvm::Triple(kX86Triple), 1, *b.asm_info,
                                                *b.instr_info, *b.registers));
  if (!b.printer) throw LoopPerformanceError("LLVM's x86-64 instruction printer is missing");
  b.printer->setPrintBranchImmAsAddress(true);
  b.printer->setPrintImmHex(true);

  for (unsigned opcode = 0; opcode < b.instr_info->getNumOpcodes(); ++opcode)
    b.opcode_by_name.emplace(b.instr_info->getName(opcode).str(), opcode);
  for (unsigned reg = 1; reg < b.registers->getNumRegs(); ++reg)
    b.register_by_name.emplace(b.registers->getName(reg), reg);

  b.vector_width = b.cpu_subtarget->checkFeatures("+avx512f") ? 512
                   : b.cpu_subtarget->checkFeatures("+avx")   ? 256
                                                              : 128;
  const llvm::MCSchedModel& sm = b.cpu_subtarget->getSchedModel();
  b.resource_masks.assign(sm.getNumProcResourceKinds(), 0);
  llvm::mca::computeProcResourceMasks(sm, b.resource_masks);
  // One slot per unit of every resource that is not a group (as the
  // execute stage reports them).
  b.unit_slot_of_resource.assign(sm.getNumProcResourceKinds(), UINT32_MAX);
  for (unsigned i = 1; i < sm.getNumProcResourceKinds(); ++i) {
    const llvm::MCProcResourceDesc& resource = *sm.getProcResource(i);
    if (resource.SubUnitsIdxBegin != nullptr || resource.NumUnits == 0) continue;
    b.unit_slot_of_resource[i] = static_cast<uint32_t>(b.unit_names.size());
    for (unsigned unit = 0; unit < resource.NumUnits; ++unit)
      b.unit_names.push_back(resource.NumUnits == 1
                                 ? std::string(resource.Name)
                                 : std::string(resource.Name) + "." + std::to_string(unit));
  }
  cpu_.vector_width_bits = b.vector_width;
  cpu_.dispatch_width = sm.IssueWidth;
  cpu_.ports = b.unit_names;
  // LLVM's tables are not always the core's: LLVM 19's sapphirerapids and
  // alderlake tables give the FP divider no occupancy, so every division
  // loop comes out too fast and never divider-bound.
  if (const double divide = b.scalar_divide_port_cycles(); divide > 0 && divide < 2.0) {
    b.divider_unmodeled = true;
    char cycles[32];
    snprintf(cycles, sizeof cycles, "%.2f", divide);
    cpu_.caveats.push_back(
        "LLVM " + kLlvmMajor + "'s " + cpu_.name + " tables have no FP divider (a divsd takes " +
        cycles +
        " cycles of port time; x86 cores keep the divider busy 4 or more): loops that divide "
        "are predicted too fast and never divider-bound; a model with a divider "
        "(`--cpu icelake-server` for Intel cores since Ice Lake) predicts them");
  }

  auto binary = llvm::object::createBinary(elf_path);
  if (!binary) throw LoopPerformanceError(elf_path + ": " + error_text(binary.takeError()));
  b.binary = std::move(*binary);
  const auto* object = llvm::dyn_cast<llvm::object::ELFObjectFileBase>(b.binary.getBinary());
  if (object == nullptr) throw LoopPerformanceError(elf_path + " is not an ELF file");
  for (const llvm::object::SectionRef& section : object->sections()) {
    if (!section.isText() || section.getSize() == 0) continue;
    auto contents = section.getContents();
    if (!contents) {
      llvm::consumeError(contents.takeError());
      continue;
    }
    b.code_sections.push_back({section.getAddress(), llvm::arrayRefFromStringRef(*contents)});
  }
}

LoopPerformanceAnalyzer::~LoopPerformanceAnalyzer() = default;

std::vector<LoopPerformance> LoopPerformanceAnalyzer::analyze(const FunctionStructure& function) {
  std::vector<bool> has_child(function.loops.size(), false);
  for (const Loop& loop : function.loops)
    if (loop.parent >= 0) has_child[static_cast<size_t>(loop.parent)] = true;
  std::vector<const Loop*> innermost;
  for (const Loop& loop : function.loops)
    if (!has_child[loop.index]) innermost.push_back(&loop);
  std::sort(innermost.begin(), innermost.end(),
            [](const Loop* a, const Loop* b) { return a->header < b->header; });
  std::vector<LoopPerformance> result;
  for (const Loop* loop : innermost) result.push_back(analyze_loop(function, *loop));
  return result;
}

// An integer dependence chain that only ties the port or front-end bound
// is the loop counter (`inc rax`, 1 cycle per iteration): it limits
// nothing the other bound does not, and "break the chain" would be the
// wrong advice. The tie rule prefers the chain only when it carries FP work.
template <class FpOf>
bool only_ties_with_integer_chain(const LoopPerformance& result, const std::vector<uint32_t>& chain,
                                  FpOf&& fp_of) {
  for (uint32_t index : chain)
    if (fp_of(index).arithmetic) return false;
  const double other = std::max(result.port_bound, result.front_end_bound);
  return result.latency_bound <= other + 1e-9;
}

LoopPerformance LoopPerformanceAnalyzer::analyze_loop(const FunctionStructure& function,
                                                      const Loop& loop) {
  const Backend& b = *backend_;
  LoopPerformance result;
  result.function = function.name;
  result.function_start = function.start;
  result.loop_index = loop.index;
  result.header = loop.header;
  result.ranges = loop.ranges;
  result.blocks = static_cast<uint32_t>(loop.blocks.size());
  result.file = loop.file;
  result.first_line = loop.first_line;
  result.last_line = loop.last_line;
  if (loop.parent >= 0)
    result.enclosing_loop_header = function.loops[static_cast<size_t>(loop.parent)].header;
  const std::set<uint32_t> in_loop(loop.blocks.begin(), loop.blocks.end());
  for (uint32_t block : loop.blocks) {
    uint32_t successors_in_loop = 0;
    for (uint32_t successor : function.blocks[block].successors)
      successors_in_loop += in_loop.count(successor) ? 1 : 0;
    if (successors_in_loop > 1) result.several_paths = true;
  }

  std::string error;
  const std::optional<DecodedLoop> decoded = b.decode(loop, function, error);
  if (!decoded) {
    result.not_modeled_reason = error;
    return result;
  }
  result.instructions = decoded->text;
  result.instruction_addresses = decoded->addresses;
  result.memory_accesses = b.memory_accesses(*decoded);

  // Mix and vectorization.
  for (const llvm::MCInst& inst : decoded->instructions) {
    const llvm::MCInstrDesc& desc = b.instr_info->get(inst.getOpcode());
    const FpOpcode fp = parse_fp_opcode(b.instr_info->getName(inst.getOpcode()));
    const uint32_t register_bits = b.vector_register_bits(inst);
    ++result.mix.instructions;
    const bool loads = desc.mayLoad(), stores = desc.mayStore();
    result.mix.loads += loads;
    result.mix.stores += stores;
    if (fp.arithmetic) {
      switch (*fp.arithmetic) {
        case FpKind::kAddSub:
          ++result.mix.fp_add_sub;
          break;
        case FpKind::kMul:
          ++result.mix.fp_mul;
          break;
        case FpKind::kFma:
          ++result.mix.fp_fma;
          break;
        case FpKind::kDiv:
          ++result.mix.fp_div;
          break;
        default:
          break;
      }
    } else if (!loads && !stores) {
      ++result.mix.other;
    }
    // Vector-register work: the arithmetic kinds, and the SSE/AVX loads and
    // stores (which move FP data; integer vector moves count too).
    if (register_bits == 0) continue;
    const bool scalar = fp.element_bits != 0 ? !fp.packed : b.scalar_memory_access(inst, fp);
    if (!loads && !stores && !fp.arithmetic) continue;
    result.vector_width_used = std::max(result.vector_width_used, scalar ? 0u : register_bits);
    auto count = [&](FpKind kind) {
      VectorizationCounts& counts = result.vectorization[static_cast<size_t>(kind)];
      if (scalar)
        ++counts.scalar;
      else if (register_bits >= b.vector_width)
        ++counts.full_width;
      else
        ++counts.below_width;
    };
    if (loads) count(FpKind::kLoad);
    if (stores) count(FpKind::kStore);
    if (fp.arithmetic) count(*fp.arithmetic);
  }

  // MCA models a call as an instruction of 100 cycles' latency (and warns
  // on stderr): the callee is unknown, so the loop is not simulated.
  for (size_t i = 0; i < decoded->instructions.size(); ++i)
    if (b.instr_info->get(decoded->instructions[i].getOpcode()).isCall()) {
      result.not_modeled_reason =
          "the loop calls a function (" + decoded->text[i] + "), which LLVM MCA cannot model";
      return result;
    }
  const Simulation simulation = b.simulate(decoded->instructions);
  if (!simulation.ok) {
    result.not_modeled_reason = simulation.error;
    return result;
  }
  result.modeled = true;
  result.micro_ops = simulation.micro_ops;
  result.cycles_per_iteration = simulation.cycles_per_iteration;
  result.front_end_bound = simulation.front_end_bound;
  result.port_bound = simulation.port_bound;
  result.port_bound_resource = simulation.port_bound_resource;
  result.latency_bound = simulation.latency_bound;
  for (uint32_t index : simulation.latency_chain)
    result.latency_chain.push_back(decoded->text[index]);
  for (size_t slot = 0; slot < b.unit_names.size(); ++slot)
    result.port_pressure.push_back({b.unit_names[slot], simulation.unit_cycles[slot]});

  // The bottleneck: the out-of-order window when the simulation exceeds
  // every bound by over 10% (none of them explains it); else the largest
  // bound, on a tie the dependence chain, then the port.
  LoopBottleneck& bottleneck = result.bottleneck;
  auto fp_of = [&](size_t index) {
    return parse_fp_opcode(b.instr_info->getName(decoded->instructions[index].getOpcode()));
  };
  const double largest_bound =
      std::max({result.latency_bound, result.port_bound, result.front_end_bound});
  if (result.cycles_per_iteration > 1.1 * largest_bound) {
    bottleneck.kind = BottleneckKind::kWindow;
    bottleneck.stall = simulation.most_frequent_stall;
    const size_t slowest = static_cast<size_t>(
        std::max_element(simulation.latencies.begin(), simulation.latencies.end()) -
        simulation.latencies.begin());
    const std::string slowest_mnemonic = b.mnemonic(decoded->instructions[slowest]);
    const std::string stall =
        bottleneck.stall.empty() ? std::string("no stall recorded") : bottleneck.stall;
    // Only a long latency explains a full window; without one the queues
    // fill with memory operations (a store loop backing up), and naming a
    // 1-cycle move as the culprit would send the reader the wrong way.
    constexpr unsigned kLongLatency = 10;
    if (simulation.latencies[slowest] >= kLongLatency) {
      bottleneck.description = "out-of-order window (" + stall +
                               "): few iterations overlap behind " + slowest_mnemonic +
                               " (latency " + std::to_string(simulation.latencies[slowest]) + ")";
      const bool divides = slowest_mnemonic.find("div") != std::string::npos ||
                           slowest_mnemonic.find("sqrt") != std::string::npos;
      bottleneck.hint =
          "long-latency " + slowest_mnemonic + " in every iteration: " +
          (divides ? std::string("take it out of the loop or replace it (e.g. multiply by the "
                                 "reciprocal of a loop invariant)")
                   : std::string("give the window independent work to overlap (unroll, "
                                 "several accumulators), or take it out of the loop"));
    } else {
      bottleneck.description = "out-of-order window (" + stall +
                               "): the queues fill with no long-latency instruction, more "
                               "cycles than every bound";
      bottleneck.hint =
          "memory operations back up in the core's queues: fewer or wider loads and stores";
    }
  } else if (result.latency_bound >= result.port_bound &&
             result.latency_bound >= result.front_end_bound &&
             !only_ties_with_integer_chain(result, simulation.latency_chain, fp_of)) {
    bottleneck.kind = BottleneckKind::kDependenceChain;
    std::optional<FpKind> chain_kind;
    for (uint32_t index : simulation.latency_chain)
      if (const auto kind = fp_of(index).arithmetic; kind && (!chain_kind || *kind > *chain_kind))
        chain_kind = kind;
    const char* what = !chain_kind                      ? "integer"
                       : *chain_kind == FpKind::kAddSub ? "FP add"
                       : *chain_kind == FpKind::kDiv    ? "FP divide"
                                                        : "FP multiply/FMA";
    bottleneck.description =
        std::string("loop-carried ") + what + " dependence chain (" +
        std::to_string(result.latency_chain.size()) +
        (result.latency_chain.size() == 1 ? " instruction)" : " instructions)");
    if (!chain_kind)
      bottleneck.hint = "loop-carried integer chain: break it (independent iterations)";
    else if (*chain_kind == FpKind::kDiv)
      bottleneck.hint = "loop-carried FP divide chain: multiply by the reciprocal";
    else
      bottleneck.hint = std::string("loop-carried ") + what +
                        " chain: use several accumulators or -ffast-math reduction";
  } else if (result.port_bound >= result.front_end_bound) {
    bottleneck.kind = BottleneckKind::kPort;
    bottleneck.port = result.port_bound_resource;
    // What uses the port most names the fix.
    size_t top = 0;
    for (size_t i = 1; i < simulation.bound_resource_use.size(); ++i)
      if (simulation.bound_resource_use[i] > simulation.bound_resource_use[top]) top = i;
    const FpOpcode fp = fp_of(top);
    const llvm::MCInstrDesc& desc = b.instr_info->get(decoded->instructions[top].getOpcode());
    bottleneck.description =
        "execution port " + bottleneck.port + " (" + b.mnemonic(decoded->instructions[top]) + ")";
    const std::string top_mnemonic = b.mnemonic(decoded->instructions[top]);
    if (fp.arithmetic == FpKind::kDiv)
      bottleneck.hint = "divider bound: multiply by the reciprocal";
    else if (top_mnemonic == "div" || top_mnemonic == "idiv")
      bottleneck.hint =
          "integer divider bound: strength-reduce the division (a multiply by a precomputed "
          "reciprocal, or an update per iteration)";
    else if (fp.arithmetic && !fp.packed)
      bottleneck.hint = "FP port bound, scalar FP: vectorize";
    else if (fp.arithmetic)
      bottleneck.hint = "FP port bound: fewer FP operations per element (reuse results)";
    else if (desc.mayLoad())
      bottleneck.hint = "load ports bound: fewer loads (keep values in registers, wider loads)";
    else if (desc.mayStore())
      bottleneck.hint = "store port bound: fewer stores (wider stores, fuse loops)";
    else
      bottleneck.hint = "integer/address work bounds the loop: simplify indexing, unroll";
  } else {
    bottleneck.kind = BottleneckKind::kFrontEnd;
    bottleneck.description = "front end: " + std::to_string(result.micro_ops) + " micro-ops at " +
                             std::to_string(b.model().IssueWidth) + " per cycle";
    bottleneck.hint = "front-end bound: fewer instructions per element (vectorize, unroll)";
  }
  result.hints.push_back(bottleneck.hint);
  uint32_t scalar_fp = 0, packed_fp = 0, below_fp = 0;
  for (FpKind kind : {FpKind::kAddSub, FpKind::kMul, FpKind::kFma, FpKind::kDiv}) {
    scalar_fp += result.counts(kind).scalar;
    packed_fp += result.counts(kind).full_width + result.counts(kind).below_width;
    below_fp += result.counts(kind).below_width;
  }
  if (scalar_fp > 0)
    result.hints.push_back(packed_fp == 0 ? "scalar FP: not vectorized"
                                          : "scalar FP: partly vectorized");
  if (b.divider_unmodeled && result.mix.fp_div > 0)
    result.hints.push_back(
        "the model has no FP divider (model caveat): this loop's divisions take longer than "
        "predicted");
  if (below_fp > 0)
    result.hints.push_back(
        "packed FP below the CPU's width (" + std::to_string(result.vector_width_used) + " of " +
        std::to_string(b.vector_width) + " bits): compile for the CPU (-march=native)");

  b.project(*decoded, result);
  if (trip_count_of(loop.header) > 0 && loop.parent >= 0)
    if ((result.with_trip_count = b.with_trip_count(
             function, loop, [&](uint64_t header) { return trip_count_of(header); })) &&
        !result.with_trip_count->simulated)
      result.with_trip_count->cycles_per_iteration = result.cycles_per_iteration;
  return result;
}

}  // namespace weft
