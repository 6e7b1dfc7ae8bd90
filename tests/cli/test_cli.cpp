// The command line as a user meets it: every malformed option is one line
// on stderr and exit status 1; sizes take CLI11's units; nothing after `--`
// is read by weft; every view warns about an incomplete profile, in its
// table or, for CSV and JSON, on stderr.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "support/command_runner.h"

namespace {

using weft_test::CommandResult;
using weft_test::run_command;

const std::string kWeft = std::string(WEFT_BIN_DIR) + "/weft";
const std::string kRing = std::string(EXAMPLES_DIR) + "/ring_pthreads.gcc.O2";
const std::string kRingThreads = std::string(EXAMPLES_DIR) + "/ring_threads.gcc.O2";

namespace fs = std::filesystem;

std::string quote(const fs::path& path) { return "'" + path.string() + "'"; }

bool same_bytes(const fs::path& a, const fs::path& b) {
  return weft_test::slurp(a) == weft_test::slurp(b) && fs::file_size(a) == fs::file_size(b);
}

// A device node like /dev/full (mknod, which needs CAP_MKNOD: root on this
// machine); else a Unix socket, the other kind of non-regular file that
// every user can make. Returns which one it made.
std::string make_device_or_socket(const fs::path& path) {
  if (mknod(path.c_str(), S_IFCHR | 0666, makedev(1, 7)) == 0) return "a character device";
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
  const bool bound = bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  close(fd);
  return bound ? "a socket" : "";
}

bool one_line(const std::string& text) {
  return !text.empty() && text.find('\n') == text.size() - 1;
}

class CommandLine : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new weft_test::TempDir("weft-test-cli");
    const CommandResult r = run_command(
        kWeft + " record -o " + profile() + " --analyses comm,crd -- " + kRing, dir_->path);
    // Runs that get past the options write here, not into the working directory.
    out_ = " -o " + (dir_->path / "scratch.db").string() + " ";
    ASSERT_EQ(r.code, 0) << r.err;
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string profile() { return (dir_->path / "ring.db").string(); }
  CommandResult run(const std::string& args) { return run_command(kWeft + " " + args, dir_->path); }

  static weft_test::TempDir* dir_;
  static std::string out_;
};
weft_test::TempDir* CommandLine::dir_ = nullptr;
std::string CommandLine::out_;

