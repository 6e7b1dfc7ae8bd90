// The compile-time event source end to end: failure handling, thread counts,
// memcpy/atomics, Fortran, and the command line's error paths. Each test
// runs the real weft binary on programs built with the real wrappers.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/command_runner.h"

namespace {

namespace fs = std::filesystem;

using Result = weft_test::CommandResult;
using weft_test::slurp;

bool one_line(const std::string& s) { return !s.empty() && s.find('\n') == s.size() - 1; }

class SourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("weft-sources-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  Result run(const std::string& command) { return weft_test::run_command(command, dir_); }
  std::string weft() const { return std::string(WEFT_BIN_DIR) + "/weft"; }
  std::string program(const std::string& name, const std::string& cc = "gcc") const {
    return std::string(PROGRAMS_DIR) + "/" + name + "." + cc;
  }
  std::string plain(const std::string& name) const {
    return std::string(PROGRAMS_DIR) + "/" + name + ".plain";
  }
  std::string db(const std::string& name = "p.db") const { return (dir_ / name).string(); }

  nlohmann::json matrix(const std::string& profile, const std::string& kind) {
    const Result r = run(weft() + " comm " + profile + " --kind " + kind + " --format json");
    EXPECT_EQ(r.code, 0) << r.err;
    return nlohmann::json::parse(r.out)["matrix"];
  }
  std::string meta(const std::string& profile, const std::string& key) {
    sqlite3* h = nullptr;
    sqlite3_open_v2(profile.c_str(), &h, SQLITE_OPEN_READONLY, nullptr);
    sqlite3_stmt* s = nullptr;
    sqlite3_prepare_v2(h, "SELECT value FROM meta WHERE key = ?", -1, &s, nullptr);
    sqlite3_bind_text(s, 1, key.c_str(), -1, SQLITE_TRANSIENT);
    std::string v = "<missing>";
    if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
      v = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
    sqlite3_finalize(s);
    sqlite3_close(h);
    return v;
  }
  int64_t thread_rows(const std::string& profile) {
    sqlite3* h = nullptr;
    sqlite3_open_v2(profile.c_str(), &h, SQLITE_OPEN_READONLY, nullptr);
    sqlite3_stmt* s = nullptr;
    sqlite3_prepare_v2(h, "SELECT COUNT(*) FROM threads", -1, &s, nullptr);
    int64_t n = -1;
    if (sqlite3_step(s) == SQLITE_ROW) n = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    sqlite3_close(h);
    return n;
  }
  // Starts `weft record ARGS -- exchange_then_wait` in the background and
  // returns its pid once the program has printed "ready". The program runs
  // from a copy in this test's directory (waiting_program()), so that a
  // test that kills it by name cannot hit another test's program.
  pid_t start_recording_until_ready(const std::string& record_args,
                                    const std::string& binary = "") {
    fs::copy_file(binary.empty() ? program("exchange_then_wait") : binary, waiting_program(),
                  fs::copy_options::overwrite_existing);
    fs::remove(dir_ / "o");  // a previous run's "ready" is not this one's
    const std::string cmd = weft() + " record " + record_args + " -o " + db() + " -- " +
                            waiting_program() + " >" + (dir_ / "o").string() + " 2>" +
                            (dir_ / "e").string();
    const pid_t pid = fork();
    if (pid == 0) {
      execl("/bin/sh", "sh", "-c", ("exec " + cmd).c_str(), nullptr);
      _exit(127);
    }
    for (int i = 0; i < 600 && slurp(dir_ / "o").find("ready") == std::string::npos; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return pid;
  }

  std::string waiting_program() const { return (dir_ / "exchange_then_wait").string(); }

  // Expectations shared by the compile-time and the valgrind source.
  void expect_raw(const std::string& profile, const std::vector<std::vector<long>>& expected) {
    EXPECT_EQ(matrix(profile, "raw"), nlohmann::json(expected)) << profile;
  }
  // crash_after_exchange, exchange_then_wait, exit_from_thread at
  // granularity 8: workers 1 and 2 read each other's n doubles, nothing else.
  void expect_exchange(const std::string& profile, long n) {
    expect_raw(profile, {{0, 0, 0}, {0, 0, n}, {0, n, 0}});
  }
  // copies_and_atomics at granularity 64 (see the program's header).
  void expect_copies_and_atomics(const std::string& profile) {
    expect_raw(profile, {{0, 0, 0}, {1, 0, 17}, {0, 1, 0}});
  }
  // ring.f90 at granularity 8: each thread reads its right neighbour's 256
  // values, and the main thread one value of each worker.
  void expect_fortran_ring(const std::string& profile) {
    std::vector<std::vector<long>> expected(4, std::vector<long>(4, 0));
    for (int t = 0; t < 4; ++t)
      for (int w = 0; w < 4; ++w)
        expected[w][t] = (w == (t + 1) % 4 ? 256 : 0) + (t == 0 && w != 0 ? 1 : 0);
    expect_raw(profile, expected);
  }
  // heap_reuse at granularity 8 (see the program's header): thread 2 gets
  // back the memory thread 1 released through delete[], a realloc that moved
  // it and one that shrank it; only the move's copy (512 doubles) and the
  // three published addresses are communication, besides the result slots.
  void expect_heap_reuse(const Result& r, const std::string& profile) {
    EXPECT_NE(r.out.find("heap_reuse reused=yes,yes,yes "), std::string::npos) << r.out;
    expect_raw(profile, {{0, 0, 0}, {1, 0, 515}, {2, 0, 0}});
    const std::vector<std::vector<long>> zeros(3, std::vector<long>(3, 0));
    EXPECT_EQ(matrix(profile, "rar"), nlohmann::json(zeros)) << profile;
    EXPECT_EQ(matrix(profile, "inval"), nlohmann::json(zeros)) << profile;
  }
  // many_threads with `team` workers: each reads its right neighbour's slot
  // once (raw) and 15 times more (rar).
  void expect_many_threads(const std::string& profile, int team) {
    const auto raw = matrix(profile, "raw");
    const auto rar = matrix(profile, "rar");
    ASSERT_EQ(raw.size(), static_cast<size_t>(team + 1));
    uint64_t total_raw = 0, total_rar = 0;
    for (const auto& row : raw)
      for (const auto& v : row) total_raw += v.get<uint64_t>();
    for (const auto& row : rar)
      for (const auto& v : row) total_rar += v.get<uint64_t>();
    EXPECT_EQ(total_raw, static_cast<uint64_t>(team));
    EXPECT_EQ(total_rar, 15u * team);
    for (int i = 0; i < team; ++i) {
      const int reader = i + 1, writer = (i + 1) % team + 1;
      EXPECT_EQ(raw[writer][reader], 1) << "reader " << reader;
      EXPECT_EQ(rar[writer][reader], 15) << "reader " << reader;
    }
  }
  // many_threads beyond --max-threads `limit`: one-line cause, incomplete,
  // and the pairs among the analyzed threads still exact.
  void expect_thread_overflow(const Result& r, const std::string& profile, size_t limit) {
    EXPECT_EQ(r.code, 0);  // the program's status
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find("--max-threads"), std::string::npos) << r.err;
    EXPECT_EQ(meta(profile, "complete"), "0");
    const auto raw = matrix(profile, "raw");
    ASSERT_EQ(raw.size(), limit);
    EXPECT_EQ(raw[2][1], 1);
    EXPECT_EQ(raw[limit - 1][limit - 2], 1);
  }

  fs::path dir_;
};

TEST_F(SourceTest, CrashKeepsDataGatheredSoFarFlaggedIncomplete) {
  for (const char* cc : {"gcc", "clang"}) {
    const Result r = run(weft() + " record --granularity 8 -o " + db() + " -- " +
                         program("crash_after_exchange", cc));
    EXPECT_EQ(r.code, 128 + SIGSEGV) << r.err;
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find("SIGSEGV"), std::string::npos) << r.err;
    EXPECT_EQ(meta(db(), "complete"), "0");
    EXPECT_EQ(meta(db(), "exit_signal"), "SIGSEGV");
    EXPECT_NE(meta(db(), "incomplete_reason").find("crashed with SIGSEGV"), std::string::npos);
    expect_exchange(db(), 512);
  }
}

