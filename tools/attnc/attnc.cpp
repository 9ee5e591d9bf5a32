//===- attnc.cpp - The attn compiler driver -------------------------------===//
//
//   attnc SPEC --emit=ast|mlir|linalg|llvm [-o OUT] [--set N=4096]
//   attnc SPEC --emit=obj [-o DIR] [--set N=4096]   (DIR/NAME.o, DIR/NAME.h)
//   attnc run SPEC [--set N=4096] [--inputs DIR] [--save DIR] [--seed S]
//   attnc report SPEC [--set N=4096] [--target cpu|nvptx|FILE]
//                     [--heads h --head-dim d] [--json]
//
// Exit status 0 on success and 1 on any user error, reported as
// `file:line:col: error: message` with the source line and a caret; output
// files are written to a temporary file and renamed, never half-written.
//
//===----------------------------------------------------------------------===//

#include "attn/Analysis/CostModel.h"
#include "attn/Dialect/Attn/Transforms/TermCost.h"
#include "attn/Frontend/MLIRGen.h"
#include "attn/Frontend/Parser.h"
#include "attn/Frontend/RunSetup.h"
#include "attn/InitAll.h"
#include "attn/Reference/Reference.h"
#include "attn/Support/InputGenerator.h"
#include "attn/Support/Npy.h"

#include "Emit.h"
#include "JitRunner.h"

#include "GpuRuntime.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <sstream>

using namespace attn;
using namespace attn::frontend;
namespace cl = llvm::cl;

//===----------------------------------------------------------------------===//
// Command line
//===----------------------------------------------------------------------===//

static cl::OptionCategory attncCategory("attnc options");
static cl::SubCommand runCommand(
    "run", "Evaluate a spec on given or generated inputs (reference "
           "evaluator) and write the output");

static cl::SubCommand reportCommand(
    "report", "Explain the cost model's choice of order and chunk per term");

static cl::opt<std::string> specPath(cl::Positional, cl::desc("<spec.attn>"),
                                     cl::Required,
                                     cl::sub(cl::SubCommand::getTopLevel()),
                                     cl::sub(runCommand),
                                     cl::sub(reportCommand));

enum class EmitKind { AST, MLIR, Linalg, LLVM, Obj, PTX, Cubin };
static cl::opt<EmitKind> emitKind(
    "emit", cl::desc("What to emit"), cl::init(EmitKind::MLIR),
    cl::values(
        clEnumValN(EmitKind::AST, "ast", "the parsed spec"),
        clEnumValN(EmitKind::MLIR, "mlir", "the attn dialect"),
        clEnumValN(EmitKind::Linalg, "linalg",
                   "after attn-select-order and convert-attn-to-linalg"),
        clEnumValN(EmitKind::LLVM, "llvm",
                   "LLVM IR with the C entry point, optimised at -O3"),
        clEnumValN(EmitKind::Obj, "obj",
                   "NAME.o and NAME.h (the C entry point) in the -o DIR"),
        clEnumValN(EmitKind::PTX, "ptx",
                   "the kernels' PTX (--target=nvptx)"),
        clEnumValN(EmitKind::Cubin, "cubin",
                   "the kernels' cubin, made by ptxas (--target=nvptx)")),
    cl::sub(cl::SubCommand::getTopLevel()), cl::cat(attncCategory));

static cl::opt<std::string> outputPath(
    "o", cl::desc("Output file (--emit=obj: output directory)"),
    cl::value_desc("file|dir"), cl::init("-"),
    cl::sub(cl::SubCommand::getTopLevel()), cl::cat(attncCategory));

static cl::list<std::string>
    sizeSettings("set", cl::desc("Bind a size: --set N=4096"),
                 cl::value_desc("NAME=VALUE"),
                 cl::sub(cl::SubCommand::getTopLevel()), cl::sub(runCommand),
                 cl::sub(reportCommand), cl::cat(attncCategory));

static cl::opt<std::string>
    inputsDir("inputs",
              cl::desc("Read each input from DIR/<input name>.npy when present"),
              cl::value_desc("DIR"), cl::sub(runCommand),
              cl::cat(attncCategory));

static cl::opt<std::string>
    saveDir("save", cl::desc("Write every input used and out.npy to DIR"),
            cl::value_desc("DIR"), cl::sub(runCommand), cl::cat(attncCategory));

static cl::opt<uint64_t>
    seed("seed", cl::desc("Seed for generated inputs (default 0)"),
         cl::init(0), cl::sub(runCommand), cl::cat(attncCategory));

static cl::opt<std::string> targetName(
    "target",
    cl::desc("Where the code runs: cpu or nvptx (attnc report also takes a "
             "target description file)"),
    cl::value_desc("cpu|nvptx|FILE"), cl::init("cpu"),
    cl::sub(cl::SubCommand::getTopLevel()), cl::sub(runCommand),
    cl::sub(reportCommand), cl::cat(attncCategory));

static cl::opt<std::string>
    chipName("chip", cl::desc("GPU of --target=nvptx (default sm_90)"),
             cl::value_desc("sm_80|sm_86|sm_89|sm_90|sm_90a"),
             cl::init("sm_90"), cl::sub(cl::SubCommand::getTopLevel()),
             cl::sub(runCommand), cl::cat(attncCategory));

