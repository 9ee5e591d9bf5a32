//===- MlirFuzzer.cpp - Mutation fuzzer for the verifier and pipelines ----===//
//
// attn-mlir-fuzzer: reads seed modules (examples/mlir/*.mlir and the
// `// -----` chunks of test/Dialect/**/*.mlir), makes mutants of them with
// MlirMutator (deterministic in --seed and the mutant's index), and for each
// mutant, in this process's children:
//
//   1. parses it (without verifying), then verifies it;
//   2. if it verifies, runs attn-lower-to-llvm and attn-lower-to-nvvm, each
//      on a fresh clone of the module, with the default options;
//   3. checks that every rejection (parse error, verifier or pipeline
//      failure) came with an error diagnostic, and that every error
//      diagnostic has a location in the mutant (not an unknown location).
//
// Mutants run in batches in forked children; a child that dies (a signal,
// an abort, an exit from llvm::report_fatal_error) names the mutant in
// flight, which is run again alone to confirm it and save its stack trace.
// A mutant that runs longer than --timeout seconds is a hang. Each crasher,
// hang and unlocated diagnostic is written to --artifacts; the exit status
// is 1 if there was any.
//
// --corpus runs given files (each `// -----` chunk a case) the same way,
// without mutating them: test/Fuzz/regressions-mlir/ holds the minimised
// crashers found so far.
//
//===----------------------------------------------------------------------===//

#include "MlirMutator.h"

#include "attn/InitAll.h"
#include "attn/Pipelines/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <poll.h>
#include <string>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace attn::fuzz;
namespace cl = llvm::cl;

namespace {

cl::OptionCategory category("attn-mlir-fuzzer options");

cl::list<std::string> seedPaths(cl::Positional,
                                cl::desc("<seed files or directories>"),
                                cl::cat(category));
cl::opt<uint64_t> fuzzSeed("seed",
                           cl::desc("Fuzz seed (mutant i of seed s "
                                    "is always the same text)"),
                           cl::init(1), cl::cat(category));
cl::opt<uint64_t> count("count",
                        cl::desc("Number of mutants (default 1000 "
                                 "unless --max-seconds is given)"),
                        cl::init(0), cl::cat(category));
cl::opt<uint64_t> first("first", cl::desc("Index of the first mutant"),
                        cl::init(0), cl::cat(category));
cl::opt<double> maxSeconds("max-seconds",
                           cl::desc("Stop making mutants after this many "
                                    "seconds (0: no limit)"),
                           cl::init(0), cl::cat(category));
cl::opt<std::string> artifacts("artifacts",
                               cl::desc("Folder for crashers, hangs and "
                                        "unlocated diagnostics"),
                               cl::init("attn-mlir-fuzzer-artifacts"),
                               cl::cat(category));
cl::list<std::string> corpus("corpus",
                             cl::desc("Run this file or folder (each "
                                      "`// -----` chunk a case), and the "
                                      "positional ones, unmutated instead "
                                      "of fuzzing"),
                             cl::cat(category));
cl::opt<unsigned> timeout("timeout",
                          cl::desc("Seconds after which a mutant is a hang"),
                          cl::init(30), cl::cat(category));
cl::opt<unsigned> batchSize("batch", cl::desc("Mutants per child process"),
                            cl::init(25), cl::cat(category));
cl::opt<uint64_t> memoryLimit("memory-limit-mb",
                              cl::desc("Address-space limit of a child in "
                                       "MiB (0: none; ignored under ASan)"),
                              cl::init(8192), cl::cat(category));
cl::opt<int64_t> only("only",
                      cl::desc("Run only mutant N (with its diagnostics)"),
                      cl::init(-1), cl::cat(category));
cl::opt<bool> printMutant("print-mutant",
                          cl::desc("With --only: print the mutant and exit"),
                          cl::init(false), cl::cat(category));
cl::opt<bool> printDiagnostics("print-diagnostics",
                               cl::desc("Print every diagnostic to stderr"),
                               cl::init(false), cl::cat(category));
cl::opt<bool> verbose("verbose", cl::desc("One line per case"), cl::init(false),
                      cl::cat(category));
cl::opt<std::string> reduce("reduce",
                            cl::desc("Minimise this crasher or hang (delete "
                                     "lines while it still fails the same "
                                     "way) and print the result"),
                            cl::init(""), cl::cat(category));
cl::opt<bool> listMutations("list-mutations",
                            cl::desc("List the mutation kinds and exit"),
                            cl::init(false), cl::cat(category));

//===----------------------------------------------------------------------===//
// Cases
//===----------------------------------------------------------------------===//

struct Case {
  std::string name; // for messages: the seed and the mutations
  std::string text;
};

enum class Outcome { ParseError, VerifyError, Verified };
enum class PipelineOutcome { NotRun, Passed, Rejected };

const char *const kStages[] = {"parse", "verify", "attn-lower-to-llvm",
                               "attn-lower-to-nvvm"};

double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool readFile(const std::string &path, std::string &text) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return false;
  text = (*buffer)->getBuffer().str();
  return true;
}

