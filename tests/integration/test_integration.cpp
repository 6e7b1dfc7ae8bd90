// End-to-end tests: the examples in examples/, built with weft-cc / weft-c++
// for gcc and clang at -O1 and -O2, run under `weft record` at granularity 8
// and 64; the raw, rar and inval matrices of `weft comm --format json` must be
// exactly the ones derived by hand in each example's header comment (computed
// here from the thread count and sizes). Plus: a Makefile project built with
// CC=weft-cc / CXX=weft-c++ runs normally outside `weft record`.
//
// The locations of weft and of the built examples come from the build
// (WEFT_BIN_DIR, WEFT_EXAMPLES_DIR); the environment variables
// WEFT_TEST_BIN_DIR and WEFT_TEST_EXAMPLES_DIR override them.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "support/command_runner.h"
#include "support/recorded_imbalance.h"

namespace fs = std::filesystem;
using nlohmann::json;
using weft_test::TempDir;

namespace {

// ---- paths ------------------------------------------------------------------

fs::path dir_from_env(const char* var, const char* fallback) {
  const char* v = std::getenv(var);
  return fs::path(v && *v ? v : fallback);
}
fs::path bin_dir() { return dir_from_env("WEFT_TEST_BIN_DIR", WEFT_BIN_DIR); }
fs::path examples_dir() { return dir_from_env("WEFT_TEST_EXAMPLES_DIR", WEFT_EXAMPLES_DIR); }
fs::path weft_exe() { return bin_dir() / "weft"; }

// ---- processes ----------------------------------------------------------------

struct RunResult {
  int status = -1;  // exit code, or 128 + signal
  std::string out;
  std::string err;
  std::string describe(const std::vector<std::string>& argv) const {
    std::ostringstream s;
    s << "command:";
    for (const auto& a : argv) s << ' ' << a;
    s << "\nstatus: " << status << "\nstdout:\n" << out << "\nstderr:\n" << err;
    return s.str();
  }
};

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs argv (argv[0] is a path, or a name looked up in PATH) in `cwd` with
// extra environment variables; stdout and stderr are captured through files
// in `scratch`.
RunResult run(const std::vector<std::string>& argv, const fs::path& scratch,
              const std::map<std::string, std::string>& env = {}, const fs::path& cwd = {}) {
  static int counter = 0;
  const int n = counter++;
  const fs::path out_path = scratch / ("stdout." + std::to_string(n));
  const fs::path err_path = scratch / ("stderr." + std::to_string(n));
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int in = open("/dev/null", O_RDONLY);
    if (out < 0 || err < 0 || in < 0) _exit(126);
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    if (!cwd.empty() && chdir(cwd.c_str()) != 0) _exit(126);
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0) {
  }
  RunResult r;
  r.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
  r.out = read_file(out_path);
  r.err = read_file(err_path);
  return r;
}

// ---- matrices -------------------------------------------------------------------

using Matrix = std::vector<std::vector<long long>>;

Matrix zeros(int n) { return Matrix(n, std::vector<long long>(n, 0)); }

std::string format_matrix(const Matrix& m) {
  std::ostringstream s;
  s << "writer\\reader";
  for (size_t j = 0; j < m.size(); j++) s << "\tt" << j;
  s << '\n';
  for (size_t i = 0; i < m.size(); i++) {
    s << "t" << i;
    for (long long v : m[i]) s << '\t' << v;
    s << '\n';
  }
  return s.str();
}

struct Expected {
  Matrix raw, rar, inval;
};

Expected empty_expectation(int T) { return {zeros(T), zeros(T), zeros(T)}; }

// Thread t (t >= 1) stores its result in a 64-byte slot that the main thread
// (thread 0) reads once after the join: one raw[t][0] at both granularities.
void add_result_slots(Expected& x, int T) {
  for (int t = 1; t < T; t++) x.raw[t][0] += 1;
}