static cl::opt<int64_t> layerHeads(
    "heads", cl::desc("Heads h, for the whole-layer view (with --head-dim)"),
    cl::init(0), cl::sub(reportCommand), cl::cat(attncCategory));

static cl::opt<int64_t> layerHeadDim(
    "head-dim", cl::desc("Head size d, for the whole-layer view"),
    cl::init(0), cl::sub(reportCommand), cl::cat(attncCategory));

static cl::opt<bool> jsonOutput("json", cl::desc("Print one JSON object"),
                                cl::sub(reportCommand), cl::sub(runCommand),
                                cl::cat(attncCategory));

static cl::opt<bool> useReference(
    "reference", cl::desc("Evaluate with the reference evaluator instead of "
                          "the compiled code"),
    cl::sub(runCommand), cl::cat(attncCategory));

static cl::opt<bool> checkResult(
    "check", cl::desc("Compare the compiled code with the reference "
                      "evaluator; exit 1 beyond the tolerance"),
    cl::sub(runCommand), cl::cat(attncCategory));

static cl::opt<bool> benchmark(
    "bench", cl::desc("Time repeated runs of the compiled code"),
    cl::sub(runCommand), cl::cat(attncCategory));

static cl::opt<int64_t> benchRepeats(
    "repeat", cl::desc("Runs timed by --bench (default 10)"), cl::init(10),
    cl::sub(runCommand), cl::cat(attncCategory));

static cl::opt<std::string> forceOrder(
    "force-order", cl::desc("Force every auto order: qk_first or kv_first"),
    cl::value_desc("qk_first|kv_first"), cl::init(""), cl::sub(runCommand),
    cl::sub(cl::SubCommand::getTopLevel()), cl::cat(attncCategory));

static cl::opt<bool> emulateGpu(
    "emulate-gpu",
    cl::desc("With --target=nvptx: run the GPU kernels on the host CPU, "
             "thread by thread (tests the GPU mapping without a GPU)"),
    cl::sub(runCommand), cl::cat(attncCategory));

static cl::opt<int64_t> threads(
    "threads", cl::desc("Threads of the compiled code (default: every core)"),
    cl::init(0), cl::sub(runCommand), cl::cat(attncCategory));

//===----------------------------------------------------------------------===//
// Diagnostics
//===----------------------------------------------------------------------===//

static int userError(const std::string &message) {
  llvm::errs() << "attnc: error: " << message << "\n";
  return 1;
}

static int specError(const SourceFile &source, const Diagnostic &diag) {
  llvm::errs() << source.render(diag.loc, diag.message);
  return 1;
}

/// Finds the spec location (and the term name) inside an MLIR location.
static void findSpecLocation(mlir::Location loc, SourceLocation &result,
                             std::string &termName) {
  if (auto fileLoc = llvm::dyn_cast<mlir::FileLineColLoc>(loc)) {
    result = {static_cast<int>(fileLoc.getLine()),
              static_cast<int>(fileLoc.getColumn())};
  } else if (auto nameLoc = llvm::dyn_cast<mlir::NameLoc>(loc)) {
    termName = nameLoc.getName().str();
    findSpecLocation(nameLoc.getChildLoc(), result, termName);
  } else if (auto fusedLoc = llvm::dyn_cast<mlir::FusedLoc>(loc)) {
    for (mlir::Location inner : fusedLoc.getLocations())
      findSpecLocation(inner, result, termName);
  }
}

static void replaceAll(std::string &text, const std::string &from,
                       const std::string &to) {
  for (size_t pos = text.find(from); pos != std::string::npos;
       pos = text.find(from, pos + to.size()))
    text.replace(pos, from.size(), to);
}

/// Generates the module for \p sizes and verifies it, reporting a verifier
/// error at the spec location of the term it comes from, in the spec's words.
/// The spec's words for an MLIR diagnostic: its spec location (and term
/// name) and the message without dialect spellings.
static Diagnostic toSpecDiagnostic(mlir::Diagnostic &diag) {
  Diagnostic error;
  std::string termName;
  findSpecLocation(diag.getLocation(), error.loc, termName);
  error.message = diag.str();
  replaceAll(error.message, "'attn.term' op ", "term '" + termName + "': ");
  replaceAll(error.message, "'attn.combine' op ", "");
  replaceAll(error.message, "'favor_plus'", "'favor+'");
  return error;
}

/// Reports the first error of the passes run while it lives at its spec
/// location, and keeps their remarks quiet.
class SpecDiagnostics {
public:
  SpecDiagnostics(mlir::MLIRContext &context, const SourceFile &source)
      : source(source),
        handler(&context, [this](mlir::Diagnostic &diag) {
          if (diag.getSeverity() == mlir::DiagnosticSeverity::Error &&
              !reported) {
            specError(this->source, toSpecDiagnostic(diag));
            reported = true;
          }
          return mlir::success();
        }) {}
  bool hasReported() const { return reported; }

private:
  const SourceFile &source;
  bool reported = false;
  mlir::ScopedDiagnosticHandler handler;
};