/// The `.mlir` files under \p path (or \p path itself), sorted.
std::vector<std::string> mlirFiles(const std::string &path) {
  std::vector<std::string> files;
  if (!llvm::sys::fs::is_directory(path)) {
    files.push_back(path);
    return files;
  }
  std::error_code ec;
  for (llvm::sys::fs::recursive_directory_iterator it(path, ec), end;
       it != end && !ec; it.increment(ec))
    if (llvm::StringRef(it->path()).ends_with(".mlir") &&
        !llvm::sys::fs::is_directory(it->path()))
      files.push_back(it->path());
  std::sort(files.begin(), files.end());
  return files;
}

/// Splits a file at its `// -----` lines (the -split-input-file marker).
std::vector<std::string> splitChunks(const std::string &text) {
  std::vector<std::string> chunks;
  std::string current;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos)
      end = text.size();
    llvm::StringRef line(text.data() + pos, end - pos);
    if (line.trim().starts_with("// -----")) {
      chunks.push_back(current);
      current.clear();
    } else {
      current += line.str() + "\n";
    }
    pos = end + 1;
  }
  chunks.push_back(current);
  std::vector<std::string> nonEmpty;
  for (std::string &c : chunks) {
    bool code = false;
    for (llvm::StringRef l : llvm::split(c, '\n'))
      if (!l.trim().empty() && !l.trim().starts_with("//"))
        code = true;
    if (code)
      nonEmpty.push_back(std::move(c));
  }
  return nonEmpty;
}

//===----------------------------------------------------------------------===//
// Running one case (in a child)
//===----------------------------------------------------------------------===//

/// True if \p loc points into a file (through names, call sites and fused
/// locations too).
bool isLocated(mlir::Location loc) {
  bool found = false;
  loc->walk([&](mlir::Location l) {
    if (llvm::isa<mlir::FileLineColRange>(l))
      found = true;
    return found ? mlir::WalkResult::interrupt() : mlir::WalkResult::advance();
  });
  return found;
}

/// Counts a stage's error diagnostics and keeps the first unlocated one.
struct Collector {
  unsigned errors = 0;
  std::string unlocated;

  void handle(mlir::Diagnostic &diag) {
    if (printDiagnostics) {
      std::string where;
      llvm::raw_string_ostream os(where);
      diag.getLocation().print(os);
      llvm::errs() << where << ": " << diag.str() << "\n";
    }
    if (diag.getSeverity() != mlir::DiagnosticSeverity::Error)
      return;
    ++errors;
    if (unlocated.empty() && !isLocated(diag.getLocation())) {
      std::string where;
      llvm::raw_string_ostream os(where);
      diag.getLocation().print(os);
      unlocated = "error at " + where + ": " + diag.str();
    }
  }
};

struct Result {
  Outcome outcome = Outcome::ParseError;
  PipelineOutcome llvm = PipelineOutcome::NotRun;
  PipelineOutcome nvvm = PipelineOutcome::NotRun;
  int badStage = -1;        // the stage of the first bad rejection
  std::string badRejection; // what was wrong with it
};