// ---- the examples' formulas (see the header comment of each example) --------

// e = doubles per granule.
long long per_granule(int granularity) { return granularity / 8; }

Expected ring(int T, long long N, long long R, int g, bool std_thread) {
  const long long e = per_granule(g);
  Expected x = empty_expectation(T);
  for (int t = 0; t < T; t++) {
    const int u = (t + 1) % T;
    x.raw[u][t] += R * N / e;
    x.rar[u][t] += R * (2 * N - N / e);
    x.inval[u][t] += (R - 1) * N / e;
  }
  add_result_slots(x, T);
  if (std_thread)  // each std::thread reads its argument, written by the main thread
    for (int t = 1; t < T; t++) x.raw[0][t] += 1;
  return x;
}

Expected pipeline(int T, long long N, long long K, int g) {
  const long long e = per_granule(g);
  Expected x = empty_expectation(T);
  for (int s = 1; s < T; s++) {
    x.raw[s - 1][s] += K * N / e;
    x.rar[s - 1][s] += K * (N - N / e);
    x.inval[s - 1][s] += std::max(K - 2, 0LL) * N / e;
  }
  add_result_slots(x, T);
  return x;
}

Expected alltoall(int T, long long N, long long R, int g) {
  const long long e = per_granule(g), C = N / T;
  Expected x = empty_expectation(T);
  for (int u = 0; u < T; u++)
    for (int t = 0; t < T; t++)
      if (u != t) {
        x.raw[u][t] += R * 2 * C / e;
        x.rar[u][t] += R * 2 * (C - C / e);
        x.inval[u][t] += (R - 1) * 2 * C / e;
      }
  add_result_slots(x, T);
  return x;
}

Expected stencil(int T, long long M, long long S, int g) {
  const long long L = g == 8 ? M - 2 : M / 8;  // granules of a halo row that are read
  Expected x = empty_expectation(T);
  for (int t = 1; t < T; t++) {
    for (auto [w, r] : {std::pair{t - 1, t}, std::pair{t, t - 1}}) {
      x.raw[w][r] += S * L;
      x.rar[w][r] += S * (M - 2 - L);
      x.inval[w][r] += (S - 1) * L;
    }
  }
  add_result_slots(x, T);
  return x;
}

Expected false_sharing(bool packed, int T, long long R, int g) {
  Expected x = empty_expectation(T);
  if (!packed || g == 8) {  // every counter in a granule of its own
    for (int t = 1; t < T; t++) x.raw[t][0] += 1;
    return x;
  }
  for (int t = 1; t < T; t++) {
    x.raw[t - 1][t] += R;
    x.inval[t][t - 1] += R;
  }
  x.raw[T - 1][0] += (R - 1) + 1;
  x.rar[T - 1][0] += T - 1;
  x.inval[0][T - 1] += R - 1;
  return x;
}

Expected imbalance(int T, long long N, int g) {
  const long long e = per_granule(g), C = N / T;
  Expected x = empty_expectation(T);
  for (int u = 0; u < T; u++)
    for (int t = u + 1; t < T; t++) {
      x.raw[u][t] += C / e;
      x.rar[u][t] += C * C - C / e;
    }
  add_result_slots(x, T);
  return x;
}

// Stage 1 and 2 take turns on the same heap blocks: only the main thread's
// reads of their address logs (R * K pointers each) and result slots.
Expected work_buffers(long long R, long long K, int g) {
  const long long e = per_granule(g), P = R * K;
  Expected x = empty_expectation(3);
  for (int s = 1; s <= 2; s++) {
    x.raw[s][0] += P / e;
    x.rar[s][0] += P - P / e;
  }
  add_result_slots(x, 3);
  return x;
}

// Compile-time sizes of the OpenMP examples (their defaults; the programs
// print them, and the test checks the printed values).
constexpr long long kRingOmpN = 1024, kRingOmpR = 4;
constexpr long long kStencilOmpH = 48, kStencilOmpM = 256, kStencilOmpS = 8;
constexpr long long kImbalanceOmpN = 1536;

