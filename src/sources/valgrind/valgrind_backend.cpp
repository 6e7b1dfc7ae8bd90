#include "sources/valgrind/valgrind_backend.h"

#include <elf.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "common/child_process.h"
#include "common/executable_search.h"
#include "sources/valgrind/event_ring_reader.h"

extern char** environ;

namespace weft {

namespace fs = std::filesystem;

namespace {

constexpr const char* kToolName = "weft";
constexpr const char* kToolFile = "weft-amd64-linux";
// 32 blocks of 1 MiB: enough slack that the tool rarely waits for weft.
constexpr uint64_t kBlockBytes = uint64_t{1} << 20;
constexpr uint64_t kBlockCount = 32;

// The ELF checks the backend needs; non-ELF files (scripts) pass through to
// Valgrind, which runs their interpreter.
void check_binary(const std::string& program) {
  std::ifstream in(program, std::ios::binary);
  Elf64_Ehdr eh{};
  in.read(reinterpret_cast<char*>(&eh), sizeof eh);
  if (in.gcount() < EI_NIDENT || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) return;
  if (eh.e_ident[EI_CLASS] != ELFCLASS64)
    throw std::runtime_error(fmt::format(
        "unsupported binary '{}': 32-bit ELF (the valgrind backend profiles x86-64 programs)",
        program));
  if (in.gcount() < static_cast<std::streamsize>(sizeof eh) || eh.e_machine != EM_X86_64)
    throw std::runtime_error(fmt::format(
        "unsupported binary '{}': not an x86-64 program (ELF machine {})", program, eh.e_machine));
  // A static binary without a symbol table gives Valgrind nothing to
  // attribute accesses to, and no pthread or OpenMP entry points to wrap.
  bool dynamic = false, symbols = false;
  for (int i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph{};
    in.seekg(static_cast<std::streamoff>(eh.e_phoff + uint64_t(i) * eh.e_phentsize));
    in.read(reinterpret_cast<char*>(&ph), sizeof ph);
    if (in && (ph.p_type == PT_INTERP || ph.p_type == PT_DYNAMIC)) dynamic = true;
  }
  for (int i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh{};
    in.seekg(static_cast<std::streamoff>(eh.e_shoff + uint64_t(i) * eh.e_shentsize));
    in.read(reinterpret_cast<char*>(&sh), sizeof sh);
    if (in && sh.sh_type == SHT_SYMTAB) symbols = true;
  }
  if (!dynamic && !symbols)
    throw std::runtime_error(fmt::format(
        "unsupported binary '{}': statically linked without symbols (rebuild it with -g, "
        "or link it dynamically)",
        program));
}

void sleep_briefly() {
  timespec ts{0, 100 * 1000};  // 100 µs: the tool publishes 1 MiB blocks
  nanosleep(&ts, nullptr);
}

// Forwards Valgrind's log lines to stderr, through a ValgrindLogFilter.
class ValgrindLog {
 public:
  explicit ValgrindLog(int fd) : fd_(fd) {}
  ~ValgrindLog() { close(fd_); }
  void forward() {
    char chunk[4096];
    ssize_t n;
    while ((n = read(fd_, chunk, sizeof chunk)) > 0) {
      pending_.append(chunk, static_cast<size_t>(n));
      size_t end;
      while ((end = pending_.find('\n')) != std::string::npos) {
        emit(pending_.substr(0, end + 1));
        pending_.erase(0, end + 1);
      }
    }
  }
  void finish() {
    if (!pending_.empty()) emit(pending_ + "\n");
    pending_.clear();
  }
  const std::string& failure() const { return filter_.failure(); }
  bool failed_to_reraise() const { return filter_.failed_to_reraise(); }
  int terminating_signal() const { return filter_.terminating_signal(); }