static mlir::OwningOpRef<mlir::ModuleOp>
generateVerifiedModule(mlir::MLIRContext &context, const Spec &spec,
                       const SourceFile &source, const SizeBindings &sizes) {
  std::optional<Diagnostic> firstError;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &diag) {
    if (diag.getSeverity() != mlir::DiagnosticSeverity::Error || firstError)
      return mlir::success();
    firstError = toSpecDiagnostic(diag);
    return mlir::success();
  });
  Diagnostic shapeError;
  if (!checkShapes(spec, sizes, shapeError)) {
    specError(source, shapeError);
    return nullptr;
  }
  mlir::OwningOpRef<mlir::ModuleOp> module =
      generateMLIR(context, spec, source, sizes);
  if (failed(mlir::verify(*module))) {
    if (!firstError)
      firstError = Diagnostic{spec.loc, "the generated IR does not verify"};
    specError(source, *firstError);
    return nullptr;
  }
  return module;
}

/// Parses the `--set NAME=VALUE` flags.
static bool parseSizeSettings(SizeBindings &result) {
  for (const std::string &setting : sizeSettings) {
    size_t equals = setting.find('=');
    std::string name = setting.substr(0, equals);
    std::string value =
        equals == std::string::npos ? "" : setting.substr(equals + 1);
    long long number = 0;
    if (name.empty() || value.empty() ||
        llvm::StringRef(value).getAsInteger(10, number)) {
      userError("--set expects NAME=VALUE with an integer VALUE, got '" +
                setting + "'");
      return false;
    }
    if (result.count(name)) {
      userError("--set " + name + " is given twice");
      return false;
    }
    result[name] = number;
  }
  return true;
}