struct Example {
  std::string label;    // test name part
  std::string program;  // examples/<program>.<cc>.<opt>
  std::vector<std::string> args;
  int threads;
  std::string output_prefix;  // what the program prints before its checksum
  std::function<Expected(int granularity)> expected;
};

const std::vector<Example>& examples() {
  static const std::vector<Example> list = {
      {"ring_pthreads",
       "ring_pthreads",
       {"3", "256", "3"},
       3,
       "ring_pthreads T=3 N=256 R=3 ",
       [](int g) { return ring(3, 256, 3, g, false); }},
      {"ring_threads",
       "ring_threads",
       {"4", "128", "3"},
       4,
       "ring_threads T=4 N=128 R=3 ",
       [](int g) { return ring(4, 128, 3, g, true); }},
      {"ring_omp",
       "ring_omp",
       {"3"},
       3,
       "ring_omp T=3 N=1024 R=4 ",
       [](int g) { return ring(3, kRingOmpN, kRingOmpR, g, false); }},
      {"pipeline_pthreads",
       "pipeline_pthreads",
       {"4", "128", "6"},
       4,
       "pipeline_pthreads T=4 N=128 K=6 ",
       [](int g) { return pipeline(4, 128, 6, g); }},
      {"alltoall_pthreads",
       "alltoall_pthreads",
       {"3", "240", "3"},
       3,
       "alltoall_pthreads T=3 N=240 R=3 ",
       [](int g) { return alltoall(3, 240, 3, g); }},
      {"stencil_pthreads",
       "stencil_pthreads",
       {"3", "12", "64", "4"},
       3,
       "stencil_pthreads T=3 H=12 M=64 S=4 ",
       [](int g) { return stencil(3, 64, 4, g); }},
      {"stencil_omp",
       "stencil_omp",
       {"4"},
       4,
       "stencil_omp T=4 H=48 M=256 S=8 ",
       [](int g) { return stencil(4, kStencilOmpM, kStencilOmpS, g); }},
      {"false_sharing_packed",
       "false_sharing_pthreads",
       {"packed", "4", "5", "20"},
       4,
       "false_sharing_pthreads packed T=4 R=5 K=20 ",
       [](int g) { return false_sharing(true, 4, 5, g); }},
      {"false_sharing_padded",
       "false_sharing_pthreads",
       {"padded", "3", "4", "10"},
       3,
       "false_sharing_pthreads padded T=3 R=4 K=10 ",
       [](int g) { return false_sharing(false, 3, 4, g); }},
      {"imbalance_omp",
       "imbalance_omp",
       {"4"},
       4,
       "imbalance_omp T=4 N=1536 ",
       [](int g) { return imbalance(4, kImbalanceOmpN, g); }},
      // reused=yes: the stages got each other's freed blocks back.
      {"work_buffers_pthreads",
       "work_buffers_pthreads",
       {"1024", "4", "4"},
       3,
       "work_buffers_pthreads N=1024 K=4 R=4 reused=yes ",
       [](int g) { return work_buffers(4, 4, g); }},
  };
  static_assert(kStencilOmpH % 4 == 0 && kImbalanceOmpN % (8 * 4) == 0);
  return list;
}

struct Case {
  const Example* example;
  std::string compiler;  // gcc | clang
  std::string opt;       // O1 | O2
  int granularity;
  std::string name() const {
    return example->label + "_" + compiler + "_" + opt + "_g" + std::to_string(granularity);
  }
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name(); }

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (const Example& ex : examples())
    for (const char* cc : {"gcc", "clang"})
      for (const char* opt : {"O1", "O2"})
        for (int g : {8, 64}) cases.push_back({&ex, cc, opt, g});
  return cases;
}