// Status 1 for the views, 125 for `weft record` (its program's statuses
// stay the program's: docs/commands.md, "Exit status").
TEST_F(CommandLine, MalformedOptionsAreOneLineWithTheCommandsFailureStatus) {
  const std::string p = profile();
  const std::pair<std::string, std::string> cases[] = {
      {"record" + out_ + "--granularity x -- " + kRing, "--granularity"},
      {"record" + out_ + "--trace-budget 12Q -- " + kRing, "--trace-budget"},
      {"record" + out_ + "--line-size 48 -- " + kRing, "--line-size 48 is not a power of two"},
      {"record" + out_ + "--crd-max-granules -1 -- " + kRing, "--crd-max-granules"},
      {"record" + out_ + "--analyses comm,,crd -- " + kRing, "has an empty item"},
      {"record" + out_ + "--analyses '' -- " + kRing, "has an empty item"},
      {"record" + out_ + "--analyses comm, -- " + kRing, "has an empty item"},
      {"record" + out_ + "--analyses comm,crdx -- " + kRing, "unknown analysis 'crdx'"},
      {"record" + out_ + "--granularity -1 -- " + kRing, "--granularity"},
      {"record" + out_ + "--granularity 0x40 -- " + kRing, "--granularity"},
      // Decimal, never octal (CLI11 alone reads 010 as 8, a power of two).
      {"record" + out_ + "--granularity 010 -- " + kRing, "--granularity 10 is not a power of two"},
      {"record" + out_ + "--max-threads -1 -- " + kRing, "--max-threads"},
      {"record" + out_ + "--max-threads 1e3 -- " + kRing, "--max-threads"},
      {"record" + out_ + "--crd-max-granules 99999999999999999999 -- " + kRing,
       "--crd-max-granules"},
      {"record" + out_ + "--line-size -64 -- " + kRing, "--line-size"},
      // --exact sets the sampling settings; a contrary one is refused, not overridden.
      {"record" + out_ + "--exact --crd-sample-granules 1000 -- " + kRing,
       "--exact contradicts --crd-sample-granules 1000 (exact: 0)"},
      {"record" + out_ + "--exact --imbalance-sampling 8 -- " + kRing,
       "--exact contradicts --imbalance-sampling 8 (exact: 1)"},
      {"report " + p + " --top -1", "--top"},
      {"report " + p + " --top x", "--top"},
      {"imbalance " + p + " --top 0", "--top"},
      {"imbalance " + p + " --threshold nan", "--threshold"},
      {"imbalance " + p + " --threshold -0.5", "--threshold"},
      {"imbalance " + p + " --threshold 2", "--threshold"},
      {"falseshare " + p + " --top 0", "--top"},
      {"falseshare " + p + " --min-events -1", "--min-events"},
      {"trace " + p + " --max-lines 0", "--max-lines"},
      {"trace " + p + " --thread -1", "--thread"},
      {"comm " + p + " --region ''", "unknown region ''"},
      {"crd " + p + " --region ''", "unknown region ''"},
      {"record" + out_ + "--miss-penalties 1,2 -- " + kRing, "--miss-penalties"},
      {"comm " + p + " --kind war", "--kind"},
      {"comm " + p + " --format xml", "--format"},
      {"report " + p + " --format csv", "csv"},
      {"report " + p + " --top 0", "--top"},
      {"crd " + p + " --cache-size 12abc", "--cache-size"},
      {"crd " + p + " --cache-size 0", "--cache-size 0"},
      {"imbalance " + p + " --time seconds", "--time"},
      {"trace " + p + " --pc zz", "--pc"},
      {"comm " + p + " --no-such-option", "no-such-option"},
      {"frobnicate", "subcommand"},
      {"", "subcommand"},
  };
  for (const auto& [args, expected] : cases) {
    const CommandResult r = run(args);
    EXPECT_EQ(r.code, args.rfind("record", 0) == 0 ? 125 : 1) << args;
    EXPECT_TRUE(one_line(r.err)) << args << ": " << r.err;
    EXPECT_NE(r.err.find(expected), std::string::npos) << args << ": " << r.err;
    EXPECT_EQ(r.err.rfind("weft: ", 0), 0u) << args << ": " << r.err;
    // A cause a person reads: no 300-digit range (CLI11's DBL_MAX).
    EXPECT_LT(r.err.size(), 400u) << args << ": " << r.err;
  }
}

TEST_F(CommandLine, SizesTakeTheUsualUnits) {
  // 64K, 64KiB, 64kb are 65536 bytes (K = 1024): the max cutoff is 1024 granules.
  for (const char* size : {"65536", "64K", "64KiB", "64kb", "64k"}) {
    const CommandResult r = run("crd " + profile() + " --format json --cache-size " + size);
    ASSERT_EQ(r.code, 0) << size << ": " << r.err;
    const nlohmann::json crd = nlohmann::json::parse(r.out);
    ASSERT_FALSE(crd.empty());
    EXPECT_EQ(crd[0]["cache_bytes"], 65536) << size;
    EXPECT_EQ(crd[0]["cache_source"], "cache-size") << size;
    EXPECT_EQ(crd[0]["max_cutoff"], 1024) << size;
    EXPECT_EQ(crd[0]["kind"], "program") << size;
  }
  const CommandResult big = run("crd " + profile() + " --format json --cache-size 1G");
  ASSERT_EQ(big.code, 0) << big.err;
  EXPECT_EQ(nlohmann::json::parse(big.out)[0]["cache_bytes"], 1 << 30);
  for (const char* bad : {"M", "-5", "12abc", "99999999999999999999", "17179869184G"}) {
    const CommandResult r = run("crd " + profile() + " --cache-size " + bad);
    EXPECT_EQ(r.code, 1) << bad;
    EXPECT_TRUE(one_line(r.err)) << bad << ": " << r.err;
  }
}