static std::string shapeString(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

static int writeOutput(const std::string &text) {
  if (llvm::Error error = llvm::writeToOutput(
          outputPath, [&](llvm::raw_ostream &os) -> llvm::Error {
            os << text;
            return llvm::Error::success();
          }))
    return userError("cannot write " + llvm::toString(std::move(error)));
  return 0;
}

/// The code generation target of --target and --chip, or an error message.
static std::optional<attnc::CodegenTarget>
selectCodegenTarget(std::string &error) {
  attnc::CodegenTarget target;
  if (targetName == "nvptx") {
    target.gpu = true;
  } else if (targetName != "cpu") {
    error = "--target must be cpu or nvptx to compile or run, got '" +
            targetName + "' (target description files are for attnc report)";
    return std::nullopt;
  }
  static const char *const chips[] = {"sm_80", "sm_86", "sm_87",
                                      "sm_89", "sm_90", "sm_90a"};
  if (!llvm::is_contained(chips, chipName)) {
    error = "--chip must be one of sm_80, sm_86, sm_87, sm_89, sm_90, "
            "sm_90a, got '" +
            chipName + "'";
    return std::nullopt;
  }
  if (chipName.getNumOccurrences() && !target.gpu) {
    error = "--chip applies to --target=nvptx only";
    return std::nullopt;
  }
  target.chip = chipName;
  return target;
}

//===----------------------------------------------------------------------===//
// attnc run
//===----------------------------------------------------------------------===//

namespace {
/// The inputs of one run, with the sizes they bind.
class RunInputs {
public:
  explicit RunInputs(const Spec &spec) : spec(spec) {}

  /// Reads DIR/<name>.npy for every input found there, binding the dynamic
  /// sizes it determines; \p sizes holds the --set values on entry.
  bool load(const std::string &dir, SizeBindings &sizes) {
    for (const InputDecl &input : spec.inputs) {
      llvm::SmallString<256> path(dir);
      llvm::sys::path::append(path, input.name + ".npy");
      if (!llvm::sys::fs::exists(path))
        continue;
      npy::Array array;
      std::string error = npy::read(path.str().str(), array);
      if (!error.empty())
        return userError(error), false;
      if (!bindFromArray(input, path.str().str(), array, sizes))
        return false;
      arrays[input.name] = std::move(array);
    }
    return true;
  }

  /// Generates every input not read from a file, as attn-gpu-runner does.
  bool generate(const SizeBindings &sizes) {
    std::string error;
    if (!generateInputs(spec, sizes, seed, arrays, error))
      return userError(error), false;
    return true;
  }

  const npy::Array &get(const std::string &name) const {
    return arrays.at(name);
  }
  const InputArrays &all() const { return arrays; }

private:

  bool bindFromArray(const InputDecl &input, const std::string &path,
                     const npy::Array &array, SizeBindings &sizes) {
    if (array.shape.size() != input.shape.size())
      return userError("input '" + input.name + "' in '" + path + "' has " +
                       std::to_string(array.shape.size()) +
                       " dimensions but the spec declares " +
                       std::to_string(input.shape.size())),
             false;
    for (size_t i = 0; i < input.shape.size(); ++i) {
      const ShapeEntry &entry = input.shape[i];
      int64_t actual = array.shape[i];
      std::string where = "input '" + input.name + "' in '" + path +
                          "' has size " + std::to_string(actual) +
                          " in dimension " + std::to_string(i);
      if (entry.isLiteral()) {
        if (entry.value != actual)
          return userError(where + " but the spec declares " +
                           std::to_string(entry.value)),
                 false;
        continue;
      }
      auto bound = sizes.find(entry.name);
      if (bound != sizes.end()) {
        if (bound->second != actual)
          return userError(where + " but " + entry.name + " = " +
                           std::to_string(bound->second) + " (" +
                           boundFrom[entry.name] + ")"),
                 false;
        continue;
      }
      const DimDecl *dim = spec.findDim(entry.name);
      if (dim->value && *dim->value != actual)
        return userError(where + " but the spec declares " + entry.name +
                         " = " + std::to_string(*dim->value)),
               false;
      sizes[entry.name] = actual;
      boundFrom[entry.name] = "from '" + path + "'";
    }
    return true;
  }

  const Spec &spec;
  InputArrays arrays;

public:
  /// Where each bound size came from, for messages.
  std::map<std::string, std::string> boundFrom;
};
} // namespace

namespace {
/// Device copies of a run's arrays (the inputs, then the output), freed
/// when it goes.
struct GpuBuffers {
  std::vector<void *> pointers;
  std::vector<std::vector<int64_t>> shapes;

  GpuBuffers() = default;
  GpuBuffers(const GpuBuffers &) = delete;
  GpuBuffers &operator=(const GpuBuffers &) = delete;
  ~GpuBuffers() {
    for (void *pointer : pointers)
      attn_gpu_free(pointer);
  }

  /// Allocates an array of \p count floats, filled from \p host if given.
  bool add(const float *host, size_t count, const std::vector<int64_t> &shape) {
    size_t bytes = std::max<size_t>(count, 1) * sizeof(float);
    void *pointer = attn_gpu_alloc(bytes);
    if (!pointer)
      return false;
    pointers.push_back(pointer);
    shapes.push_back(shape);
    return !host || attn_gpu_copy_to_device(pointer, host, bytes) == 0;
  }

  /// Copies the output (the last array, \p count floats) to \p host.
  bool copyOutputBack(float *host, size_t count) {
    return attn_gpu_copy_to_host(host, pointers.back(),
                                 count * sizeof(float)) == 0 &&
           !*attn_gpu_error();
  }
};
} // namespace

/// FLOPs counted for --bench: the cost model's count for the strategy the
/// compiled code runs (or the forced one), read off the verified module
/// before it is lowered.
static double nominalFlops(mlir::ModuleOp module) {
  namespace cost = attn::cost;
  cost::Target target = cost::cpuTarget();
  double total = 0;
  module.walk([&](mlir::attn::TermOp op) {
    llvm::SmallVector<std::string> unused;
    cost::TermShape shape = mlir::attn::getTermShape(op, 0, unused);
    cost::TermCost decision = cost::analyzeTerm(shape, target);
    cost::Order order = decision.chosen.order;
    mlir::attn::Order fixed = op.getOrder();
    if (fixed == mlir::attn::Order::QkFirst || forceOrder == "qk_first" ||
        !shape.hasProductForm())
      order = cost::Order::QkFirst;
    else if (fixed == mlir::attn::Order::KvFirst || forceOrder == "kv_first")
      order = cost::Order::KvFirst;
    for (const cost::Strategy &strategy : decision.strategies)
      if (strategy.order == order)
        total += strategy.flops;
  });
  return total;
}

static int runSpec(const Spec &spec, const SourceFile &source,
                   const SizeBindings &overrides) {
  if (!forceOrder.empty() && forceOrder != "qk_first" &&
      forceOrder != "kv_first")
    return userError("--force-order must be qk_first or kv_first, got '" +
                     forceOrder + "'");
  if (benchRepeats < 1)
    return userError("--repeat must be positive");
  // Validate the --set names before reading anything.
  SizeBindings sizes;
  Diagnostic diag;
  if (!bindSizes(spec, overrides, /*allowUnbound=*/true, sizes, diag))
    return specError(source, diag);

  RunInputs inputs(spec);
  SizeBindings known = overrides;
  for (const auto &entry : overrides)
    inputs.boundFrom[entry.first] = "from --set";
  if (!inputsDir.empty()) {
    if (!llvm::sys::fs::is_directory(inputsDir))
      return userError("--inputs '" + inputsDir + "' is not a directory");
    if (!inputs.load(inputsDir, known))
      return 1;
  }
  if (!bindSizes(spec, known, /*allowUnbound=*/false, sizes, diag))
    return specError(source, diag);

  // The dialect verifier checks every constraint of DESIGN §1 on the
  // concrete sizes, so a bad combination is reported at its term.
  mlir::DialectRegistry registry;
  mlir::attn::registerCodegenDialects(registry);
  mlir::MLIRContext context(registry);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      generateVerifiedModule(context, spec, source, sizes);
  if (!module)
    return 1;

  if (!inputs.generate(sizes))
    return 1;
  reference::Problem problem = buildProblem(spec, inputs.all());
  npy::Array out;
  out.shape = {problem.batch, problem.heads, problem.queries,
               problem.valueDim};
  out.data.resize(problem.batch * problem.heads * problem.queries *
                  problem.valueDim);

  npy::Array expected;
  if (useReference || checkResult) {
    expected = out;
    std::string error = reference::evaluate(problem, expected.data.data());
    if (!error.empty())
      return userError("the reference evaluator rejects the problem: " +
                       error);
  }

  llvm::json::Object json{{"spec", spec.name},
                          {"shape", llvm::json::Array(out.shape)},
                          {"mode", useReference ? "reference" : "compiled"}};
  if (useReference) {
    out = expected;
  } else {
    std::vector<const npy::Array *> arguments;
    for (const InputDecl &input : spec.inputs)
      arguments.push_back(&inputs.get(input.name));
    std::string targetError;
    std::optional<attnc::CodegenTarget> target =
        selectCodegenTarget(targetError);
    if (!target)
      return userError(targetError);
    attnc::JitOptions jit;
    jit.forceOrder = forceOrder;
    jit.threads = threads;
    jit.codegen = *target;
    jit.codegen.emulate = emulateGpu;
    if (emulateGpu && !target->gpu)
      return userError("--emulate-gpu needs --target=nvptx");
    std::optional<GpuBuffers> device;
    if (target->gpu && !emulateGpu) {
      if (attn_gpu_init() != 0)
        return userError(std::string("cannot run '") + spec.name +
                         "' on the GPU: " + attn_gpu_error());
      device.emplace();
      for (const npy::Array *argument : arguments)
        if (!device->add(argument->data.data(), argument->data.size(),
                         argument->shape))
          return userError(std::string("cannot run '") + spec.name +
                           "' on the GPU: " + attn_gpu_error());
      if (!device->add(nullptr, out.data.size(), out.shape))
        return userError(std::string("cannot run '") + spec.name +
                         "' on the GPU: " + attn_gpu_error());
    }
    // A spec may be called like a C library function (free, memset, ...):
    // the compiled function gets a name no library symbol has.
    std::string entry = "attn.spec." + spec.name;
    for (auto func : module->getOps<mlir::func::FuncOp>())
      if (func.getSymName() == spec.name)
        func.setSymName(entry);
    // Counted now: compile() lowers the module in place.
    double flops = benchmark ? nominalFlops(*module) : 0.0;
    SpecDiagnostics diagnostics(context, source);
    auto engine = attnc::compile(*module, jit);
    if (!engine) {
      std::string message = llvm::toString(engine.takeError());
      if (diagnostics.hasReported())
        return 1;
      return userError("cannot compile '" + spec.name + "': " + message);
    }
    // One call of the compiled code; on the GPU it includes waiting for
    // the kernels (the generated code synchronises its stream).
    auto runOnce = [&]() -> llvm::Error {
      if (!device)
        return attnc::call(**engine, entry, arguments, out);
      if (llvm::Error error = attnc::callBuffers(**engine, entry,
                                                 device->pointers,
                                                 device->shapes))
        return error;
      if (attn_gpu_synchronize() != 0 || *attn_gpu_error())
        return llvm::createStringError(std::string("the GPU failed: ") +
                                       attn_gpu_error());
      return llvm::Error::success();
    };
    if (llvm::Error error = runOnce())
      return userError("cannot run '" + spec.name +
                       "': " + llvm::toString(std::move(error)));
    if (benchmark) {
      std::vector<double> seconds;
      for (int64_t run = 0; run < benchRepeats; ++run) {
        auto start = std::chrono::steady_clock::now();
        if (llvm::Error error = runOnce())
          return userError(llvm::toString(std::move(error)));
        seconds.push_back(std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - start)
                              .count());
      }
      std::sort(seconds.begin(), seconds.end());
      double median = seconds[seconds.size() / 2];
      json["bench"] = llvm::json::Object{{"median_s", median},
                                         {"runs", static_cast<int64_t>(benchRepeats)},
                                         {"flops", flops},
                                         {"gflops", flops / median / 1e9}};
      if (!jsonOutput)
        llvm::outs() << llvm::formatv(
            "attnc: {0}: median {1:f3} ms over {2} runs, {3:f1} GFLOP/s\n",
            spec.name, median * 1e3, benchRepeats, flops / median / 1e9);
    }
    if (device && !device->copyOutputBack(out.data.data(), out.data.size()))
      return userError(std::string("cannot read the output of '") +
                       spec.name + "' from the GPU: " + attn_gpu_error());
  }

  int status = 0;
  if (checkResult) {
    double tolerance = checkTolerance(spec);
    Comparison comparison =
        compareWithReference(out.data, expected.data, tolerance);
    double maxAbs = comparison.maxAbsError, maxRel = comparison.maxRelError;
    bool ok = comparison.ok;
    json["check"] = llvm::json::Object{{"max_abs_error", maxAbs},
                                       {"max_rel_error", maxRel},
                                       {"tolerance", tolerance},
                                       {"ok", ok}};
    if (!jsonOutput)
      llvm::outs() << llvm::formatv(
          "attnc: {0}: check against the reference evaluator: max abs error "
          "{1:e2}, max rel error {2:e2} (tolerance {3:e0}): {4}\n",
          spec.name, maxAbs, maxRel, tolerance, ok ? "ok" : "FAILED");
    if (!ok) {
      llvm::errs() << "attnc: error: '" << spec.name
                   << "' differs from the reference evaluator beyond the "
                      "tolerance\n";
      status = 1;
    }
  }

  if (!saveDir.empty()) {
    if (spec.findInput("out"))
      return userError("--save writes the output to out.npy, which would "
                       "overwrite the input 'out'; rename that input");
    if (std::error_code ec = llvm::sys::fs::create_directories(saveDir))
      return userError("cannot create '" + saveDir + "': " + ec.message());
    auto save = [&](const std::string &name, const npy::Array &array) {
      llvm::SmallString<256> path(saveDir);
      llvm::sys::path::append(path, name + ".npy");
      return npy::write(path.str().str(), array);
    };
    for (const InputDecl &input : spec.inputs) {
      std::string error = save(input.name, inputs.get(input.name));
      if (!error.empty())
        return userError(error);
    }
    std::string error = save("out", out);
    if (!error.empty())
      return userError(error);
  }

  double sumAbs = 0.0, maxAbs = 0.0;
  for (float x : out.data) {
    sumAbs += std::fabs(x);
    maxAbs = std::max(maxAbs, double(std::fabs(x)));
  }
  double meanAbs = out.data.empty() ? 0.0 : sumAbs / out.data.size();
  if (jsonOutput) {
    json["mean_abs_out"] = meanAbs;
    json["max_abs_out"] = maxAbs;
    llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(json)))
                 << "\n";
    return status;
  }
  llvm::outs() << "attnc: " << spec.name << ": out " << shapeString(out.shape)
               << (useReference ? " (reference evaluator)"
                                : " (compiled code)");
  std::ostringstream stats;
  stats << " mean|o| = " << meanAbs << ", max|o| = " << maxAbs;
  llvm::outs() << stats.str() << "\n";
  return status;
}