/// The parent's end of the pipe: what a child says about its cases.
class Reporter {
public:
  explicit Reporter(int fd) : fd(fd) {}
  void line(const std::string &text) {
    std::string out = text + "\n";
    const char *data = out.data();
    size_t left = out.size();
    while (left > 0) {
      ssize_t n = ::write(fd, data, left);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        _exit(3);
      data += n;
      left -= n;
    }
  }

private:
  int fd;
};

/// What a stage's rejection lacked, or "".
std::string checkRejection(const Collector &collector) {
  if (collector.errors == 0)
    return "rejected without an error diagnostic";
  if (!collector.unlocated.empty())
    return "diagnostic without a location: " + collector.unlocated;
  return "";
}

Result runCase(mlir::DialectRegistry &registry, const Case &c, size_t index,
               Reporter *reporter) {
  Result result;
  mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
  // Diagnostics print the op they are at, as attn-opt's do: printing an op
  // a pass left broken (a use of an erased value) crashes where verifying
  // it may not.
  context.printStackTraceOnDiagnostic(false);
  Collector *current = nullptr;
  mlir::ScopedDiagnosticHandler handler(
      &context, [&](mlir::Diagnostic &diag) -> mlir::LogicalResult {
        if (current)
          current->handle(diag);
        return mlir::success();
      });
  auto stage = [&](int s) {
    if (reporter)
      reporter->line("S " + std::to_string(index) + " " + std::to_string(s));
  };
  auto reject = [&](int s, const Collector &collector) {
    std::string bad = checkRejection(collector);
    if (!bad.empty() && result.badStage < 0) {
      result.badStage = s;
      result.badRejection = bad;
    }
  };

  stage(0);
  Collector parseDiags;
  current = &parseDiags;
  mlir::ParserConfig config(&context, /*verifyAfterParse=*/false);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(c.text, config, "mutant.mlir");
  if (!module) {
    reject(0, parseDiags);
    return result;
  }

  stage(1);
  Collector verifyDiags;
  current = &verifyDiags;
  if (mlir::failed(mlir::verify(*module))) {
    result.outcome = Outcome::VerifyError;
    reject(1, verifyDiags);
    return result;
  }
  result.outcome = Outcome::Verified;

  for (int s : {2, 3}) {
    stage(s);
    Collector pipelineDiags;
    current = &pipelineDiags;
    mlir::OwningOpRef<mlir::ModuleOp> copy = module->clone();
    mlir::PassManager pm(&context);
    if (s == 2)
      mlir::attn::buildLowerToLLVMPipeline(pm,
                                           mlir::attn::LowerToLLVMOptions());
    else
      mlir::attn::buildLowerToNVVMPipeline(pm,
                                           mlir::attn::LowerToNVVMOptions());
    bool ok = mlir::succeeded(pm.run(*copy));
    (s == 2 ? result.llvm : result.nvvm) =
        ok ? PipelineOutcome::Passed : PipelineOutcome::Rejected;
    if (!ok)
      reject(s, pipelineDiags);
  }
  current = nullptr;
  return result;
}

std::string escapeLine(const std::string &s) {
  std::string out;
  for (char ch : s)
    out += (ch == '\n' || ch == '\r') ? ' ' : ch;
  return out;
}