TEST_F(CommandLine, EverythingAfterTheSeparatorBelongsToTheProgram) {
  // /bin/echo is not built with weft: weft keeps a placeholder profile and
  // fails (125), but the program ran with exactly these arguments, whichever
  // record option (a list, a size, a flag with a value) came last before
  // the separator.
  const std::string out = (dir_->path / "echo.db").string();
  const std::string options[] = {"--analyses comm",
                                 "--analyses comm,crd,imbalance,falseshare,traces",
                                 "--backend compile",
                                 "--granularity 8",
                                 "--max-threads 16",
                                 "--crd-max-granules 100",
                                 "--cache 32K:8,1M:8,8M:16",
                                 "--miss-penalties 12,40,200",
                                 "--line-size 64",
                                 "--trace-budget 4M",
                                 "--analyses comm --line-size 64"};
  for (const std::string& option : options) {
    const CommandResult r =
        run("record -o " + out + " " + option + " -- /bin/echo -x 1 -o --help -- --analyses");
    EXPECT_EQ(r.out, "-x 1 -o --help -- --analyses\n") << option;
    EXPECT_EQ(r.code, 125) << option;
    EXPECT_NE(r.err.find("did not load weft's runtime"), std::string::npos) << option << r.err;
  }
}

TEST_F(CommandLine, EveryViewWarnsAboutAnIncompleteProfile) {
  // A placeholder (the program never loaded weft's runtime) holds the
  // communication analysis' empty tables.
  const std::string out = (dir_->path / "placeholder.db").string();
  run("record -o " + out + " -- /bin/true");
  for (const char* view : {"comm", "report"}) {
    const CommandResult json = run(std::string(view) + " " + out + " --format json");
    EXPECT_EQ(json.code, 0) << view << ": " << json.err;
    EXPECT_TRUE(one_line(json.err)) << view << ": " << json.err;
    EXPECT_NE(json.err.find("INCOMPLETE"), std::string::npos) << view << ": " << json.err;
    EXPECT_NO_THROW(nlohmann::json::parse(json.out)) << view;
    const CommandResult table = run(std::string(view) + " " + out);
    EXPECT_EQ(table.code, 0) << view << ": " << table.err;
    EXPECT_EQ(table.err, "") << view;
    EXPECT_NE(table.out.find("INCOMPLETE"), std::string::npos) << view << ": " << table.out;
  }
  // Views of analyses refuse in one line, saying the data was lost (not
  // that the profile was recorded without their analysis).
  for (const char* view : {"crd", "imbalance", "falseshare", "trace"}) {
    const CommandResult r = run(std::string(view) + " " + out);
    EXPECT_EQ(r.code, 1) << view;
    EXPECT_TRUE(one_line(r.err)) << view << ": " << r.err;
    EXPECT_NE(r.err.find("incomplete profile whose data was lost"), std::string::npos)
        << view << ": " << r.err;
    EXPECT_EQ(r.err.find("without"), std::string::npos) << view << ": " << r.err;
  }
}

// -o names a regular file: a device node, a FIFO, a directory (or a link
// to one) is refused in one line with status 125 (weft record's own
// failure, docs/commands.md) before the program runs,
// and left as it was (weft once renamed a SQLite file over /dev/full).
TEST_F(CommandLine, OutputMustBeARegularFile) {
  const fs::path dir = dir_->path / "outputs";
  fs::create_directories(dir);
  const fs::path device = dir / "full", fifo = dir / "fifo", directory = dir / "directory",
                 link = dir / "link-to-fifo", marker = dir / "program-ran";
  const std::string device_kind = make_device_or_socket(device);
  ASSERT_FALSE(device_kind.empty());
  if (device_kind != "a character device")
    std::printf("mknod is not permitted here: a socket stands for the device node\n");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  fs::create_directory(directory);
  fs::create_symlink(fifo, link);
  const std::pair<fs::path, std::string> cases[] = {{device, device_kind},
                                                    {fifo, "a FIFO"},
                                                    {directory, "a directory"},
                                                    {link, "a FIFO"},
                                                    {dir / "absent" / "x.db", "does not exist"}};
  for (const auto& [target, kind] : cases) {
    const CommandResult r =
        run("record -o " + quote(target) + " -- /bin/sh -c 'touch " + marker.string() + "'");
    EXPECT_EQ(r.code, 125) << target;
    EXPECT_TRUE(one_line(r.err)) << target << ": " << r.err;
    EXPECT_NE(r.err.find(kind), std::string::npos) << target << ": " << r.err;
    EXPECT_NE(r.err.find(target.string()), std::string::npos) << target << ": " << r.err;
    EXPECT_FALSE(fs::exists(marker)) << target << ": the program ran";
  }
  struct stat status {};
  ASSERT_EQ(lstat(device.c_str(), &status), 0);
  EXPECT_TRUE(S_ISCHR(status.st_mode) || S_ISSOCK(status.st_mode));
  EXPECT_EQ(fs::status(fifo).type(), fs::file_type::fifo);
  EXPECT_TRUE(fs::is_directory(directory));
  EXPECT_TRUE(fs::is_empty(directory));
  EXPECT_TRUE(fs::is_symlink(link));
  // Nothing of weft's was left next to them.
  for (const auto& entry : fs::directory_iterator(dir))
    EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << entry.path();
}