// Parses `weft comm --format json` and compares it with the expectation.
void check_comm_json(const std::string& text, const std::string& kind, const Matrix& expected,
                     const std::string& context) {
  SCOPED_TRACE(context + " --kind " + kind);
  json j;
  try {
    j = json::parse(text);
  } catch (const std::exception& e) {
    FAIL() << "weft comm did not print JSON: " << e.what() << "\n" << text;
  }
  ASSERT_TRUE(j.is_object()) << text;
  ASSERT_TRUE(j.contains("region") && j["region"].is_null()) << text;
  ASSERT_EQ(j.value("kind", std::string()), kind) << text;
  const int T = int(expected.size());
  std::vector<long long> ids(T);
  for (int i = 0; i < T; i++) ids[i] = i;
  ASSERT_TRUE(j.contains("threads") && j["threads"].is_array()) << text;
  ASSERT_EQ(j["threads"].get<std::vector<long long>>(), ids) << "thread ids";
  ASSERT_TRUE(j.contains("matrix") && j["matrix"].is_array()) << text;
  const Matrix actual = j["matrix"].get<Matrix>();
  ASSERT_EQ(actual.size(), expected.size()) << text;
  long long sum = 0;
  for (const auto& row : actual) {
    ASSERT_EQ(row.size(), expected.size()) << text;
    for (long long v : row) sum += v;
  }
  std::ostringstream diff;
  for (int w = 0; w < T; w++)
    for (int r = 0; r < T; r++)
      if (actual[w][r] != expected[w][r])
        diff << "  " << kind << "[" << w << "][" << r << "]: expected " << expected[w][r]
             << ", got " << actual[w][r] << "\n";
  EXPECT_TRUE(diff.str().empty()) << "mismatches (writer, reader):\n"
                                  << diff.str() << "expected:\n"
                                  << format_matrix(expected) << "actual:\n"
                                  << format_matrix(actual);
  ASSERT_TRUE(j.contains("total")) << text;
  EXPECT_EQ(j["total"].get<long long>(), sum) << "total is not the sum of the matrix";
}

// Runs the example's native build (which prints the sizes the formulas
// assume), then `program` under `weft record` with `backend` (after `env`,
// variables for weft as `env` takes them), and checks the raw, rar and
// inval matrices exactly; `inspect` then sees the profile. Returns the
// three JSON texts.
std::vector<std::string> record_and_check(
    const Example& ex, const fs::path& program, const std::string& backend, int granularity,
    const std::string& context, const std::vector<std::string>& env = {},
    const std::function<void(const fs::path& profile)>& inspect = nullptr) {
  std::vector<std::string> texts;
  const fs::path native = examples_dir() / (ex.program + ".native");
  EXPECT_TRUE(fs::exists(program)) << program << " is not built";
  EXPECT_TRUE(fs::exists(native)) << native << " is not built";
  EXPECT_TRUE(fs::exists(weft_exe())) << weft_exe() << " is not built";
  if (!fs::exists(program) || !fs::exists(native) || !fs::exists(weft_exe())) return texts;
  TempDir tmp;

  std::vector<std::string> native_cmd{native.string()};
  native_cmd.insert(native_cmd.end(), ex.args.begin(), ex.args.end());
  const RunResult nat = run(native_cmd, tmp.path);
  EXPECT_EQ(nat.status, 0) << nat.describe(native_cmd);
  EXPECT_EQ(nat.out.rfind(ex.output_prefix, 0), 0u)
      << "the example does not run with the sizes the formulas assume\n"
      << nat.describe(native_cmd);

  const fs::path db = tmp.path / "out.db";
  std::vector<std::string> record;
  if (!env.empty()) {
    record.push_back("/usr/bin/env");
    record.insert(record.end(), env.begin(), env.end());
  }
  const std::vector<std::string> weft_record{weft_exe().string(),
                                             "record",
                                             "-o",
                                             db.string(),
                                             "--backend",
                                             backend,
                                             "--granularity",
                                             std::to_string(granularity),
                                             "--",
                                             program.string()};
  record.insert(record.end(), weft_record.begin(), weft_record.end());
  record.insert(record.end(), ex.args.begin(), ex.args.end());
  const RunResult rec = run(record, tmp.path);
  EXPECT_EQ(rec.status, 0) << rec.describe(record);
  if (rec.status != 0) return texts;
  // The recorded program computes the same thing as the native one.
  EXPECT_NE(rec.out.find(nat.out), std::string::npos)
      << "output under weft record differs from the native output:\n"
      << nat.out << rec.describe(record);

  const Expected x = ex.expected(granularity);
  const std::pair<const char*, const Matrix*> kinds[] = {
      {"raw", &x.raw}, {"rar", &x.rar}, {"inval", &x.inval}};
  for (const auto& [kind, matrix] : kinds) {
    std::vector<std::string> comm{weft_exe().string(), "comm", db.string(), "--kind", kind,
                                  "--format",          "json"};
    const RunResult q = run(comm, tmp.path);
    EXPECT_EQ(q.status, 0) << q.describe(comm);
    check_comm_json(q.out, kind, *matrix, context);
    texts.push_back(q.out);
  }
  if (inspect) inspect(db);
  return texts;
}