//===----------------------------------------------------------------------===//
// attnc report
//===----------------------------------------------------------------------===//

/// Sizes a report assumes for dynamic dims the user did not bind: a common
/// long-context length, so that the strategies have concrete numbers.
static constexpr int64_t kReportAssumedSize = 4096;

static std::string formatNumber(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.3g", value);
  return buffer;
}

static std::string formatTime(double seconds) {
  char buffer[32];
  if (seconds < 1e-3)
    std::snprintf(buffer, sizeof(buffer), "%.1f us", seconds * 1e6);
  else if (seconds < 1)
    std::snprintf(buffer, sizeof(buffer), "%.3f ms", seconds * 1e3);
  else
    std::snprintf(buffer, sizeof(buffer), "%.3f s", seconds);
  return buffer;
}

static int reportSpec(const Spec &spec, const SourceFile &source,
                      const SizeBindings &overrides) {
  namespace cost = attn::cost;
  SizeBindings sizes;
  Diagnostic diag;
  if (!bindSizes(spec, overrides, /*allowUnbound=*/true, sizes, diag))
    return specError(source, diag);
  std::vector<std::string> assumed;
  for (const DimDecl &dim : spec.dims) {
    if (sizes.count(dim.name))
      continue;
    sizes[dim.name] = kReportAssumedSize;
    assumed.push_back(dim.name);
  }
  if ((layerHeads > 0) != (layerHeadDim > 0) || layerHeads < 0 ||
      layerHeadDim < 0)
    return userError("--heads and --head-dim go together and must be "
                     "positive");

  cost::Target target;
  if (std::string error = mlir::attn::resolveTarget(targetName, target);
      !error.empty())
    return userError(error);

  mlir::DialectRegistry registry;
  mlir::attn::registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      generateVerifiedModule(context, spec, source, sizes);
  if (!module)
    return 1;

  llvm::json::Array jsonTerms;
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "attnc report: " << spec.name << " on target " << target.name << " ("
     << formatNumber(target.peakFlops / 1e9) << " GFLOP/s, "
     << formatNumber(target.memoryBandwidth / 1e9) << " GB/s)\n";
  for (const std::string &name : assumed)
    os << "note: size " << name << " is dynamic; assuming " << name << " = "
       << kReportAssumedSize << " (bind it with --set " << name << "=...)\n";

  size_t index = 0;
  module->walk([&](mlir::attn::TermOp op) {
    const TermDecl &decl = spec.terms[index++];
    llvm::SmallVector<std::string> unused;
    cost::TermShape shape = mlir::attn::getTermShape(op, 0, unused);
    cost::TermCost decision = cost::analyzeTerm(shape, target);

    os << "\nterm " << decl.name << ": " << toString(*decl.score);
    if (decl.featureMap != FeatureMap::None)
      os << " " << toString(decl.featureMap);
    os << ", mask " << toString(decl.mask.kind);
    if (shape.maskBlock > 0)
      os << "(" << shape.maskBlock << ")";
    os << "; B=" << shape.batch
       << " H=" << shape.heads << " N=" << shape.queries
       << " M=" << shape.keys << " D=" << shape.featureDim
       << " E=" << shape.valueDim << ", score width " << shape.scoreWidth();
    if (shape.projectedLength)
      os << ", projected to k=" << shape.projectedLength;
    os << "\n";
    os << llvm::formatv("  {0,-9} {1,+6} {2,+10} {3,+10} {4,+10} {5,+12}  {6}\n",
                        "order", "chunk", "FLOPs", "bytes", "extra mem",
                        "predicted", "how");
    llvm::json::Array jsonStrategies;
    for (const cost::Strategy &strategy : decision.strategies) {
      os << llvm::formatv(
          "  {0,-9} {1,+6} {2,+10} {3,+10} {4,+10} {5,+12}  {6}\n",
          cost::toString(strategy.order),
          strategy.chunk ? std::to_string(*strategy.chunk) : "-",
          formatNumber(strategy.flops), formatNumber(strategy.bytes),
          formatNumber(strategy.peakBytes), formatTime(strategy.seconds),
          strategy.description);
      jsonStrategies.push_back(llvm::json::Object{
          {"order", cost::toString(strategy.order)},
          {"chunk", strategy.chunk ? llvm::json::Value(*strategy.chunk)
                                   : llvm::json::Value(nullptr)},
          {"flops", strategy.flops},
          {"bytes", strategy.bytes},
          {"peak_bytes", strategy.peakBytes},
          {"time_s", strategy.seconds},
          {"description", strategy.description}});
    }
    const cost::Strategy &chosen = decision.chosen;
    os << "  chosen: " << cost::toString(chosen.order);
    if (chosen.chunk)
      os << ", chunk " << *chosen.chunk;
    os << ". " << decision.reason << "\n";
    jsonTerms.push_back(llvm::json::Object{
        {"name", decl.name},
        {"strategies", std::move(jsonStrategies)},
        {"chosen",
         llvm::json::Object{
             {"order", cost::toString(chosen.order)},
             {"chunk", chosen.chunk ? llvm::json::Value(*chosen.chunk)
                                    : llvm::json::Value(nullptr)}}},
        {"reason", decision.reason},
        {"crossover_n", decision.crossoverN
                            ? llvm::json::Value(*decision.crossoverN)
                            : llvm::json::Value(nullptr)}});
  });

  llvm::json::Object result{{"spec", spec.name},
                            {"target", target.name},
                            {"terms", std::move(jsonTerms)}};
  if (!assumed.empty()) {
    llvm::json::Object assumedSizes;
    for (const std::string &name : assumed)
      assumedSizes[name] = kReportAssumedSize;
    result["assumed_sizes"] = std::move(assumedSizes);
  }
  if (layerHeads > 0) {
    cost::LayerView view = cost::layerView(layerHeads, layerHeadDim);
    os << "\nlayer view (h = " << layerHeads << ", d = " << layerHeadDim
       << ", hidden " << layerHeads * layerHeadDim
       << ", FFN 4x hidden; seed analysis '000'):\n"
       << "  attention FLOPs pass the FFN's at n > "
       << view.attentionExceedsFfnN << " (2hd)\n"
       << "  the quadratic term dominates the layer at n > "
       << view.quadraticDominatesN << " (6hd)\n"
       << "  a linear variant with 4d features beats softmax at n > "
       << view.linearBeatsSoftmaxN << " (16d)\n";
    result["layer"] = llvm::json::Object{
        {"attention_exceeds_ffn_n", view.attentionExceedsFfnN},
        {"quadratic_dominates_n", view.quadraticDominatesN},
        {"linear_beats_softmax_n", view.linearBeatsSoftmaxN}};
  }
  if (jsonOutput) {
    llvm::outs() << llvm::formatv("{0:2}",
                                  llvm::json::Value(std::move(result)))
                 << "\n";
  } else {
    llvm::outs() << text;
  }
  return 0;
}