// A symbolic link given to -o is followed: the profile is written to the
// file it leads to (made if absent), and the link stays a link.
TEST_F(CommandLine, OutputThroughASymbolicLink) {
  const fs::path dir = dir_->path / "links";
  fs::create_directories(dir / "real");
  fs::copy_file(profile(), dir / "real" / "old.db");
  fs::create_symlink("real/old.db", dir / "relative");            // to an existing profile
  fs::create_symlink(dir / "real" / "new.db", dir / "dangling");  // to a file not yet there
  for (const char* name : {"relative", "dangling"}) {
    const CommandResult r = run("record --analyses comm -o " + quote(dir / name) + " -- " + kRing);
    ASSERT_EQ(r.code, 0) << name << ": " << r.err;
    EXPECT_TRUE(fs::is_symlink(dir / name)) << name;
    const CommandResult comm = run("comm " + quote(dir / name) + " --format json");
    EXPECT_EQ(comm.code, 0) << name << ": " << comm.err;
  }
  EXPECT_TRUE(fs::is_regular_file(dir / "real" / "new.db"));
  // The old profile was replaced by the new one (comm only now).
  const CommandResult crd = run("crd " + quote(dir / "real" / "old.db"));
  EXPECT_EQ(crd.code, 1) << crd.out;
  EXPECT_NE(crd.err.find("without the crd analysis"), std::string::npos) << crd.err;
}