 private:
  void emit(const std::string& line) {
    if (filter_.pass(line)) fputs(line.c_str(), stderr);
  }
  int fd_;
  std::string pending_;
  ValgrindLogFilter filter_;
};

std::string describe_status(int status) {
  if (WIFSIGNALED(status)) {
    const char* abbrev = sigabbrev_np(WTERMSIG(status));
    return abbrev ? fmt::format("SIG{}", abbrev) : fmt::format("signal {}", WTERMSIG(status));
  }
  return fmt::format("exit status {}", WEXITSTATUS(status));
}

std::string valgrind_tool_directory() {
  std::string dir;
  if (const char* env = getenv("WEFT_VALGRIND_LIB"); env && *env) {
    dir = env;
  } else {
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    dir = (exe.parent_path() / WEFT_VALGRIND_LIB_RELATIVE).lexically_normal().string();
  }
  if (access((dir + "/" + kToolFile).c_str(), X_OK) != 0)
    throw std::runtime_error(
        fmt::format("weft's Valgrind tool is not built: {}/{} is missing (build weft with valgrind "
                    "installed, or set WEFT_VALGRIND_LIB)",
                    dir, kToolFile));
  return dir;
}

// Valgrind's command line: weft's tool reading `program` into the ring at
// `ring_path`, Valgrind's own messages on `log_fd`.
std::vector<std::string> valgrind_arguments(const ValgrindSetup& setup,
                                            const std::vector<std::string>& command,
                                            const std::string& program, const CaptureConfig& config,
                                            const std::string& ring_path, int log_fd) {
  std::vector<std::string> args{
      setup.valgrind, "--tool=" + std::string(kToolName), "-q",
      "--log-fd=" + std::to_string(log_fd), "--weft-ring=" + ring_path,
      "--max-threads=" + std::to_string(valgrind_thread_slots(config.max_threads)),
      // Valgrind runs one thread at a time; its default lock lets the thread
      // that just released it take it again, so on a loaded machine one
      // thread can run a whole dynamic loop while the others wait, and the
      // profile shows no sharing the native run has. The ticket lock hands
      // the time slices round.
      "--fair-sched=try"};
  // The imbalance analysis counts edges between guest blocks: superblocks
  // must not follow jumps into other blocks, so that a block record starts
  // where a block of the binary (or its part after a call) does.
  if (config.analyses.has(AnalysisId::Imbalance)) {
    args.push_back("--weft-blocks=yes");
    args.push_back("--vex-guest-chase=no");
  }
  args.push_back("--");
  args.push_back(program);
  args.insert(args.end(), command.begin() + 1, command.end());
  return args;
}

// Forks valgrind with `args`; the child keeps `log_fd` across the exec.
pid_t start_valgrind(const ValgrindSetup& setup, const std::vector<std::string>& args, int log_fd) {
  const pid_t parent = getpid();
  const pid_t child = fork();
  if (child < 0) throw std::runtime_error("cannot start valgrind: fork failed");
  if (child == 0) {
    die_with_parent(parent);
    fcntl(log_fd, F_SETFD, 0);  // inherited by valgrind
    setenv("VALGRIND_LIB", setup.tool_directory.c_str(), 1);
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(setup.valgrind.c_str(), argv.data());
    fmt::print(stderr, "weft: cannot run valgrind: {}\n", strerror(errno));
    _exit(127);
  }
  return child;
}

// The tool sends the address map at the end; if it never gets there (the
// process was killed), the last map read from /proc still names the code.
class MapsSnapshot {
 public:
  explicit MapsSnapshot(pid_t pid) : path_(fmt::format("/proc/{}/maps", pid)) {}

  // Rereads the map when the last read is over 200 ms old.
  void refresh_now_and_then() {
    if (std::chrono::steady_clock::now() - last_ <= std::chrono::milliseconds(200)) return;
    std::ifstream in(path_);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!text.empty()) text_ = std::move(text);
    last_ = std::chrono::steady_clock::now();
  }

  const std::string& text() const { return text_; }

