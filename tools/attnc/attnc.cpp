//===- attnc.cpp - The attn compiler driver -------------------------------===//
//
//   attnc SPEC --emit=ast|mlir|linalg|llvm|ptx|cubin [-o OUT] [--set N=4096]
//   attnc SPEC --emit=obj [-o DIR] [--set N=4096]   (DIR/NAME.o, DIR/NAME.h)
//   attnc run SPEC [--set N=4096] [--inputs DIR] [--save DIR] [--seed S]
//   attnc report SPEC [--set N=4096] [--target cpu|nvptx|FILE]
//                     [--heads h --head-dim d] [--json]
//
// A thin dispatcher over the compiler library (attn/Compiler): the command
// line, the inputs of `run` and the printing. Exit status 0 on success and 1
// on any user error, reported as `file:line:col: error: message` with the
// source line and a caret; output files are written whole or not at all.
//
//===----------------------------------------------------------------------===//

#include "attn/Analysis/CostModel.h"
#include "attn/Compiler/Calibrate.h"
#include "attn/Compiler/Compiler.h"
#include "attn/Compiler/Kernel.h"
#include "attn/Frontend/AST.h"
#include "attn/Frontend/DeviceArrays.h"
#include "attn/Frontend/RunInputs.h"
#include "attn/Reference/Reference.h"
#include "attn/Support/AtomicFile.h"
#include "attn/Support/Memory.h"
#include "attn/Target/CHeader/CHeader.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <sstream>

using namespace attn;
using namespace attn::compiler;
using namespace attn::frontend;
namespace cl = llvm::cl;

static cl::OptionCategory attncCategory("attnc options");
static cl::SubCommand runCommand(
    "run", "Evaluate a spec on given or generated inputs (reference "
           "evaluator) and write the output");

static cl::SubCommand reportCommand(
    "report", "Explain the cost model's choice of order and chunk per term");

static cl::SubCommand calibrateCommand(
    "calibrate", "Time attn's kernel families on this machine and fit the "
                 "cost model to them (a target description file)");

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
    cl::desc("Where the code runs: cpu or nvptx (the cost model uses this "
             "machine's calibration when there is one), or a target "
             "description file (its numbers, on its base target)"),
    cl::value_desc("cpu|nvptx|FILE"), cl::init("cpu"),
    cl::sub(cl::SubCommand::getTopLevel()), cl::sub(runCommand),
    cl::sub(reportCommand), cl::sub(calibrateCommand),
    cl::cat(attncCategory));

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
                                cl::sub(calibrateCommand),
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
    "force-order",
    cl::desc("Force every auto order: qk_first, kv_first or recurrent"),
    cl::value_desc("qk_first|kv_first"), cl::init(""), cl::sub(runCommand),
    cl::sub(cl::SubCommand::getTopLevel()), cl::cat(attncCategory));

static cl::opt<bool> emulateGpu(
    "emulate-gpu",
    cl::desc("With --target=nvptx: run the GPU kernels on the host CPU, "
             "thread by thread (tests the GPU mapping without a GPU)"),
    cl::sub(runCommand), cl::cat(attncCategory));

static cl::opt<mlir::attn::GpuPrecision> gpuPrecision(
    "gpu-precision",
    cl::desc("With --target=nvptx: how f32 inputs multiply: f32 on the CUDA "
             "cores, or tf32 on the tensor cores (bf16 and f16 inputs always "
             "use the tensor cores)"),
    cl::init(mlir::attn::GpuPrecision::F32), mlir::attn::gpuPrecisionValues(),
    cl::sub(runCommand), cl::sub(cl::SubCommand::getTopLevel()),
    cl::cat(attncCategory));

static cl::opt<std::string> cpuName(
    "cpu",
    cl::desc("CPU the code is compiled for: native (default), x86-64-v3 (any "
             "AVX2 machine), x86-64-v4 (AVX-512) or an LLVM CPU name"),
    cl::value_desc("native|x86-64-v3|x86-64-v4|<name>"), cl::init("native"),
    cl::sub(runCommand), cl::sub(cl::SubCommand::getTopLevel()),
    cl::sub(calibrateCommand), cl::cat(attncCategory));