// A run that fails (weft itself killed while the program runs) leaves the
// previous profile byte for byte: nothing is written to -o before the end.
TEST_F(CommandLine, AFailedRunLeavesThePreviousProfile) {
  const fs::path dir = dir_->path / "failed";
  fs::create_directories(dir);
  const fs::path kept = dir / "kept.db";
  fs::copy_file(profile(), kept);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    setpgid(0, 0);  // weft and the program in a group of their own, killed together
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    execl(kWeft.c_str(), kWeft.c_str(), "record", "-o", kept.c_str(), "--", "/bin/sleep", "30",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  setpgid(child, child);
  // Until the program runs under weft (weft's child), at most 20 s.
  for (int i = 0; i < 200; ++i) {
    const std::string children = weft_test::slurp(fs::path("/proc") / std::to_string(child) /
                                                  "task" / std::to_string(child) / "children");
    if (!children.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  kill(-child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status));
  EXPECT_TRUE(same_bytes(kept, profile()));
}

// Views check what they read before they allocate from it: a thread id of
// 1,000,000, a thread of a matrix entry that is not in `threads`, a
// negative count, a meta value of the wrong type are one line naming the
// file and the fault, status 1, within 1 GB of address space (a dense
// 1,000,001 x 1,000,001 matrix took 1.9 GB in 6 s, then bad_alloc).
TEST_F(CommandLine, ViewsRefuseDamagedProfilesWithBoundedMemory) {
  const std::string limit = "ulimit -v 1048576 && ";
  const fs::path damaged = dir_->path / "damaged.db";
  // The limit leaves room for the views on an intact profile.
  for (const char* view : {"report", "comm", "crd"}) {
    const CommandResult r = run_command(limit + kWeft + " " + view + " " + profile(), dir_->path);
    ASSERT_EQ(r.code, 0) << view << ": " << r.err;
  }
  const std::pair<std::string, std::string> damages[] = {
      {"UPDATE threads SET id = 1000000 WHERE id = (SELECT MAX(id) FROM threads)",
       "thread id 1000000"},
      {"UPDATE matrix_entries SET writer = 1000000 WHERE writer = 1", "thread 1000000"},
      {"UPDATE matrix_entries SET count = -count", "count of -"},
      {"UPDATE crd_distances SET reader = 77 WHERE reader = 2", "crd_distances names thread"},
      {"UPDATE meta SET value = 'x' WHERE key = 'granularity'", "meta granularity is 'x'"},
      {"UPDATE meta SET value = '-3' WHERE key = 'llc_bytes'", "meta llc_bytes is '-3'"},
      {"UPDATE meta SET value = 'yes' WHERE key = 'complete'", "meta complete is 'yes'"},
  };
  for (const auto& [sql, fault] : damages) {
    fs::copy_file(profile(), damaged, fs::copy_options::overwrite_existing);
    ASSERT_EQ(run_command("sqlite3 " + quote(damaged) + " \"" + sql + "\"", dir_->path).code, 0)
        << sql;
    for (const std::string& view :
         std::vector<std::string>{"report", "comm", "crd", "diff " + damaged.string()}) {
      const CommandResult r =
          run_command(limit + kWeft + " " + view + " " + damaged.string(), dir_->path);
      EXPECT_EQ(r.code, 1) << view << " after " << sql;
      EXPECT_TRUE(one_line(r.err)) << view << " after " << sql << ": " << r.err;
      EXPECT_NE(r.err.find(damaged.string() + " is a damaged weft profile"), std::string::npos)
          << view << " after " << sql << ": " << r.err;
      EXPECT_NE(r.err.find(fault), std::string::npos) << view << " after " << sql << ": " << r.err;
    }
  }
}

// Docs/commands.md, "The program's environment": the settings' values (and
// the profile's name) leave the program's stack where it was within its
// cache lines, once the address space's randomization is off. A program
// prints where a local of main lies in its page; every recording with the
// same analyses must print the same.
TEST_F(CommandLine, SettingsLeaveTheProgramsStackWhereItWas) {
  const std::string fixed = "setarch \"$(uname -m)\" -R ";
  if (run_command(fixed + "true", dir_->path).code != 0)
    GTEST_SKIP() << "setarch -R is not permitted here: the address space stays randomized";
  const fs::path source = dir_->path / "stack_offset.c";
  {
    std::ofstream out(source);
    out << "#include <stdint.h>\n#include <stdio.h>\n"
           "int main(void) {\n  volatile int local = 0;\n"
           "  printf(\"%lu\\n\", (unsigned long)((uintptr_t)&local % 4096));\n"
           "  return local;\n}\n";
  }
  const fs::path program = dir_->path / "stack_offset";
  const CommandResult built = run_command(
      std::string(WEFT_BIN_DIR) + "/weft-cc -O1 -o " + quote(program) + " " + quote(source),
      dir_->path);
  ASSERT_EQ(built.code, 0) << built.err;
  std::vector<std::string> offsets;
  for (const std::string& settings :
       {std::string(""), std::string("--exact"),
        std::string("--crd-max-granules 1234567890123456789"),
        std::string("--cache 32K:8,256K:8,8M:16 --trace-budget 64M")}) {
    // Names of different lengths: the capture file's path is passed too.
    const std::string db =
        (dir_->path / (std::string(1 + 7 * offsets.size(), 's') + ".db")).string();
    const CommandResult r = run_command(
        fixed + kWeft + " record -q " + settings + " -o " + db + " -- " + quote(program),
        dir_->path);
    ASSERT_EQ(r.code, 0) << settings << ": " << r.err;
    offsets.push_back(r.out);
  }
  for (size_t i = 1; i < offsets.size(); ++i) EXPECT_EQ(offsets[i], offsets[0]) << i;
}

// A section closed in a library without line information (std::thread's
// join in libstdc++) is named by its function and offset in the module, so
// two runs name it alike whatever the address the library was loaded at.
TEST_F(CommandLine, SectionNamesAreTheSameInEveryRun) {
  std::string names[2];
  for (int i = 0; i < 2; ++i) {
    const fs::path out = dir_->path / ("threads" + std::to_string(i) + ".db");
    const CommandResult r =
        run("record --analyses comm -o " + out.string() + " -- " + kRingThreads);
    ASSERT_EQ(r.code, 0) << r.err;
    names[i] = run_command("sqlite3 " + out.string() +
                               " \"SELECT name FROM regions WHERE kind = 'section' ORDER BY name\"",
                           dir_->path)
                   .out;
  }
  EXPECT_EQ(names[0], names[1]);
  EXPECT_NE(names[0].find("section@"), std::string::npos) << names[0];
  EXPECT_EQ(names[0].find("+0x7f"), std::string::npos) << names[0];
}

}  // namespace