class ExampleMatrices : public ::testing::TestWithParam<Case> {};

TEST_P(ExampleMatrices, ExactRawRarInval) {
  const Case& c = GetParam();
  record_and_check(*c.example,
                   examples_dir() / (c.example->program + "." + c.compiler + "." + c.opt),
                   "compile", c.granularity, c.name());
}

INSTANTIATE_TEST_SUITE_P(Examples, ExampleMatrices, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.name();
                         });

// In a long run (here sampled from the first block, WEFT_SAMPLING_AFTER_BLOCKS
// =0) a thread runs the segments every sampled analysis skips with
// communication alone, through the hooks' communication-only path
// (docs/metrics.md, "Sampled section instances"): the matrices must stay
// exact. stencil_pthreads over 40 sweeps (a pthread barrier, one key per
// thread): past the first 8 passes, each block of 8 has its counted pass
// and that pass's warm-up analyzed, the same two false sharing analyzes,
// so the segments run with communication alone are exactly the ones false
// sharing skips (25 per thread).
Expected stencil_40_sweeps(int g) { return stencil(3, 64, 40, g); }
const Example kStencil40{"stencil_pthreads_40",
                         "stencil_pthreads",
                         {"3", "12", "64", "40"},
                         3,
                         "stencil_pthreads T=3 H=12 M=64 S=40 ",
                         stencil_40_sweeps};

class SampledMatrices : public ::testing::TestWithParam<Case> {};

TEST_P(SampledMatrices, StayExactInSegmentsRunWithCommunicationAlone) {
  const Case& c = GetParam();
  record_and_check(
      *c.example, examples_dir() / (c.example->program + "." + c.compiler + "." + c.opt), "compile",
      c.granularity, c.name() + " (sampled)", {"WEFT_SAMPLING_AFTER_BLOCKS=0"},
      [](const fs::path& profile) {
        const auto alone =
            weft_test::profile_meta(profile.string(), "communication_alone_segments");
        EXPECT_EQ(alone, "75");
        EXPECT_EQ(alone, weft_test::profile_meta(profile.string(), "falseshare_skipped_segments"));
      });
}

INSTANTIATE_TEST_SUITE_P(Examples, SampledMatrices,
                         ::testing::Values(Case{&kStencil40, "gcc", "O2", 64},
                                           Case{&kStencil40, "clang", "O1", 8}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.name();
                         });

// ---- the binary source: the same programs, built plainly, under Valgrind -------