static cl::opt<std::string> cpuFeatures(
    "cpu-features",
    cl::desc("Extra CPU features, as llc -mattr takes them: +avx2,-avx512f"),
    cl::value_desc("+a,-b"), cl::init(""), cl::sub(runCommand),
    cl::sub(cl::SubCommand::getTopLevel()), cl::sub(calibrateCommand),
    cl::cat(attncCategory));

static cl::opt<int64_t> threads(
    "threads", cl::desc("Threads of the compiled code (default: every core)"),
    cl::init(0), cl::sub(runCommand), cl::sub(calibrateCommand),
    cl::cat(attncCategory));

static cl::opt<std::string> plotPath(
    "plot",
    cl::desc("Also draw predicted time against N for every strategy of "
             "every term, crossovers marked, as an SVG file"),
    cl::value_desc("FILE.svg"), cl::init(""), cl::sub(reportCommand),
    cl::cat(attncCategory));

static cl::opt<std::string> measuredPath(
    "measured",
    cl::desc("With --plot: measured times to draw on the curves (JSON, as "
             "bench/cost_fidelity.py --plot-dir writes)"),
    cl::value_desc("FILE.json"), cl::init(""), cl::sub(reportCommand),
    cl::cat(attncCategory));

static cl::opt<std::string> calibrationOutput(
    "o",
    cl::desc("Where to write the target description (default: this "
             "machine's file in the user's cache folder, used from then on "
             "by default)"),
    cl::value_desc("FILE"), cl::init(""), cl::sub(calibrateCommand),
    cl::cat(attncCategory));

static cl::opt<int> calibrationRepeats(
    "repeat", cl::desc("Timed calls per microbenchmark (default 7)"),
    cl::init(7), cl::sub(calibrateCommand), cl::cat(attncCategory));

static cl::opt<std::string> maxMemory(
    "max-memory",
    cl::desc("Refuse a run that needs more memory than this (bytes, or with "
             "a K/M/G/T suffix; default: what the machine has available)"),
    cl::value_desc("bytes"), cl::init(""), cl::sub(runCommand),
    cl::cat(attncCategory));

static cl::opt<bool> finiteInputs(
    "finite-inputs",
    cl::desc("Refuse inputs holding a NaN or an infinity (by default they "
             "propagate to the rows that see them, as in IEEE arithmetic)"),
    cl::sub(runCommand), cl::cat(attncCategory));