//===----------------------------------------------------------------------===//
// attnc SPEC --emit=mlir|linalg|llvm|obj
//===----------------------------------------------------------------------===//

/// Writes NAME.o and NAME.h into the -o directory (default: the current
/// one), both or neither.
static int writeObjectFiles(const attnc::EntryAbi &abi,
                            const attnc::CodegenTarget &target,
                            std::string object) {
  std::string directory = outputPath == "-" ? "." : outputPath.getValue();
  if (std::error_code ec = llvm::sys::fs::create_directories(directory))
    return userError("cannot create '" + directory + "': " + ec.message());
  auto pathOf = [&](const std::string &extension) {
    llvm::SmallString<256> path(directory);
    llvm::sys::path::append(path, abi.specName + extension);
    return path.str().str();
  };
  if (llvm::Error error = attnc::writeFilesAtomically(
          {{pathOf(".o"), std::move(object)},
           {pathOf(".h"), attnc::generateHeader(abi, target)}}))
    return userError(llvm::toString(std::move(error)));
  return 0;
}

static int emitSpec(const Spec &spec, const SourceFile &source,
                    const SizeBindings &overrides) {
  if (!forceOrder.empty() && forceOrder != "qk_first" &&
      forceOrder != "kv_first")
    return userError("--force-order must be qk_first or kv_first, got '" +
                     forceOrder + "'");
  if (emitKind == EmitKind::Obj && outputPath != "-" &&
      llvm::sys::fs::exists(outputPath) &&
      !llvm::sys::fs::is_directory(outputPath))
    return userError("-o '" + outputPath +
                     "' is not a directory (--emit=obj writes NAME.o and "
                     "NAME.h into a directory)");
  std::string targetError;
  std::optional<attnc::CodegenTarget> target =
      selectCodegenTarget(targetError);
  if (!target)
    return userError(targetError);
  if ((emitKind == EmitKind::PTX || emitKind == EmitKind::Cubin) &&
      !target->gpu)
    return userError(std::string("--emit=") +
                     (emitKind == EmitKind::PTX ? "ptx" : "cubin") +
                     " needs --target=nvptx");

  SizeBindings sizes;
  Diagnostic diag;
  if (!bindSizes(spec, overrides, /*allowUnbound=*/true, sizes, diag))
    return specError(source, diag);
  mlir::DialectRegistry registry;
  bool lowering = emitKind != EmitKind::MLIR;
  if (lowering)
    mlir::attn::registerCodegenDialects(registry);
  else
    mlir::attn::registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  if (!lowering)
    context.loadAllAvailableDialects();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      generateVerifiedModule(context, spec, source, sizes);
  if (!module)
    return 1;
  // What the passes report (attn-select-order's remark on a size it
  // assumes for a dynamic dim, an error) is shown at the spec location.
  context.printOpOnDiagnostic(false);
  mlir::ScopedDiagnosticHandler passDiagnostics(
      &context, [&](mlir::Diagnostic &diag) {
        auto render = [&](mlir::Diagnostic &d) {
          SourceLocation loc;
          std::string termName;
          findSpecLocation(d.getLocation(), loc, termName);
          const char *severity = "note";
          switch (d.getSeverity()) {
          case mlir::DiagnosticSeverity::Error:
            severity = "error";
            break;
          case mlir::DiagnosticSeverity::Warning:
            severity = "warning";
            break;
          case mlir::DiagnosticSeverity::Remark:
            severity = "remark";
            break;
          case mlir::DiagnosticSeverity::Note:
            break;
          }
          llvm::errs() << source.render(loc, d.str(), severity);
        };
        render(diag);
        for (mlir::Diagnostic &note : diag.getNotes())
          render(note);
        return mlir::success();
      });

  if (emitKind == EmitKind::MLIR || emitKind == EmitKind::Linalg) {
    if (emitKind == EmitKind::Linalg)
      if (llvm::Error error =
              attnc::lowerToLinalg(*module, forceOrder, *target))
        return userError("cannot compile '" + spec.name +
                         "': " + llvm::toString(std::move(error)));
    std::string text;
    llvm::raw_string_ostream os(text);
    module->print(os);
    return writeOutput(text);
  }

  if (emitKind == EmitKind::PTX || emitKind == EmitKind::Cubin) {
    attnc::CodegenTarget binaryTarget = *target;
    binaryTarget.format = emitKind == EmitKind::PTX ? "isa" : "bin";
    auto binary = attnc::lowerToGPUBinary(*module, forceOrder, binaryTarget);
    if (!binary)
      return userError("cannot compile '" + spec.name +
                       "': " + llvm::toString(binary.takeError()));
    return writeOutput(*binary);
  }

  attnc::EntryAbi abi = attnc::describeEntry(spec, sizes, specPath);
  if (std::string error = attnc::checkStaticProducts(abi); !error.empty())
    return userError("cannot compile '" + spec.name + "': " + error);
  auto machine = attnc::createHostTargetMachine(/*portable=*/target->gpu);
  if (!machine)
    return userError("cannot compile '" + spec.name + "' for the host: " +
                     llvm::toString(machine.takeError()));
  llvm::LLVMContext llvmContext;
  auto llvmModule = attnc::lowerToLLVMIR(*module, abi, forceOrder, *target,
                                         llvmContext, **machine);
  if (!llvmModule)
    return userError("cannot compile '" + spec.name +
                     "': " + llvm::toString(llvmModule.takeError()));
  if (emitKind == EmitKind::LLVM) {
    std::string text;
    llvm::raw_string_ostream os(text);
    (*llvmModule)->print(os, nullptr);
    return writeOutput(text);
  }
  auto object = attnc::emitObject(**llvmModule, **machine);
  if (!object)
    return userError("cannot compile '" + spec.name +
                     "': " + llvm::toString(object.takeError()));
  return writeObjectFiles(abi, *target, std::move(*object));
}

//===----------------------------------------------------------------------===//
// main
//===----------------------------------------------------------------------===//

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  cl::HideUnrelatedOptions(attncCategory);
  cl::ParseCommandLineOptions(argc, argv, "attn compiler driver\n");

  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(specPath, /*IsText=*/true);
  if (std::error_code ec = buffer.getError())
    return userError("cannot read '" + specPath + "': " + ec.message());
  SourceFile source(specPath, (*buffer)->getBuffer().str());

  Diagnostic diag;
  std::optional<Spec> spec = parseSpec(source, diag);
  if (!spec || !checkSpec(*spec, diag))
    return specError(source, diag);

  SizeBindings overrides;
  if (!parseSizeSettings(overrides))
    return 1;

  if (runCommand)
    return runSpec(*spec, source, overrides);
  if (reportCommand)
    return reportSpec(*spec, source, overrides);

  if (emitKind == EmitKind::AST) {
    std::ostringstream os;
    printAST(*spec, os);
    return writeOutput(os.str());
  }

  return emitSpec(*spec, source, overrides);
}