// Plain builds (gcc -O1 -g, clang -O2 -g; examples/CMakeLists.txt) must give
// exactly the matrices the compile-time source gives, at word and line
// granularity.
struct PlainCase {
  const Example* example;
  std::string build;  // gcc.O1 | clang.O2
  int granularity;
  std::string name() const {
    std::string b = build;
    for (char& ch : b)
      if (ch == '.') ch = '_';
    return example->label + "_" + b + "_g" + std::to_string(granularity);
  }
};

void PrintTo(const PlainCase& c, std::ostream* os) { *os << c.name(); }

std::vector<PlainCase> plain_cases() {
  std::vector<PlainCase> cases;
  for (const Example& ex : examples())
    for (const char* build : {"gcc.O1", "clang.O2"})
      for (int g : {8, 64}) cases.push_back({&ex, build, g});
  return cases;
}

class ValgrindMatrices : public ::testing::TestWithParam<PlainCase> {};

TEST_P(ValgrindMatrices, ExactRawRarInvalOfUnmodifiedBinary) {
  const PlainCase& c = GetParam();
  record_and_check(*c.example, examples_dir() / (c.example->program + ".plain." + c.build),
                   "valgrind", c.granularity, c.name() + " (valgrind)");
}

INSTANTIATE_TEST_SUITE_P(Examples, ValgrindMatrices, ::testing::ValuesIn(plain_cases()),
                         [](const ::testing::TestParamInfo<PlainCase>& info) {
                           return info.param.name();
                         });

// The differential test: both sources on the same example print the same
// matrices (same gcc -O1, line granularity).
class SourcesAgree : public ::testing::TestWithParam<const Example*> {};

TEST_P(SourcesAgree, CompileTimeAndBinarySourceGiveTheSameMatrices) {
  const Example& ex = *GetParam();
  const auto compiled =
      record_and_check(ex, examples_dir() / (ex.program + ".gcc.O1"), "compile", 64, ex.label);
  const auto binary = record_and_check(ex, examples_dir() / (ex.program + ".plain.gcc.O1"),
                                       "valgrind", 64, ex.label + " (valgrind)");
  ASSERT_EQ(compiled.size(), 3u);
  ASSERT_EQ(binary.size(), 3u);
  for (size_t k = 0; k < 3; ++k)
    EXPECT_EQ(json::parse(compiled[k])["matrix"], json::parse(binary[k])["matrix"])
        << "kind " << json::parse(compiled[k])["kind"];
}

std::vector<const Example*> example_pointers() {
  std::vector<const Example*> list;
  for (const Example& ex : examples()) list.push_back(&ex);
  return list;
}

INSTANTIATE_TEST_SUITE_P(Examples, SourcesAgree, ::testing::ValuesIn(example_pointers()),
                         [](const ::testing::TestParamInfo<const Example*>& info) {
                           return info.param->label;
                         });

// A weft-cc build under the binary source: its dormant runtime (with its own
// copy of every interposer) changes nothing, so the threads and matrices are
// exactly the plain build's (and the compile-time source's), gcc and clang.
std::vector<PlainCase> instrumented_cases() {
  std::vector<PlainCase> cases;
  for (const Example& ex : examples())
    for (const char* build : {"gcc.O1", "clang.O2"}) cases.push_back({&ex, build, 64});
  return cases;
}

class WeftCcBuildUnderValgrind : public ::testing::TestWithParam<PlainCase> {};

TEST_P(WeftCcBuildUnderValgrind, SameThreadsAndMatricesAsThePlainBuild) {
  const PlainCase& c = GetParam();
  record_and_check(*c.example, examples_dir() / (c.example->program + "." + c.build), "valgrind",
                   c.granularity, c.name() + " (weft-cc build, valgrind)");
}

INSTANTIATE_TEST_SUITE_P(Examples, WeftCcBuildUnderValgrind,
                         ::testing::ValuesIn(instrumented_cases()),
                         [](const ::testing::TestParamInfo<PlainCase>& info) {
                           return info.param.name();
                         });