static int userError(const std::string &message) {
  llvm::errs() << "attnc: error: " << message << "\n";
  return 1;
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

static int writeOutput(const std::string &text) {
  if (outputPath == "-") {
    llvm::outs() << text;
    return 0;
  }
  std::string error = writeFilesAtomically({{outputPath, text}});
  return error.empty() ? 0 : userError(error);
}

/// The compiler options of --target, --chip, --force-order, --threads and
/// --emulate-gpu, or an error message.
/// The order of --force-order, or an error message. Checked first by
/// `run` and `--emit`, before anything is read.
static std::optional<ForceOrder> selectForceOrder(std::string &error) {
  if (forceOrder.empty())
    return ForceOrder::Auto;
  if (forceOrder == "qk_first")
    return ForceOrder::QkFirst;
  if (forceOrder == "kv_first")
    return ForceOrder::KvFirst;
  if (forceOrder == "recurrent")
    return ForceOrder::Recurrent;
  error = "--force-order must be qk_first, kv_first or recurrent, got '" +
          forceOrder + "'";
  return std::nullopt;
}

static std::optional<CompilerOptions> selectOptions(std::string &error) {
  CompilerOptions options;
  std::optional<ForceOrder> force = selectForceOrder(error);
  if (!force)
    return std::nullopt;
  options.force = *force;
  if (targetName == "nvptx") {
    options.target = Target::NVPTX;
  } else if (targetName != "cpu") {
    // A target description file: its numbers decide, its base says where
    // the code runs.
    cost::Target description;
    if (std::string why = cost::loadTarget(targetName, description);
        !why.empty()) {
      error = "--target must be cpu, nvptx or a target description file: " +
              why;
      return std::nullopt;
    }
    if (description.name == "nvptx")
      options.target = Target::NVPTX;
    options.costTarget = targetName;
  }
  if (!llvm::is_contained(supportedChips(), llvm::StringRef(chipName))) {
    error = "--chip must be one of ";
    for (auto [i, chip] : llvm::enumerate(supportedChips()))
      error += std::string(i ? ", " : "") + chip;
    error += ", got '" + chipName + "'";
    return std::nullopt;
  }
  if (chipName.getNumOccurrences() && options.target != Target::NVPTX) {
    error = "--chip applies to --target=nvptx only";
    return std::nullopt;
  }
  options.chip = chipName;
  if (gpuPrecision.getNumOccurrences() && options.target != Target::NVPTX) {
    error = "--gpu-precision applies to --target=nvptx only";
    return std::nullopt;
  }
  options.gpuPrecision = gpuPrecision;
  if ((cpuName.getNumOccurrences() || cpuFeatures.getNumOccurrences()) &&
      options.target == Target::NVPTX) {
    error = "--cpu and --cpu-features apply to --target=cpu only";
    return std::nullopt;
  }
  if (!mlir::attn::resolveCpuTarget(cpuName, cpuFeatures, error)) {
    error = (cpuFeatures.empty() ? "--cpu: " : "--cpu/--cpu-features: ") +
            error;
    return std::nullopt;
  }
  options.cpu = cpuName;
  options.cpuFeatures = cpuFeatures;
  if (!checkThreadCount(threads, "--threads", error))
    return std::nullopt;
  options.threads = threads;
  options.emulateGpu = emulateGpu;
  return options;
}

//===----------------------------------------------------------------------===//
// attnc run
//===----------------------------------------------------------------------===//

static int runSpec(Compiler &compiler, const SizeBindings &overrides) {
  const Spec &spec = compiler.getSpec();
  std::string optionError;
  if (!selectForceOrder(optionError))
    return userError(optionError);
  if (benchRepeats < 1)
    return userError("--repeat must be positive");
  // Validate the --set names before reading anything.
  if (!compiler.bindSizes(overrides, /*allowUnbound=*/true))
    return 1;
  RunInputs inputs(spec);
  SizeBindings known = overrides;
  inputs.noteBound(overrides, "from --set");
  if (!inputsDir.empty()) {
    if (!llvm::sys::fs::is_directory(inputsDir))
      return userError("--inputs '" + inputsDir + "' is not a directory");
    if (std::string error = inputs.load(inputsDir, known); !error.empty())
      return userError(error);
  }
  std::optional<SizeBindings> sizes =
      compiler.bindSizes(known, /*allowUnbound=*/false);
  if (!sizes)
    return 1;

  // The dialect verifier checks every constraint of DESIGN §1 on the
  // concrete sizes, so a bad combination is reported at its term.
  mlir::OwningOpRef<mlir::ModuleOp> module = compiler.generateModule(*sizes);
  if (!module)
    return 1;
  // Before anything sequence-sized is allocated: a run that cannot fit
  // ends here with a message, not in the kernel's OOM killer.
  uint64_t memoryLimit = 0;
  if (!maxMemory.empty() &&
      (!parseByteSize(maxMemory, memoryLimit) || memoryLimit == 0))
    return userError("--max-memory expects a positive byte count such as "
                     "512M or 8G, got '" +
                     maxMemory + "'");
  MemoryNeed need = runMemoryNeed(spec, *sizes, inputs.all(),
                                  useReference || checkResult, !useReference);
  if (std::string error = checkMemory(need, memoryLimit); !error.empty())
    return userError("cannot run '" + spec.name + "': " + error);
  if (std::string error = inputs.generate(*sizes, seed); !error.empty())
    return userError(error);
  if (finiteInputs)
    if (std::string where = findNonFinite(spec, inputs.all()); !where.empty())
      return userError("--finite-inputs: " + where);
  if (std::string where = findIntegerInputs(spec, inputs.all()); !where.empty())
    return userError(where);
  if (std::string where = findBadValues(spec, inputs.all()); !where.empty())
    return userError(where);
  reference::Problem problem = buildProblem(spec, inputs.all());
  if (!useReference)
    for (const std::string &warning : overflowWarnings(problem))
      llvm::errs() << "attnc: warning: '" << spec.name << "' " << warning
                   << "\n";
  npy::Array out;
  out.shape = outputShape(problem);
  out.data.resize(problem.batch * problem.heads * problem.queries *
                  problem.valueDim);
  // `output state`: the final state (and norm) after the output, shaped as
  // the generated function returns them; saved as state.npy and
  // norm_state.npy.
  // `output lse`: lse [B, H, N] after the output, saved as lse.npy.
  std::vector<npy::Array> states;
  std::vector<const char *> stateNames;
  if (spec.outputState)
    stateNames = {"state", "norm_state"};
  if (spec.outputLse)
    stateNames = {"lse"};
  if (spec.outputState || spec.outputLse) {
    auto func = *module->getOps<mlir::func::FuncOp>().begin();
    for (mlir::Type type : func.getFunctionType().getResults().drop_front()) {
      npy::Array state;
      size_t count = 1;
      for (int64_t size : llvm::cast<mlir::RankedTensorType>(type).getShape()) {
        // lse's [B, H, N] takes the output's sizes.
        if (spec.outputLse && mlir::ShapedType::isDynamic(size))
          size = out.shape[state.shape.size()];
        if (mlir::ShapedType::isDynamic(size))
          return userError("'output state' needs a static feature width");
        state.shape.push_back(size);
        count *= static_cast<size_t>(size);
      }
      state.data.resize(count);
      states.push_back(std::move(state));
    }
  }

  npy::Array expected;
  std::vector<npy::Array> expectedStates = states;
  if (useReference || checkResult) {
    expected = out;
    std::string error = reference::evaluate(problem, expected.data.data());
    if (error.empty() && spec.outputLse)
      error = reference::logSumExp(problem, 0, expectedStates[0].data.data());
    else if (error.empty() && !expectedStates.empty())
      error = reference::finalState(
          problem, 0, expectedStates[0].data.data(),
          expectedStates.size() > 1 ? expectedStates[1].data.data() : nullptr);
    if (!error.empty())
      return userError("the reference evaluator rejects the problem: " +
                       error);
  }

  llvm::json::Object json{{"spec", spec.name},
                          {"shape", llvm::json::Array(out.shape)},
                          {"mode", useReference ? "reference" : "compiled"}};
  if (useReference) {
    // A narrow output holds what the compiled code would write: the exact
    // result rounded once.
    out = expected;
    for (float &value : out.data)
      value = roundTo(spec.outputType.value_or(ElementType::F32), value);
    states = expectedStates;
  } else {
    std::optional<CompilerOptions> selected = selectOptions(optionError);
    if (!selected)
      return userError(optionError);
    compiler.setOptions(*selected);
    const CompilerOptions &options = compiler.getOptions();
    if (options.emulateGpu && options.target != Target::NVPTX)
      return userError("--emulate-gpu needs --target=nvptx");
    bool onDevice = options.target == Target::NVPTX && !options.emulateGpu;
    // f16 / bf16 arrays travel as their 16-bit patterns (the inputs hold
    // rounded values already: RunInputs::generate).
    std::vector<std::vector<uint16_t>> narrow(spec.inputs.size() + 1);
    std::vector<void *> arrays;
    for (auto [index, input] : llvm::enumerate(spec.inputs))
      arrays.push_back(const_cast<void *>(packedArray(
          input.elementType, inputs.get(input.name).data, narrow[index])));
    ElementType outputType = spec.outputType.value_or(ElementType::F32);
    arrays.push_back(
        const_cast<void *>(packedArray(outputType, out.data, narrow.back())));
    for (npy::Array &state : states)
      arrays.push_back(state.data.data());
    std::optional<DeviceArrays> device;
    if (onDevice && !states.empty())
      return userError("cannot run '" + spec.name + "' on the GPU: 'output " +
                       (spec.outputLse ? "lse" : "state") +
                       "' runs on the CPU and with --emulate-gpu only, for "
                       "now");
    if (onDevice) {
      auto gpuError = [&] {
        return userError(std::string("cannot run '") + spec.name +
                         "' on the GPU: " + attn_gpu_error());
      };
      if (attn_gpu_init() != 0)
        return gpuError();
      device.emplace();
      for (auto [index, input] : llvm::enumerate(spec.inputs))
        if (!device->add(arrays[index], inputs.get(input.name).data.size() *
                                            byteSize(input.elementType)))
          return gpuError();
      if (!device->add(nullptr, out.data.size() * byteSize(outputType)))
        return gpuError();
      arrays = device->all();
    }
    // Counted now: the compiler lowers the module in place.
    double flops = benchmark ? compiler.countFlops(*module) : 0.0;
    std::optional<CompiledObject> object =
        compiler.compileKernelObject(*module, *sizes);
    if (!object)
      return 1;
    std::unique_ptr<Kernel> kernel = compiler.loadKernel(std::move(*object));
    if (!kernel)
      return 1;
    // One call of the compiled code; on the GPU it includes waiting for
    // the kernels (the generated code synchronises its stream).
    auto runOnce = [&]() -> std::string {
      int status = kernel->call(arrays.data(), nullptr);
      if (status != kStatusOk)
        return "the entry point returned " + std::to_string(status) + ": " +
               describeStatus(status);
      return onDevice ? synchronizeDevice() : "";
    };
    if (std::string error = runOnce(); !error.empty())
      return userError("cannot run '" + spec.name + "': " + error);
    if (benchmark) {
      std::vector<double> seconds;
      for (int64_t run = 0; run < benchRepeats; ++run) {
        auto start = std::chrono::steady_clock::now();
        if (std::string error = runOnce(); !error.empty())
          return userError(error);
        seconds.push_back(std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - start)
                              .count());
      }
      std::sort(seconds.begin(), seconds.end());
      double median = seconds[seconds.size() / 2];
      json["bench"] =
          llvm::json::Object{{"median_s", median},
                             {"min_s", seconds.front()},
                             {"runs", static_cast<int64_t>(benchRepeats)},
                             {"flops", flops},
                             {"gflops", flops / median / 1e9}};
      if (!jsonOutput)
        llvm::outs() << llvm::formatv(
            "attnc: {0}: median {1:f3} ms over {2} runs, {3:f1} GFLOP/s\n",
            spec.name, median * 1e3, benchRepeats, flops / median / 1e9);
    }
    if (device &&
        !device->copyOutputBack(narrow.back().empty()
                                    ? static_cast<void *>(out.data.data())
                                    : narrow.back().data(),
                                out.data.size() * byteSize(outputType)))
      return userError(std::string("cannot read the output of '") +
                       spec.name + "' from the GPU: " + attn_gpu_error());
    if (outputType != ElementType::F32)
      unpackElements(outputType, narrow.back().data(), out.data.size(),
                     out.data.data());
  }

  int status = 0;
  if (checkResult) {
    double tolerance = checkTolerance(
        spec, compiler.getOptions().target == Target::NVPTX,
        compiler.getOptions().gpuPrecision == mlir::attn::GpuPrecision::TF32);
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
    for (size_t i = 0; i < states.size(); ++i) {
      Comparison stateComparison =
          spec.outputLse
              ? compareLogSumExp(states[i].data, expectedStates[i].data,
                                 tolerance)
              : compareWithReference(states[i].data, expectedStates[i].data,
                                     tolerance);
      json[std::string("check_") + stateNames[i]] =
          llvm::json::Object{{"max_abs_error", stateComparison.maxAbsError},
                             {"max_rel_error", stateComparison.maxRelError},
                             {"ok", stateComparison.ok}};
      if (!jsonOutput)
        llvm::outs() << llvm::formatv(
            "attnc: {0}: {1} against the reference evaluator: max abs error "
            "{2:e2}, max rel error {3:e2}: {4}\n",
            spec.name, stateNames[i], stateComparison.maxAbsError,
            stateComparison.maxRelError, stateComparison.ok ? "ok" : "FAILED");
      if (!stateComparison.ok) {
        llvm::errs() << "attnc: error: '" << spec.name << "' " << stateNames[i]
                     << " differs from the reference evaluator\n";
        status = 1;
      }
    }
  }

  if (!saveDir.empty()) {
    if (spec.findInput("out"))
      return userError("--save writes the output to out.npy, which would "
                       "overwrite the input 'out'; rename that input");
    for (const char *name : stateNames)
      if (spec.findInput(name))
        return userError(
            std::string("--save writes ") +
            (spec.outputLse ? "the log-sum-exp" : "the final state") + " to " +
            name + ".npy, which would overwrite the input '" + name +
            "'; rename that input");
    std::string error = inputs.save(saveDir);
    if (error.empty())
      error = npy::write(saveDir + "/out.npy", out);
    for (size_t i = 0; i < states.size() && error.empty(); ++i)
      error = npy::write(saveDir + "/" + stateNames[i] + ".npy", states[i]);
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
  llvm::outs() << "attnc: " << spec.name << ": out " << formatShape(out.shape)
               << (useReference ? " (reference evaluator)"
                                : " (compiled code)");
  std::ostringstream stats;
  stats << " mean|o| = " << meanAbs << ", max|o| = " << maxAbs;
  llvm::outs() << stats.str() << "\n";
  return status;
}

//===----------------------------------------------------------------------===//
// attnc SPEC --emit=...
//===----------------------------------------------------------------------===//

/// Writes NAME.o and NAME.h into the -o directory (default: the current
/// one), both or neither.
static int writeObjectFiles(const EntryAbi &abi, const CompilerOptions &options,
                            std::string object) {
  std::string directory = outputPath == "-" ? "." : outputPath.getValue();
  if (std::error_code ec = llvm::sys::fs::create_directories(directory))
    return userError("cannot create '" + directory + "': " + ec.message());
  auto pathOf = [&](const std::string &extension) {
    llvm::SmallString<256> path(directory);
    llvm::sys::path::append(path, abi.specName + extension);
    return path.str().str();
  };
  HeaderTarget header;
  header.gpu = options.target == Target::NVPTX;
  header.chip = options.chip;
  header.llvmLibraryDir = ATTN_LLVM_LIBRARY_DIR;
  std::string error = writeFilesAtomically(
      {{pathOf(".o"), std::move(object)},
       {pathOf(".h"), generateHeader(abi, header)}});
  return error.empty() ? 0 : userError(error);
}

static int emitSpec(Compiler &compiler, const SizeBindings &overrides) {
  std::string optionError;
  if (!selectForceOrder(optionError))
    return userError(optionError);
  if (emitKind == EmitKind::Obj && outputPath != "-" &&
      llvm::sys::fs::exists(outputPath) &&
      !llvm::sys::fs::is_directory(outputPath))
    return userError("-o '" + outputPath +
                     "' is not a directory (--emit=obj writes NAME.o and "
                     "NAME.h into a directory)");
  std::optional<CompilerOptions> selected = selectOptions(optionError);
  if (!selected)
    return userError(optionError);
  compiler.setOptions(*selected);
  const CompilerOptions &options = compiler.getOptions();
  bool gpu = options.target == Target::NVPTX;
  if ((emitKind == EmitKind::PTX || emitKind == EmitKind::Cubin) && !gpu)
    return userError(std::string("--emit=") +
                     (emitKind == EmitKind::PTX ? "ptx" : "cubin") +
                     " needs --target=nvptx");
  std::optional<SizeBindings> sizes =
      compiler.bindSizes(overrides, /*allowUnbound=*/true);
  if (!sizes)
    return 1;
  mlir::OwningOpRef<mlir::ModuleOp> module = compiler.generateModule(*sizes);
  if (!module)
    return 1;
  // What the passes report (attn-select-order's remark on a size it
  // assumes for a dynamic dim, an error) is shown at the spec location.
  compiler.setPassMessages(Compiler::PassMessages::All);

  std::string text;
  llvm::raw_string_ostream os(text);
  if (emitKind == EmitKind::MLIR || emitKind == EmitKind::Linalg) {
    if (emitKind == EmitKind::Linalg &&
        mlir::failed(compiler.lowerToLinalg(*module)))
      return 1;
    module->print(os);
    return writeOutput(text);
  }
  if (emitKind == EmitKind::PTX || emitKind == EmitKind::Cubin) {
    mlir::FailureOr<std::string> binary = compiler.lowerToGPUBinary(
        *module, emitKind == EmitKind::PTX ? mlir::attn::BinaryFormat::Isa
                                           : mlir::attn::BinaryFormat::Bin);
    return mlir::failed(binary) ? 1 : writeOutput(*binary);
  }
  std::unique_ptr<llvm::TargetMachine> machine =
      compiler.createHostTargetMachine(/*portable=*/gpu);
  if (!machine)
    return 1;
  llvm::LLVMContext llvmContext;
  EntryAbi abi;
  std::unique_ptr<llvm::Module> llvmModule = compiler.lowerToLLVMIR(
      *module, *sizes, llvmContext, *machine, /*forJit=*/false, abi);
  if (!llvmModule)
    return 1;
  if (emitKind == EmitKind::LLVM) {
    llvmModule->print(os, nullptr);
    return writeOutput(text);
  }
  std::optional<std::string> object =
      compiler.emitObject(*llvmModule, *machine);
  if (!object)
    return 1;
  return writeObjectFiles(abi, options, std::move(*object));
}

//===----------------------------------------------------------------------===//
// attnc calibrate
//===----------------------------------------------------------------------===//

static void *allocateOnGpu(const float *host, size_t count) {
  size_t bytes = std::max<size_t>(count, 1) * sizeof(float);
  void *pointer = attn_gpu_alloc(bytes);
  if (pointer && host &&
      attn_gpu_copy_to_device(pointer, host, count * sizeof(float)) != 0) {
    attn_gpu_free(pointer);
    return nullptr;
  }
  return pointer;
}

static void releaseOnGpu(void *pointer) { attn_gpu_free(pointer); }

static std::string synchronizeGpu() { return synchronizeDevice(); }

static const CalibrationDevice kGpuDevice = {allocateOnGpu, releaseOnGpu,
                                             synchronizeGpu};

static int calibrateMachine() {
  CalibrateOptions options;
  if (targetName == "nvptx")
    options.target = Target::NVPTX;
  else if (targetName != "cpu")
    return userError("--target must be cpu or nvptx for attnc calibrate, "
                     "got '" +
                     targetName + "'");
  if (calibrationRepeats < 1 || calibrationRepeats > 1000)
    return userError("--repeat must be between 1 and 1000");
  options.repeats = calibrationRepeats;
  options.cpu = cpuName;
  options.cpuFeatures = cpuFeatures;
  options.threads = threads;
  std::string path = calibrationOutput;
  if (options.target == Target::NVPTX) {
    if (cpuName.getNumOccurrences() || cpuFeatures.getNumOccurrences())
      return userError("--cpu and --cpu-features apply to --target=cpu only");
    if (attn_gpu_init() != 0)
      return userError(std::string("cannot calibrate --target=nvptx: ") +
                       attn_gpu_error());
    if (path.empty())
      return userError("--target=nvptx needs -o FILE (a GPU calibration is "
                       "used with --target FILE, never by default)");
    options.device = &kGpuDevice;
  } else if (path.empty()) {
    if (cpuName != "native" || !cpuFeatures.empty())
      return userError("a calibration of code for --cpu=" + cpuName +
                       (cpuFeatures.empty() ? "" : " " + cpuFeatures) +
                       " needs -o FILE (only the native calibration is "
                       "cached)");
    path = calibrationPath();
    if (path.empty())
      return userError("no cache folder for the calibration (set "
                       "ATTN_CACHE_DIR, XDG_CACHE_HOME or HOME, or give -o "
                       "FILE)");
  }

  CalibrationResult result;
  std::string error;
  llvm::raw_ostream &progress = jsonOutput ? llvm::errs() : llvm::outs();
  if (!calibrate(options, progress, result, error))
    return userError(error);

  std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  result.target.calibrated = date;
  std::ostringstream header;
  header << "attn cost-model target: written by `attnc calibrate`\n"
         << "machine: " << result.target.machine << "\n"
         << "sample | measured | predicted before | after\n";
  double logBefore = 0, logAfter = 0;
  for (const CalibrationSample &sample : result.samples) {
    header << sample.label << " | " << cost::formatSeconds(sample.seconds, 3)
           << " | " << cost::formatSeconds(sample.before, 3) << " | "
           << cost::formatSeconds(sample.after, 3) << "\n";
    logBefore += std::fabs(std::log(sample.before / sample.seconds));
    logAfter += std::fabs(std::log(sample.after / sample.seconds));
  }
  double count = std::max<size_t>(1, result.samples.size());
  double errorBefore = std::exp(logBefore / count);
  double errorAfter = std::exp(logAfter / count);
  header << "geomean prediction error: " << cost::formatNumber(errorBefore)
         << "x before, " << cost::formatNumber(errorAfter) << "x after";
  std::string text = cost::printTarget(result.target, header.str());
  // The cache's targets/ folder may not exist yet; a bare file name
  // needs none.
  llvm::StringRef folder = llvm::sys::path::parent_path(path);
  if (!folder.empty())
    if (std::error_code ec = llvm::sys::fs::create_directories(folder))
      return userError("cannot create '" + folder.str() +
                       "': " + ec.message());
  if (std::string why = writeFilesAtomically({{path, text}}); !why.empty())
    return userError(why);
  if (jsonOutput) {
    llvm::json::Array samples;
    for (const CalibrationSample &sample : result.samples)
      samples.push_back(llvm::json::Object{{"label", sample.label},
                                           {"measured_s", sample.seconds},
                                           {"before_s", sample.before},
                                           {"after_s", sample.after}});
    llvm::json::Object object{{"file", path},
                              {"machine", result.target.machine},
                              {"core_peak_flops", result.corePeakFlops},
                              {"bandwidth", result.bandwidth},
                              {"error_before", errorBefore},
                              {"error_after", errorAfter},
                              {"samples", std::move(samples)}};
    llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(object)))
                 << "\n";
    return 0;
  }
  llvm::outs() << "calibrate: geomean prediction error "
               << cost::formatNumber(errorBefore) << "x with the built-in "
               << "numbers, " << cost::formatNumber(errorAfter)
               << "x fitted\ncalibrate: wrote " << path << "\n";
  return 0;
}