[[noreturn]] void childMain(mlir::DialectRegistry &registry,
                            const std::vector<Case> &cases, size_t begin,
                            size_t end, int fd, double deadline,
                            const std::string &stderrPath) {
  int err = ::open(stderrPath.empty() ? "/dev/null" : stderrPath.c_str(),
                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (err >= 0 && !printDiagnostics) {
    ::dup2(err, 2);
    ::close(err);
  }
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ATTN_FUZZ_ASAN 1
#endif
#endif
#ifndef ATTN_FUZZ_ASAN
  if (memoryLimit > 0) {
    struct rlimit limit;
    limit.rlim_cur = limit.rlim_max = memoryLimit * 1024 * 1024;
    ::setrlimit(RLIMIT_AS, &limit);
  }
#endif
  Reporter reporter(fd);
  for (size_t i = begin; i < end; ++i) {
    if (deadline > 0 && now() > deadline)
      break;
    reporter.line("B " + std::to_string(i));
    // A case that uses more than --timeout seconds of CPU time is a hang:
    // SIGPROF ends the child, whatever else runs on the machine.
    struct itimerval budget = {};
    budget.it_value.tv_sec = timeout;
    ::setitimer(ITIMER_PROF, &budget, nullptr);
    Result r = runCase(registry, cases[i], i, &reporter);
    budget.it_value.tv_sec = 0;
    ::setitimer(ITIMER_PROF, &budget, nullptr);
    reporter.line(
        "E " + std::to_string(i) + " " + std::to_string(int(r.outcome)) + " " +
        std::to_string(int(r.llvm)) + " " + std::to_string(int(r.nvvm)) + " " +
        std::to_string(r.badStage) + " " + escapeLine(r.badRejection));
  }
  std::fflush(stderr);
  _exit(0);
}

//===----------------------------------------------------------------------===//
// The parent: batches, crashes and hangs
//===----------------------------------------------------------------------===//

struct Finding {
  enum Kind { Crash, Hang, Unlocated } kind;
  size_t index;
  int stage;
  std::string what;
};

struct Totals {
  uint64_t cases = 0, parseErrors = 0, verifyErrors = 0, verified = 0,
           pipelineRejections = 0, llvmRejections = 0, nvvmRejections = 0,
           passed = 0, crashes = 0, hangs = 0, unlocated = 0;
};

std::string describeStatus(int status) {
  if (WIFSIGNALED(status))
    return std::string("signal ") + std::to_string(WTERMSIG(status)) + " (" +
           strsignal(WTERMSIG(status)) + ")";
  if (WIFEXITED(status))
    return "exit status " + std::to_string(WEXITSTATUS(status));
  return "status " + std::to_string(status);
}

/// The CPU time \p pid has used, in seconds (0 if unknown).
double cpuSeconds(pid_t pid) {
  // (MemoryBuffer reads /proc files as empty: their size is 0.)
  std::string path = "/proc/" + std::to_string(pid) + "/stat";
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0)
    return 0;
  char data[1024];
  ssize_t n = ::read(fd, data, sizeof(data) - 1);
  ::close(fd);
  if (n <= 0)
    return 0;
  std::string text(data, n);
  // Fields after the command name (in parentheses): state is field 3,
  // utime and stime are fields 14 and 15.
  size_t close = text.rfind(')');
  if (close == std::string::npos)
    return 0;
  llvm::SmallVector<llvm::StringRef> fields;
  llvm::StringRef(text).substr(close + 2).split(fields, ' ');
  unsigned long long user = 0, system = 0;
  if (fields.size() < 13 || fields[11].getAsInteger(10, user) ||
      fields[12].getAsInteger(10, system))
    return 0;
  return double(user + system) / double(::sysconf(_SC_CLK_TCK));
}

/// What happened to one batch.
struct BatchRun {
  std::vector<std::pair<size_t, Result>> done;
  bool died = false, hung = false;
  /// The case in flight when the child died or hung (or, if it died between
  /// cases, the last one it finished: already in `done`).
  size_t culprit = 0;
  bool culpritDone = false;
  int stage = -1;
  std::string status;
};