 private:
  std::string path_;
  std::string text_;
  std::chrono::steady_clock::time_point last_ =
      std::chrono::steady_clock::now() - std::chrono::seconds(1);
};

// Consumes blocks as the tool publishes them, until it has ended and its
// process is gone; then whatever was published is all there is. Returns
// valgrind's wait status.
int follow_valgrind(pid_t child, EventRing& ring, RingEventDecoder& decoder, ValgrindLog& log,
                    MapsSnapshot& maps) {
  int wait_status = 0;
  bool exited = false;
  while (true) {
    const WeftRingSlot* slots = nullptr;
    uint64_t count = 0;
    if (ring.peek(slots, count)) {
      decoder.consume(slots, count);
      ring.release();
      continue;
    }
    if (ring.tool_attached()) ring.unlink_file();
    log.forward();
    if (exited) break;
    maps.refresh_now_and_then();
    const pid_t r = waitpid(child, &wait_status, WNOHANG);
    if (r == child || (r < 0 && errno != EINTR)) {
      exited = true;  // one more pass drains what was published last
      continue;
    }
    sleep_briefly();
  }
  return wait_status;
}

// Why the capture is incomplete when the tool sent no END record.
std::string unended_reason(const EventRing& ring, int wait_status) {
  return ring.tool_attached()
             ? fmt::format(
                   "valgrind ended ({}) before weft's tool could finish; events up "
                   "to then were kept",
                   describe_status(wait_status))
             : fmt::format("valgrind could not run the program ({})", describe_status(wait_status));
}

// Valgrind failed (ValgrindLogFilter): its cause, in weft's words where
// weft knows them.
std::string failure_reason(const std::string& cause, unsigned max_threads) {
  if (cause.find("Max number of threads is too low") != std::string::npos)
    return fmt::format(
        "Valgrind's thread table ({} threads at once, for --max-threads {}) was full and "
        "Valgrind stopped the program; events up to then were kept",
        valgrind_thread_slots(max_threads) - 1, max_threads);
  return fmt::format("valgrind failed ({}); events up to then were kept", cause);
}

void write_capture(CaptureSession& session, const std::string& capture_path, bool complete,
                   const std::string& reason, const std::string& maps) {
  const int fd = open(capture_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    throw std::runtime_error(fmt::format("cannot write {}: {}", capture_path, strerror(errno)));
  session.write(fd, complete, reason.c_str(), maps.data(), maps.size());
  close(fd);
}

}  // namespace

bool ValgrindLogFilter::failed_to_reraise() const {
  return terminating_signal_ != 0 &&
         failure_.find("signal was supposed to be fatal") != std::string::npos;
}

bool ValgrindLogFilter::pass(const std::string& line) {
  constexpr std::string_view kTerminating = "Process terminating with default action of signal ";
  if (const size_t at = line.find(kTerminating);
      at != std::string::npos && line.rfind("==", 0) == 0) {
    const char* digits = line.data() + at + kTerminating.size();
    int sig = 0;
    const auto [end, parsed] = std::from_chars(digits, line.data() + line.size(), sig);
    if (parsed == std::errc() && sig > 0 && sig < NSIG) terminating_signal_ = sig;
  }
  if (cause_next_) {  // "   Max number of threads is too low"
    cause_next_ = false;
    const size_t start = line.find_first_not_of(" \t");
    failure_ = start == std::string::npos ? "" : line.substr(start, line.size() - start - 1);
    if (failure_.empty()) failure_ = "the 'impossible' happened";
    return false;
  }
  if (failed_) return false;  // the stack traces and advice that follow
  const bool blank = line == "\n";
  if (skip_blank_ && blank) {
    skip_blank_ = false;
    return false;
  }
  skip_blank_ = false;
  // Valgrind's advice before its thread-table panic: weft's own words say
  // which option to raise.
  if (line.rfind("Use --max-threads=INT", 0) == 0) return false;
  if (line.rfind("and rerun valgrind", 0) == 0) {
    skip_blank_ = true;
    return false;
  }
  if (line.rfind("valgrind: the 'impossible' happened", 0) == 0) {
    failed_ = cause_next_ = true;
    return false;
  }
  if (line.rfind("valgrind: ", 0) == 0 && line.find("Assertion") != std::string::npos) {
    failed_ = true;
    failure_ = line.substr(10, line.size() - 11);
    return false;
  }
  return line.rfind("### unhandled dwarf2 abbrev form code", 0) != 0;
}

ValgrindSetup check_valgrind_backend(const std::string& program) {
  ValgrindSetup setup;
  setup.valgrind = find_executable("valgrind");
  if (setup.valgrind.empty())
    throw std::runtime_error(
        "valgrind is not installed: install Debian's valgrind package (scripts/setup.sh does)");
  setup.tool_directory = valgrind_tool_directory();
  check_binary(program);
  return setup;
}

int record_under_valgrind(const ValgrindSetup& setup, const std::vector<std::string>& command,
                          const std::string& program, const CaptureConfig& config,
                          const std::string& capture_path,
                          const std::function<void(pid_t)>& started) {
  CaptureSession* session = CaptureSession::create(config);
  if (!session) throw std::runtime_error("cannot reserve memory for the analyzers");
  EventRing ring(kBlockBytes, kBlockCount);

  // Valgrind's own messages come through a pipe, so that weft can drop the
  // noise Valgrind 3.19 prints for DWARF 5 forms it does not know (clang).
  int log_pipe[2];
  if (pipe2(log_pipe, O_CLOEXEC) != 0)
    throw std::runtime_error(fmt::format("cannot create a pipe: {}", strerror(errno)));
  const std::vector<std::string> args =
      valgrind_arguments(setup, command, program, config, ring.path(), log_pipe[1]);
  const pid_t child = start_valgrind(setup, args, log_pipe[1]);
  started(child);
  close(log_pipe[1]);
  fcntl(log_pipe[0], F_SETFL, O_NONBLOCK);
  ValgrindLog log(log_pipe[0]);

  RingEventDecoder decoder(*session);
  MapsSnapshot maps_snapshot(child);
  const int wait_status = follow_valgrind(child, ring, decoder, log, maps_snapshot);
  // Killed before its END: the events of the block it was filling, up to its
  // last synchronization event, are still in the ring.
  if (!decoder.ended()) {
    const WeftRingSlot* slots = nullptr;
    uint64_t count = 0;
    if (ring.peek_unpublished(slots, count)) decoder.consume(slots, count);
  }
  log.forward();
  log.finish();

  bool complete = decoder.ended() && decoder.complete();
  std::string reason = decoder.reason();
  // Valgrind's panic after the program's fatal signal: the status is the
  // one the program's own death gives, so weft record reports the crash
  // (and makes the capture's reason from the signal) as under a Valgrind
  // that re-raised it.
  const bool died_of_signal = log.failed_to_reraise() && WIFEXITED(wait_status);
  if (!log.failure().empty() && !died_of_signal) {
    complete = false;
    reason = failure_reason(log.failure(), config.max_threads);
  } else if (!decoder.ended()) {
    complete = false;
    reason = unended_reason(ring, wait_status);
  }
  const std::string& maps = decoder.maps().empty() ? maps_snapshot.text() : decoder.maps();
  write_capture(*session, capture_path, complete, reason, maps);
  return died_of_signal ? log.terminating_signal() : wait_status;
}

}  // namespace weft