// ---- a Makefile project built with the wrappers --------------------------------

bool file_contains(const fs::path& p, const std::string& needle) {
  return read_file(p).find(needle) != std::string::npos;
}

class MakeProject : public ::testing::TestWithParam<std::string> {};

TEST_P(MakeProject, BuildsWithWrappersAndRunsOutsideRecord) {
  const std::string cc = GetParam();
  const std::string cxx = cc == "gcc" ? "g++" : "clang++";
  TempDir tmp;
  const fs::path src = tmp.path / "src";
  fs::copy(WEFT_MAKEPROJ_DIR, src, fs::copy_options::recursive);

  const std::vector<std::string> make{"make", "-C", src.string()};
  const RunResult built = run(make, tmp.path,
                              {{"CC", (bin_dir() / "weft-cc").string()},
                               {"CXX", (bin_dir() / "weft-c++").string()},
                               {"WEFT_CC", cc},
                               {"WEFT_CXX", cxx}});
  ASSERT_EQ(built.status, 0) << built.describe(make);

  // The objects are instrumented and the programs link weft's runtime.
  for (const char* obj : {"main_omp.o", "work.o"}) {
    EXPECT_TRUE(file_contains(src / obj, "__tsan_func_entry")) << obj << " is not instrumented";
    EXPECT_TRUE(file_contains(src / obj, "__sanitizer_cov_trace_pc"))
        << obj << " has no coverage hooks";
  }
  for (const char* prog : {"hello_omp", "hello_mixed", "hello_cxx"})
    EXPECT_TRUE(file_contains(src / prog, "libweft-rt.so"))
        << prog << " does not link weft's runtime";

  // Run normally, not under weft record.
  const std::pair<const char*, const char*> programs[] = {
      {"hello_omp", "hello_omp 8416.0 2016.0\n"},
      {"hello_mixed", "hello_mixed 5050 10 20\n"},
      {"hello_cxx", "hello_cxx 4950\n"},
  };
  for (const auto& [prog, expected] : programs) {
    const std::vector<std::string> cmd{(src / prog).string()};
    const RunResult r = run(cmd, tmp.path, {}, src);
    EXPECT_EQ(r.status, 0) << r.describe(cmd);
    EXPECT_EQ(r.out, expected) << r.describe(cmd);
    EXPECT_EQ(r.err, "") << r.describe(cmd);
  }

  // And under weft record, the separately compiled objects report their
  // accesses: thread 1 reads thread 0's block of 64 doubles in work.c, and
  // the reverse, plus the main thread's read of thread 1's result slot.
  ASSERT_TRUE(fs::exists(weft_exe())) << weft_exe() << " is not built";
  const fs::path db = tmp.path / "hello.db";
  const std::vector<std::string> record{
      weft_exe().string(), "record", "-o", db.string(),
      "--granularity",     "8",      "--", (src / "hello_omp").string()};
  const RunResult rec = run(record, tmp.path, {}, src);
  ASSERT_EQ(rec.status, 0) << rec.describe(record);
  EXPECT_NE(rec.out.find("hello_omp 8416.0 2016.0\n"), std::string::npos) << rec.describe(record);
  const std::pair<const char*, Matrix> kinds[] = {
      {"raw", Matrix{{0, 64}, {65, 0}}}, {"rar", zeros(2)}, {"inval", zeros(2)}};
  for (const auto& [kind, matrix] : kinds) {
    const std::vector<std::string> comm{weft_exe().string(), "comm", db.string(), "--kind", kind,
                                        "--format",          "json"};
    const RunResult q = run(comm, tmp.path);
    ASSERT_EQ(q.status, 0) << q.describe(comm);
    check_comm_json(q.out, kind, matrix, "hello_omp " + cc);
  }
}

INSTANTIATE_TEST_SUITE_P(Compilers, MakeProject, ::testing::Values("gcc", "clang"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