BatchRun runBatch(mlir::DialectRegistry &registry,
                  const std::vector<Case> &cases, size_t begin, size_t end,
                  double deadline, const std::string &stderrPath) {
  BatchRun run;
  run.culprit = begin;
  int fds[2];
  if (::pipe(fds) != 0) {
    std::perror("attn-mlir-fuzzer: pipe");
    std::exit(2);
  }
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = ::fork();
  if (pid < 0) {
    std::perror("attn-mlir-fuzzer: fork");
    std::exit(2);
  }
  if (pid == 0) {
    ::close(fds[0]);
    childMain(registry, cases, begin, end, fds[1], deadline, stderrPath);
  }
  ::close(fds[1]);
  std::string buffer;
  bool inFlight = false;
  // The child's CPU-time limit (SIGPROF) decides what is a hang; this
  // wall-clock window only catches a child that blocks without using the
  // CPU. A child that used the CPU in the last window was only slowed
  // down (a loaded machine) and gets another one.
  double windowStart = now(), windowCpu = 0;
  while (true) {
    int wait = -1;
    if (inFlight) {
      double left = windowStart + timeout - now();
      wait = left <= 0 ? 0 : int(left * 1000) + 1;
    }
    struct pollfd p = {fds[0], POLLIN, 0};
    int ready = ::poll(&p, 1, wait);
    if (ready < 0 && errno == EINTR)
      continue;
    if (ready == 0) {
      double cpu = cpuSeconds(pid);
      if (cpu > windowCpu + 0.5) {
        windowStart = now();
        windowCpu = cpu;
        continue;
      }
      ::kill(pid, SIGKILL);
      run.hung = true;
      break;
    }
    char chunk[4096];
    ssize_t n = ::read(fds[0], chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    buffer.append(chunk, n);
    size_t nl;
    while ((nl = buffer.find('\n')) != std::string::npos) {
      std::string line = buffer.substr(0, nl);
      buffer.erase(0, nl + 1);
      char tag = line[0];
      size_t index = std::strtoull(line.c_str() + 2, nullptr, 10);
      if (tag == 'B') {
        inFlight = true;
        run.culprit = index;
        run.stage = -1;
        windowStart = now();
        windowCpu = cpuSeconds(pid);
      } else if (tag == 'S') {
        run.stage = std::atoi(line.c_str() + line.rfind(' ') + 1);
      } else if (tag == 'E') {
        inFlight = false;
        Result r;
        int outcome, llvm, nvvm, bad;
        int consumed = 0;
        std::sscanf(line.c_str() + 2, "%*zu %d %d %d %d %n", &outcome, &llvm,
                    &nvvm, &bad, &consumed);
        r.outcome = Outcome(outcome);
        r.llvm = PipelineOutcome(llvm);
        r.nvvm = PipelineOutcome(nvvm);
        r.badStage = bad;
        if (bad >= 0)
          r.badRejection = line.substr(2 + consumed);
        run.done.push_back({index, r});
      }
    }
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (run.hung) {
    run.status = "no result and no CPU time used for " +
                 std::to_string(timeout) + " s (blocked)";
  } else if (inFlight && WIFSIGNALED(status) && WTERMSIG(status) == SIGPROF) {
    run.hung = true;
    run.status = "more than " + std::to_string(timeout) + " s of CPU time";
  } else if (inFlight) {
    run.died = true;
    run.status = describeStatus(status);
  } else if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
    // Died between cases (at exit, say): blame the last one.
    run.died = true;
    if (!run.done.empty()) {
      run.culprit = run.done.back().first;
      run.culpritDone = true;
    }
    run.status = describeStatus(status) + " after the case finished";
  }
  return run;
}

class Fuzzer {
public:
  Fuzzer(mlir::DialectRegistry &registry, std::vector<Case> &cases,
         bool fuzzing)
      : registry(registry), cases(cases), fuzzing(fuzzing) {}

  /// Runs cases [begin, end) with crash isolation; false once the deadline
  /// has passed.
  bool run(size_t begin, size_t end, double deadline) {
    size_t next = begin;
    while (next < end) {
      if (deadline > 0 && now() > deadline)
        return false;
      BatchRun batch = runBatch(registry, cases, next, end, deadline, "");
      for (auto &[index, result] : batch.done)
        record(index, result);
      if (!batch.died && !batch.hung) {
        if (batch.done.empty() || batch.done.back().first + 1 < end)
          return false; // the child stopped at the deadline
        return true;
      }
      confirm(batch.culprit, batch);
      next = batch.culprit + 1;
    }
    return true;
  }

  const Totals &totals() const { return sums; }
  const std::vector<Finding> &findings() const { return found; }

private:
  void record(size_t index, const Result &r) {
    ++sums.cases;
    switch (r.outcome) {
    case Outcome::ParseError:
      ++sums.parseErrors;
      break;
    case Outcome::VerifyError:
      ++sums.verifyErrors;
      break;
    case Outcome::Verified:
      ++sums.verified;
      sums.llvmRejections += r.llvm == PipelineOutcome::Rejected;
      sums.nvvmRejections += r.nvvm == PipelineOutcome::Rejected;
      if (r.llvm == PipelineOutcome::Passed &&
          r.nvvm == PipelineOutcome::Passed)
        ++sums.passed;
      else
        ++sums.pipelineRejections;
      break;
    }
    if (verbose) {
      static const char *outcomes[] = {"parse error", "verifier rejection",
                                       "verified"};
      static const char *pipes[] = {"-", "passed", "rejected"};
      llvm::outs() << "case " << index << " (" << cases[index].name
                   << "): " << outcomes[int(r.outcome)];
      if (r.outcome == Outcome::Verified)
        llvm::outs() << "; llvm " << pipes[int(r.llvm)] << ", nvvm "
                     << pipes[int(r.nvvm)];
      llvm::outs() << "\n";
    }
    if (r.badStage >= 0) {
      ++sums.unlocated;
      report({Finding::Unlocated, index, r.badStage, r.badRejection});
    }
  }

  /// Runs the culprit of a dead or hung batch alone, with its stderr kept.
  void confirm(size_t culprit, const BatchRun &batch) {
    std::string base = artifactBase(batch.hung ? "hang" : "crash", culprit);
    std::string log = base + ".log";
    Finding finding{batch.hung ? Finding::Hang : Finding::Crash, culprit,
                    batch.stage, batch.status};
    if (!batch.hung) {
      BatchRun alone = runBatch(registry, cases, culprit, culprit + 1, 0, log);
      if (alone.died || alone.hung) {
        finding.kind = alone.hung ? Finding::Hang : Finding::Crash;
        finding.stage = alone.stage;
        finding.what = alone.status;
      } else {
        // Still a finding: some state an earlier case of the batch left
        // (a static, a cache) is needed to fail.
        finding.what += " (in its batch; it passed when run alone)";
      }
    }
    if (!batch.culpritDone)
      ++sums.cases;
    ++(finding.kind == Finding::Hang ? sums.hangs : sums.crashes);
    report(finding);
  }

  std::string artifactBase(const char *kind, size_t index) {
    llvm::sys::fs::create_directories(artifacts);
    std::string name =
        fuzzing ? std::string(kind) + "-seed" + std::to_string(fuzzSeed) + "-" +
                      std::to_string(index)
                : std::string(kind) + "-case" + std::to_string(index);
    llvm::SmallString<256> path(artifacts);
    llvm::sys::path::append(path, name);
    return std::string(path);
  }

  void report(const Finding &f) {
    static const char *kinds[] = {"crash", "hang", "unlocated"};
    std::string stage = f.stage >= 0 ? kStages[f.stage] : "startup";
    std::string base = artifactBase(kinds[f.kind], f.index);
    std::string path = base + ".mlir";
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (!ec) {
      os << "// attn-mlir-fuzzer: " << kinds[f.kind] << " in " << stage << ": "
         << f.what << "\n";
      if (fuzzing)
        os << "// reproduce: attn-mlir-fuzzer --seed " << fuzzSeed << " --only "
           << f.index << " <seeds>, or --corpus this file\n";
      os << "// case: " << cases[f.index].name << "\n";
      os << cases[f.index].text;
    }
    llvm::outs() << kinds[f.kind] << ": case " << f.index << " ("
                 << cases[f.index].name << ") in " << stage << ": " << f.what
                 << "\n  -> " << path
                 << (f.kind == Finding::Crash ? " (stack: " + base + ".log)"
                                              : std::string())
                 << "\n";
    llvm::outs().flush();
    found.push_back(f);
  }

  mlir::DialectRegistry &registry;
  std::vector<Case> &cases;
  bool fuzzing;
  Totals sums;
  std::vector<Finding> found;
};

//===----------------------------------------------------------------------===//
// Reduction
//===----------------------------------------------------------------------===//

/// How a case fails: "crash <stage>", "hang <stage>" or "" (it does not).
std::string failure(mlir::DialectRegistry &registry, const std::string &text) {
  std::vector<Case> one = {{"reduce", text}};
  BatchRun run = runBatch(registry, one, 0, 1, 0, "");
  if (!run.died && !run.hung)
    return "";
  return std::string(run.hung ? "hang " : "crash ") + std::to_string(run.stage);
}

/// Deletes runs of lines (halving their length down to one line) while the
/// case keeps failing as it did.
int reduceFile(mlir::DialectRegistry &registry, const std::string &path) {
  std::string text;
  if (!readFile(path, text)) {
    llvm::errs() << "attn-mlir-fuzzer: cannot read '" << path << "'\n";
    return 2;
  }
  std::string expected = failure(registry, text);
  if (expected.empty()) {
    llvm::errs() << "attn-mlir-fuzzer: '" << path
                 << "' neither crashes nor hangs\n";
    return 1;
  }
  llvm::errs() << "reducing (" << expected << ")";
  std::vector<std::string> lines;
  for (llvm::StringRef line : llvm::split(text, '\n'))
    lines.push_back(line.str());
  auto joined = [](const std::vector<std::string> &ls) {
    std::string out;
    for (const std::string &l : ls)
      out += l + "\n";
    return out;
  };
  for (size_t run = lines.size() / 2; run >= 1; run /= 2) {
    for (size_t at = 0; at < lines.size();) {
      std::vector<std::string> candidate(lines.begin(), lines.begin() + at);
      candidate.insert(candidate.end(),
                       lines.begin() + std::min(at + run, lines.size()),
                       lines.end());
      if (failure(registry, joined(candidate)) == expected) {
        lines = std::move(candidate);
        llvm::errs() << ".";
      } else {
        at += run;
      }
    }
    if (run == 1)
      break;
  }
  llvm::errs() << " " << lines.size() << " lines\n";
  llvm::outs() << joined(lines);
  return 0;
}

//===----------------------------------------------------------------------===//
// Seeds
//===----------------------------------------------------------------------===//

std::vector<Seed> loadSeeds(mlir::DialectRegistry &registry) {
  std::vector<Seed> seeds;
  mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
  mlir::ScopedDiagnosticHandler quiet(
      &context, [](mlir::Diagnostic &) { return mlir::success(); });
  for (const std::string &path : seedPaths)
    for (const std::string &file : mlirFiles(path)) {
      std::string text;
      if (!readFile(file, text)) {
        llvm::errs() << "attn-mlir-fuzzer: cannot read '" << file << "'\n";
        std::exit(2);
      }
      // Ops the seed itself leaves without a location would make every
      // diagnostic at them look like a finding.
      for (size_t at = text.find(" loc(unknown)"); at != std::string::npos;
           at = text.find(" loc(unknown)", at))
        text.erase(at, std::strlen(" loc(unknown)"));
      std::vector<std::string> chunks = splitChunks(text);
      for (size_t i = 0; i < chunks.size(); ++i) {
        Seed seed;
        seed.name = file + (chunks.size() > 1 ? "#" + std::to_string(i) : "");
        seed.custom = chunks[i];
        mlir::ParserConfig config(&context, /*verifyAfterParse=*/false);
        mlir::OwningOpRef<mlir::ModuleOp> module =
            mlir::parseSourceString<mlir::ModuleOp>(chunks[i], config);
        if (module) {
          seed.weight = mlir::succeeded(mlir::verify(*module)) ? 8 : 2;
          llvm::raw_string_ostream os(seed.generic);
          (*module)->print(
              os,
              mlir::OpPrintingFlags().printGenericOpForm().assumeVerified());
          os << "\n";
        }
        seeds.push_back(std::move(seed));
      }
    }
  return seeds;
}

std::string mutantName(const std::vector<Seed> &seeds, const Mutant &m) {
  std::string name = seeds[m.seed].name + ": ";
  for (size_t i = 0; i < m.mutations.size(); ++i)
    name += (i ? ", " : "") + m.mutations[i];
  return name;
}

void printTotals(const Totals &t, double seconds, bool fuzzing,
                 size_t seedCount) {
  llvm::outs() << "attn-mlir-fuzzer: " << t.cases
               << (fuzzing ? " mutants" : " cases");
  if (fuzzing)
    llvm::outs() << " of " << seedCount << " seeds (seed " << fuzzSeed << ")";
  llvm::outs() << " in " << llvm::format("%.1f", seconds) << " s\n"
               << "  parse errors:          " << t.parseErrors << "\n"
               << "  verifier rejections:   " << t.verifyErrors << "\n"
               << "  verified:              " << t.verified << "\n"
               << "  pipeline rejections:   " << t.pipelineRejections
               << " (attn-lower-to-llvm " << t.llvmRejections
               << ", attn-lower-to-nvvm " << t.nvvmRejections << ")\n"
               << "  passed both pipelines: " << t.passed << "\n"
               << "  crashes:               " << t.crashes << "\n"
               << "  hangs (> " << timeout << " s):         " << t.hangs << "\n"
               << "  unlocated rejections:  " << t.unlocated << "\n";
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "attn-mlir-fuzzer: mutation fuzzer for the attn verifier and "
      "pipelines\n");

  if (listMutations) {
    for (const std::string &kind : mutationKinds())
      llvm::outs() << kind << "\n";
    return 0;
  }

  mlir::DialectRegistry registry;
  mlir::attn::registerCodegenDialects(registry);

  if (!reduce.empty())
    return reduceFile(registry, reduce);

  std::vector<Case> cases;
  double start = now();
  if (!corpus.empty()) {
    // `--corpus a b` names a; b is positional.
    std::vector<std::string> paths(corpus.begin(), corpus.end());
    paths.insert(paths.end(), seedPaths.begin(), seedPaths.end());
    for (const std::string &path : paths)
      for (const std::string &file : mlirFiles(path)) {
        std::string text;
        if (!readFile(file, text)) {
          llvm::errs() << "attn-mlir-fuzzer: cannot read '" << file << "'\n";
          return 2;
        }
        std::vector<std::string> chunks = splitChunks(text);
        for (size_t i = 0; i < chunks.size(); ++i)
          cases.push_back(
              {file + (chunks.size() > 1 ? "#" + std::to_string(i) : ""),
               chunks[i]});
      }
    if (cases.empty()) {
      llvm::errs() << "attn-mlir-fuzzer: the corpus is empty\n";
      return 2;
    }
    Fuzzer fuzzer(registry, cases, /*fuzzing=*/false);
    fuzzer.run(0, cases.size(), 0);
    printTotals(fuzzer.totals(), now() - start, false, 0);
    return fuzzer.findings().empty() ? 0 : 1;
  }

  if (seedPaths.empty()) {
    llvm::errs() << "attn-mlir-fuzzer: give seed files or folders (or "
                    "--corpus)\n";
    return 2;
  }
  std::vector<Seed> seeds = loadSeeds(registry);
  if (seeds.empty()) {
    llvm::errs() << "attn-mlir-fuzzer: no seeds\n";
    return 2;
  }

  if (only >= 0) {
    Mutant m = makeMutant(seeds, fuzzSeed, only);
    if (printMutant) {
      llvm::outs() << "// " << mutantName(seeds, m) << "\n" << m.text;
      return 0;
    }
    cases.resize(only + 1);
    cases[only] = {mutantName(seeds, m), m.text};
    verbose = true;
    Fuzzer fuzzer(registry, cases, /*fuzzing=*/true);
    fuzzer.run(only, only + 1, 0);
    return fuzzer.findings().empty() ? 0 : 1;
  }

  uint64_t total =
      count ? count.getValue() : (maxSeconds > 0 ? UINT64_MAX : 1000);
  double deadline = maxSeconds > 0 ? start + maxSeconds : 0;
  Fuzzer fuzzer(registry, cases, /*fuzzing=*/true);
  for (uint64_t begin = first; begin - first < total;) {
    uint64_t end = std::min<uint64_t>(begin + batchSize, first + total);
    cases.resize(end);
    for (uint64_t i = begin; i < end; ++i) {
      Mutant m = makeMutant(seeds, fuzzSeed, i);
      cases[i] = {mutantName(seeds, m), std::move(m.text)};
    }
    if (!fuzzer.run(begin, end, deadline))
      break;
    // Keep memory flat over long runs.
    for (uint64_t i = begin; i < end; ++i)
      cases[i].text.clear();
    begin = end;
  }
  printTotals(fuzzer.totals(), now() - start, true, seeds.size());
  return fuzzer.findings().empty() ? 0 : 1;
}