//===----------------------------------------------------------------------===//
// main
//===----------------------------------------------------------------------===//

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  cl::HideUnrelatedOptions(attncCategory);
  // --mlir-timing, --mlir-print-ir-after-all and the other pass manager
  // flags; LLVM's own (--time-passes) are registered already.
  mlir::registerPassManagerCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  cl::ParseCommandLineOptions(argc, argv, "attn compiler driver\n");
  if (calibrateCommand)
    return calibrateMachine();

  Compiler compiler(CompilerOptions(), llvm::errs());
  if (!compiler.loadSpecFile(specPath))
    return 1;
  SizeBindings overrides;
  if (!parseSizeSettings(overrides))
    return 1;

  if (runCommand)
    return runSpec(compiler, overrides);
  if (reportCommand) {
    ReportOptions report;
    report.costTarget =
        targetName == "cpu" ? std::string() : std::string(targetName);
    report.heads = layerHeads;
    report.headDim = layerHeadDim;
    if (!measuredPath.empty()) {
      if (plotPath.empty())
        return userError("--measured needs --plot FILE.svg");
      llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
          llvm::MemoryBuffer::getFile(measuredPath);
      if (!buffer)
        return userError("cannot read '" + measuredPath +
                         "': " + buffer.getError().message());
      report.measuredJson = (*buffer)->getBuffer().str();
      if (report.measuredJson.empty())
        report.measuredJson = " "; // an empty file is malformed JSON
      report.measuredName = measuredPath;
    }
    std::string text, json, svg;
    if (!compiler.report(overrides, report, text, json,
                         plotPath.empty() ? nullptr : &svg))
      return 1;
    if (!plotPath.empty())
      if (std::string why = writeFilesAtomically({{plotPath, svg}});
          !why.empty())
        return userError(why);
    llvm::outs() << (jsonOutput ? json + "\n" : text);
    return 0;
  }
  if (emitKind == EmitKind::AST) {
    std::ostringstream os;
    printAST(compiler.getSpec(), os);
    return writeOutput(os.str());
  }
  return emitSpec(compiler, overrides);
}