// SIGTERM, SIGINT and SIGQUIT sent to weft alone (kill) are passed on: the
// program stops with that signal and its data is kept.
TEST_F(SourceTest, StopSignalsToWeftStopTheProgramAndKeepItsData) {
  for (const int sig : {SIGTERM, SIGINT, SIGQUIT}) {
    const pid_t pid = start_recording_until_ready("--granularity 8");
    ASSERT_GT(pid, 0);
    ASSERT_NE(slurp(dir_ / "o").find("ready"), std::string::npos) << sigabbrev_np(sig);
    kill(pid, sig);
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFEXITED(status)) << sigabbrev_np(sig);
    EXPECT_EQ(WEXITSTATUS(status), 128 + sig) << slurp(dir_ / "e");
    EXPECT_EQ(meta(db(), "complete"), "0");
    EXPECT_EQ(meta(db(), "exit_signal"), std::string("SIG") + sigabbrev_np(sig));
    expect_exchange(db(), 64);
  }
}

// A SIGKILLed weft takes the program with it, and the capture it left is
// removed by the next recording onto the same profile.
TEST_F(SourceTest, SigkillToWeftEndsTheProgramAndItsCaptureIsCleanedUp) {
  const pid_t pid = start_recording_until_ready("--granularity 8");
  ASSERT_GT(pid, 0);
  ASSERT_NE(slurp(dir_ / "o").find("ready"), std::string::npos);
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  const std::string left = db() + ".capture-" + std::to_string(pid);
  bool program_gone = false;
  for (int i = 0; i < 200 && !program_gone; ++i) {
    program_gone = run("pgrep -f '^" + waiting_program() + "$'").code != 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  EXPECT_TRUE(program_gone);
  // The keeper writes what the program had counted, then ends (and frees
  // the capture's lock).
  for (int i = 0; i < 400 && run("flock -n " + left + " true").code != 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  ASSERT_TRUE(fs::exists(left));
  EXPECT_GT(fs::file_size(left), 0u);
  const Result again = run(weft() + " record --granularity 8 -o " + db() + " -- " +
                           program("exit_paths") + " _exit");
  EXPECT_EQ(again.code, 9) << again.err;
  EXPECT_NE(again.err.find("removed " + left), std::string::npos) << again.err;
  EXPECT_FALSE(fs::exists(left));
}

TEST_F(SourceTest, SigkillKeepsEveryEventUpToTheKill) {
  const pid_t pid = start_recording_until_ready("--granularity 8");
  ASSERT_GT(pid, 0);
  ASSERT_NE(slurp(dir_ / "o").find("ready"), std::string::npos);
  run("pkill -KILL -f '^" + waiting_program() + "$'");
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGKILL);
  EXPECT_EQ(meta(db(), "complete"), "0");
  EXPECT_EQ(meta(db(), "exit_signal"), "SIGKILL");
  EXPECT_NE(meta(db(), "incomplete_reason").find("killed by SIGKILL"), std::string::npos);
  // The runtime's keeper wrote what the program had counted.
  expect_exchange(db(), 64);
  const Result report = run(weft() + " report " + db());
  EXPECT_EQ(report.code, 0) << report.err;
  EXPECT_NE(report.out.find("INCOMPLETE"), std::string::npos);
}

// Every way a program can end without running an exit handler keeps the
// data counted up to its end and the program's own status; those the
// program chose (_exit, _Exit, quick_exit, exec) leave a complete profile.
// Under Valgrind an exec ends the tool before it can finish (Valgrind runs
// the new image natively): the events up to the exec are kept, flagged
// incomplete.
struct ExitPath {
  const char* name;
  int code;
  const char* reason;           // part of the incomplete reason; empty: complete
  const char* valgrind_reason;  // the same under Valgrind
};
constexpr ExitPath kExitPaths[] = {
    {"_exit", 9, "", ""},
    {"_Exit", 5, "", ""},
    {"quick_exit", 6, "", ""},
    {"exec", 8, "", "before weft's tool could finish"},
    {"overflow", 128 + SIGSEGV, "crashed with SIGSEGV", "crashed with SIGSEGV"},
    {"sigkill", 128 + SIGKILL, "killed by SIGKILL", "killed by SIGKILL"},
};

TEST_F(SourceTest, EveryExitPathKeepsTheDataAndTheStatus) {
  for (const char* backend : {"compile/gcc", "compile/clang", "valgrind"})
    for (const ExitPath& path : kExitPaths) {
      const bool valgrind = std::string(backend) == "valgrind";
      const std::string binary =
          valgrind ? plain("exit_paths") : program("exit_paths", std::string(backend).substr(8));
      const Result r = run(weft() + " record --backend " + (valgrind ? "valgrind" : "compile") +
                           " --granularity 8 -o " + db() + " -- " + binary + " " + path.name);
      const std::string what = std::string(backend) + " " + path.name + ": " + r.err;
      const std::string reason = valgrind ? path.valgrind_reason : path.reason;
      EXPECT_EQ(r.code, path.code) << what;
      EXPECT_EQ(meta(db(), "complete"), reason.empty() ? "1" : "0") << what;
      if (reason.empty()) {
        EXPECT_NE(r.err.find("weft: recorded 3 threads"), std::string::npos) << what;
      } else {
        EXPECT_NE(meta(db(), "incomplete_reason").find(reason), std::string::npos) << what;
        EXPECT_NE(r.err.find("is flagged incomplete, data so far kept"), std::string::npos) << what;
      }
      EXPECT_EQ(thread_rows(db()), 3) << what;
      expect_exchange(db(), 512);
    }
}

// The first program of the run built with weft is the one recorded; one it
// starts later (here the shell's next command) finds the capture claimed and
// leaves it alone, instead of overwriting it with its own 5 threads.
TEST_F(SourceTest, OnlyTheFirstProgramWithTheRuntimeIsRecorded) {
  const Result r = run(weft() + " record --granularity 8 -o " + db() + " -- /bin/sh -c '" +
                       program("exit_paths") + " exec; " + program("many_threads") + " 4'");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(meta(db(), "complete"), "1");
  EXPECT_EQ(thread_rows(db()), 3);
  expect_exchange(db(), 512);
}

// A module whose hooks were built against another runtime's layouts is
// refused with one line (its hooks stay dormant); the rest is recorded.
TEST_F(SourceTest, HooksBuiltAgainstAnotherRuntimeAreRefusedNotFollowed) {
  for (const char* cc : {"gcc", "clang"}) {
    const Result r =
        run(weft() + " record --granularity 8 -o " + db() + " -- " + program("stale_hooks", cc));
    ASSERT_EQ(r.code, 0) << cc << ": " << r.err;
    EXPECT_NE(r.out.find("stale module recording: 0"), std::string::npos) << cc << ": " << r.out;
    EXPECT_NE(r.err.find("weft: a module's hooks were built by another version of weft (its "
                         "accesses are not recorded); rebuild it with this "
                         "weft-cc/weft-c++/weft-fortran\n"),
              std::string::npos)
        << cc << ": " << r.err;
    EXPECT_EQ(meta(db(), "complete"), "1");
    expect_exchange(db(), 64);
  }
}

TEST_F(SourceTest, MoreThreadsThanTheInlineReaderSetAreExact) {
  constexpr int kTeam = 100;
  const Result r = run(weft() + " record --granularity 64 -o " + db() + " -- " +
                       program("many_threads") + " " + std::to_string(kTeam));
  ASSERT_EQ(r.code, 0) << r.err;
  expect_many_threads(db(), kTeam);
}

TEST_F(SourceTest, FreedMemoryReusedByAnotherThreadIsNotCommunication) {
  for (const char* cc : {"gcc", "clang"}) {
    const Result r =
        run(weft() + " record --granularity 8 -o " + db() + " -- " + program("heap_reuse", cc));
    ASSERT_EQ(r.code, 0) << r.err;
    expect_heap_reuse(r, db());
  }
}

// A lock-heavy program: each thread logs its first 4,096 mutex events and
// counts the rest, so its other synchronization records (here the thread
// exits that close its sections) are never crowded out of the log.
TEST_F(SourceTest, MutexEventsBeyondEachThreadsFirst4096AreCountedNotLogged) {
  const Result r = run(weft() + " record -o " + db() + " -- " + program("lock_heavy"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(meta(db(), "unlogged_mutex_events"), "63616");
  EXPECT_EQ(meta(db(), "dropped_sync_events"), "0");
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open_v2(db().c_str(), &h, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  auto count = [&](const std::string& sql) {
    sqlite3_stmt* s = nullptr;
    sqlite3_prepare_v2(h, sql.c_str(), -1, &s, nullptr);
    int64_t n = -1;
    if (sqlite3_step(s) == SQLITE_ROW) n = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return n;
  };
  for (int worker = 1; worker <= 4; ++worker) {
    const std::string of = " FROM sync_events WHERE thread = " + std::to_string(worker);
    EXPECT_EQ(count("SELECT COUNT(*)" + of + " AND kind IN ('mutex_lock', 'mutex_unlock')"), 4096)
        << "worker " << worker;
    EXPECT_EQ(count("SELECT COUNT(*)" + of + " AND kind = 'thread_exit'"), 1)
        << "worker " << worker;
  }
  sqlite3_close(h);
}

TEST_F(SourceTest, ThreadsBeyondMaxThreadsAreReportedNotLost) {
  const Result r = run(weft() + " record --max-threads 50 -o " + db() + " -- " +
                       program("many_threads") + " 100");
  expect_thread_overflow(r, db(), 50);
}

TEST_F(SourceTest, MemcpyAndAtomicsAreTheProgramsAccesses) {
  for (const char* cc : {"gcc", "clang"}) {
    const Result r = run(weft() + " record --granularity 64 -o " + db() + " -- " +
                         program("copies_and_atomics", cc));
    ASSERT_EQ(r.code, 0) << r.err;
    expect_copies_and_atomics(db());
  }
}

TEST_F(SourceTest, FortranOpenMpThroughWeftFortran) {
  if (std::system("command -v gfortran >/dev/null 2>&1") != 0) GTEST_SKIP() << "no gfortran";
  const std::string exe = (dir_ / "ring_f").string();
  const Result build = run(std::string(WEFT_BIN_DIR) + "/weft-fortran -O1 -fopenmp -o " + exe +
                           " " + FORTRAN_SOURCE);
  ASSERT_EQ(build.code, 0) << build.err;
  const Result r = run(weft() + " record --granularity 8 -o " + db() + " -- " + exe);
  ASSERT_EQ(r.code, 0) << r.err;
  expect_fortran_ring(db());
}

TEST_F(SourceTest, ProgramWithoutTheRuntimeGetsAClearError) {
  const Result r = run(weft() + " record -o " + db() + " -- /bin/true");
  EXPECT_EQ(r.code, 125);
  EXPECT_TRUE(one_line(r.err)) << r.err;
  EXPECT_NE(r.err.find("weft-cc"), std::string::npos) << r.err;
  EXPECT_EQ(meta(db(), "complete"), "0");
}

TEST_F(SourceTest, BadInputsGiveOneLineErrors) {
  // Make a real profile to corrupt in various ways.
  ASSERT_EQ(run(weft() + " record -o " + db() + " -- " + program("many_threads") + " 4").code, 0);
  std::ofstream(dir_ / "text.db") << "not a database\n";
  fs::copy_file(db(), dir_ / "future.db");
  sqlite3* h = nullptr;
  sqlite3_open((dir_ / "future.db").c_str(), &h);
  sqlite3_exec(h, "UPDATE meta SET value = '99' WHERE key = 'schema_version'", nullptr, nullptr,
               nullptr);
  sqlite3_close(h);
  fs::copy_file(db(), dir_ / "nometa.db");
  sqlite3_open((dir_ / "nometa.db").c_str(), &h);
  sqlite3_exec(h, "DROP TABLE meta", nullptr, nullptr, nullptr);
  sqlite3_close(h);

  const std::pair<std::string, std::string> cases[] = {
      {" comm " + (dir_ / "missing.db").string(), "no such file"},
      {" report " + (dir_ / "text.db").string(), "not a weft profile"},
      {" comm " + (dir_ / "nometa.db").string(), "not a weft profile"},
      {" report " + (dir_ / "future.db").string(), "schema version 99"},
      {" comm " + db() + " --region no_such_function", "unknown region"},
      {" record --granularity 3 -- " + program("many_threads"), "power of two"},
      {" record --backend pin -- " + program("many_threads"), "unknown backend"},
      {" record --analyses comm,nonsense -- " + program("many_threads"), "unknown analysis"},
      {" record -- " + (dir_ / "no_such_program").string(), "no such executable"},
  };
  for (const auto& [args, expected] : cases) {
    const Result r = run(weft() + args);
    const bool record = args.rfind(" record", 0) == 0;
    EXPECT_EQ(r.code, !record ? 1 : expected == "no such executable" ? 127 : 125) << args;
    EXPECT_TRUE(one_line(r.err)) << args << ": " << r.err;
    EXPECT_NE(r.err.find(expected), std::string::npos) << args << ": " << r.err;
  }
}

TEST_F(SourceTest, ProgramsRunNormallyOutsideRecord) {
  const Result r = run(program("copies_and_atomics"));
  EXPECT_EQ(r.code, 0);
  const Result many = run(program("many_threads") + " 8");
  EXPECT_EQ(many.code, 0);
}

// ---- the binary source (weft record --backend valgrind) on plain builds ------

TEST_F(SourceTest, ValgrindCrashKeepsDataGatheredSoFarFlaggedIncomplete) {
  const Result r = run(weft() + " record --backend valgrind --granularity 8 -o " + db() + " -- " +
                       plain("crash_after_exchange"));
  EXPECT_EQ(r.code, 128 + SIGSEGV) << r.err;
  EXPECT_NE(r.err.find("crashed with SIGSEGV"), std::string::npos) << r.err;
  EXPECT_EQ(meta(db(), "complete"), "0");
  EXPECT_EQ(meta(db(), "source"), "valgrind");
  EXPECT_EQ(meta(db(), "exit_signal"), "SIGSEGV");
  expect_exchange(db(), 512);
}

TEST_F(SourceTest, ValgrindSigkillOfTheProgramKeepsEventsUpToTheKill) {
  const pid_t pid = start_recording_until_ready("--backend valgrind --granularity 8",
                                                plain("exchange_then_wait"));
  ASSERT_GT(pid, 0);
  ASSERT_NE(slurp(dir_ / "o").find("ready"), std::string::npos) << slurp(dir_ / "e");
  // The Valgrind process runs the program: its command line names the tool.
  run("pkill -KILL -f 'weft-ring=.*" + waiting_program() + "'");
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGKILL);
  EXPECT_EQ(meta(db(), "complete"), "0");
  EXPECT_EQ(meta(db(), "exit_signal"), "SIGKILL");
  expect_exchange(db(), 64);
  const Result report = run(weft() + " report " + db());
  EXPECT_EQ(report.code, 0) << report.err;
  EXPECT_NE(report.out.find("INCOMPLETE"), std::string::npos);
}

TEST_F(SourceTest, ValgrindExitFromAThreadKeepsEverything) {
  const Result r = run(weft() + " record --backend valgrind --granularity 8 -o " + db() + " -- " +
                       plain("exit_from_thread"));
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(r.out.find("exiting from a thread"), std::string::npos) << r.out;
  EXPECT_EQ(meta(db(), "exit_status"), "3");
  expect_exchange(db(), 64);
}

TEST_F(SourceTest, ValgrindMemcpyAndAtomicsAreTheProgramsAccesses) {
  const Result r = run(weft() + " record --backend valgrind --granularity 64 -o " + db() + " -- " +
                       plain("copies_and_atomics"));
  ASSERT_EQ(r.code, 0) << r.err;
  expect_copies_and_atomics(db());
}

TEST_F(SourceTest, ValgrindFreedMemoryReusedByAnotherThreadIsNotCommunication) {
  const Result r = run(weft() + " record --backend valgrind --granularity 8 -o " + db() + " -- " +
                       plain("heap_reuse"));
  ASSERT_EQ(r.code, 0) << r.err;
  expect_heap_reuse(r, db());
}

// A weft-cc build loads weft's runtime, dormant under Valgrind, with its own
// copy of the interposers: the threads (each was counted twice), the atomics,
// memcpy and the heap are exactly as in the plain build.
TEST_F(SourceTest, ValgrindRunsAWeftCcBuildLikeAPlainOne) {
  for (const char* cc : {"gcc", "clang"}) {
    SCOPED_TRACE(cc);
    Result r = run(weft() + " record --backend valgrind --granularity 64 -o " + db() + " -- " +
                   program("many_threads", cc) + " 30");
    ASSERT_EQ(r.code, 0) << r.err;
    expect_many_threads(db(), 30);
    r = run(weft() + " record --backend valgrind --granularity 64 -o " + db() + " -- " +
            program("copies_and_atomics", cc));
    ASSERT_EQ(r.code, 0) << r.err;
    expect_copies_and_atomics(db());
    r = run(weft() + " record --backend valgrind --granularity 8 -o " + db() + " -- " +
            program("heap_reuse", cc));
    ASSERT_EQ(r.code, 0) << r.err;
    expect_heap_reuse(r, db());
  }
}

// Valgrind's own thread table holds 499 threads unless told otherwise; weft
// gives it room for --max-threads threads and 1,024 more (docs/commands.md).
TEST_F(SourceTest, ValgrindRunsMoreLiveThreadsThanItsDefaultTableHolds) {
  const Result r = run(weft() + " record --backend valgrind --max-threads 1101 -o " + db() +
                       " -- " + plain("live_threads") + " 1100");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "live_threads created=1100 joined=1100 sum=605550\n");
  EXPECT_EQ(meta(db(), "complete"), "1");
  const auto raw = matrix(db(), "raw");
  ASSERT_EQ(raw.size(), 1101u);
  for (size_t t = 1; t < raw.size(); ++t) EXPECT_EQ(raw[t][0], 1) << "thread " << t;
}

// More live threads than even that: a pthread_create fails with EAGAIN (as
// when a system runs out of threads) instead of Valgrind stopping the
// program, which keeps its output; weft says so in one line.
TEST_F(SourceTest, ValgrindThreadTableFullFailsPthreadCreateNotTheRun) {
  const Result r = run(weft() + " record --backend valgrind --max-threads 50 -o " + db() + " -- " +
                       plain("live_threads") + " 1100");
  EXPECT_EQ(r.code, 3) << r.err;
  // Valgrind's table: 50 + 1,024 threads at once, the main thread and 1,073 workers.
  EXPECT_EQ(r.out,
            "live_threads created=1073 of 1100 (pthread_create: Resource temporarily unavailable) "
            "joined=1073 sum=576201\n");
  EXPECT_TRUE(one_line(r.err)) << r.err;
  EXPECT_NE(r.err.find("thread table (1074 threads at once) was full: 1 thread creation failed "
                       "with EAGAIN"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("--max-threads"), std::string::npos) << r.err;
  EXPECT_EQ(meta(db(), "complete"), "0");
  EXPECT_EQ(matrix(db(), "raw").size(), 50u);
}

TEST_F(SourceTest, ValgrindThreadsBeyondMaxThreadsAreReportedNotLost) {
  const Result r = run(weft() + " record --backend valgrind --max-threads 20 -o " + db() + " -- " +
                       plain("many_threads") + " 30");
  expect_thread_overflow(r, db(), 20);
}

TEST_F(SourceTest, ValgrindFortranOpenMpPlainBuild) {
  if (std::system("command -v gfortran >/dev/null 2>&1") != 0) GTEST_SKIP() << "no gfortran";
  const std::string exe = (dir_ / "ring_f").string();
  const Result build = run("gfortran -O1 -g -fopenmp -o " + exe + " " + FORTRAN_SOURCE);
  ASSERT_EQ(build.code, 0) << build.err;
  const Result r =
      run(weft() + " record --backend valgrind --granularity 8 -o " + db() + " -- " + exe);
  ASSERT_EQ(r.code, 0) << r.err;
  expect_fortran_ring(db());
}

TEST_F(SourceTest, ValgrindBackendRefusesWhatItCannotRunWithOneLine) {
  // A 32-bit ELF: a copy of a real program with its class byte changed.
  const fs::path elf32 = dir_ / "elf32";
  fs::copy_file(plain("many_threads"), elf32);
  {
    std::fstream f(elf32, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(4);
    f.put(1);  // EI_CLASS = ELFCLASS32
  }
  fs::permissions(elf32, fs::perms::owner_all);
  const std::string path_without_valgrind = "PATH=" + dir_.string() + " ";
  const std::pair<std::string, std::string> cases[] = {
      {weft() + " record --backend valgrind -o " + db() + " -- " + elf32.string(), "32-bit"},
      {weft() + " record --backend valgrind -o " + db() + " -- " + std::string(PROGRAMS_DIR) +
           "/exchange_then_wait.static-stripped",
       "statically linked without symbols"},
      {path_without_valgrind + weft() + " record --backend valgrind -o " + db() + " -- " +
           plain("many_threads"),
       "valgrind is not installed"},
      {"WEFT_VALGRIND_LIB=" + dir_.string() + " " + weft() + " record --backend valgrind -o " +
           db() + " -- " + plain("many_threads"),
       "Valgrind tool is not built"},
  };
  for (const auto& [command, expected] : cases) {
    const Result r = run(command);
    EXPECT_EQ(r.code, 125) << command;
    EXPECT_TRUE(one_line(r.err)) << command << ": " << r.err;
    EXPECT_NE(r.err.find(expected), std::string::npos) << command << ": " << r.err;
  }
}

}  // namespace
