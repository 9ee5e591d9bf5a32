//===- Compiler.cpp - attn as a library -----------------------------------===//

#include "attn/Compiler/Compiler.h"
#include "attn/Compiler/Calibrate.h"
#include "attn/Compiler/Kernel.h"

#include "attn/Codegen/CEntry.h"
#include "attn/Codegen/Passes.h"
#include "attn/Conversion/Passes.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "attn/Frontend/MLIRGen.h"
#include "attn/InitAll.h"
#include "attn/Pipelines/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

using namespace attn;
using namespace attn::compiler;
using namespace attn::frontend;

llvm::ArrayRef<const char *> attn::compiler::supportedChips() {
  static const char *const chips[] = {"sm_80", "sm_86", "sm_87",
                                      "sm_89", "sm_90", "sm_90a"};
  return chips;
}

/// The dialect's order for \p force.
static mlir::attn::Order toOrder(ForceOrder force) {
  switch (force) {
  case ForceOrder::QkFirst:
    return mlir::attn::Order::QkFirst;
  case ForceOrder::KvFirst:
    return mlir::attn::Order::KvFirst;
  case ForceOrder::Recurrent:
    return mlir::attn::Order::Recurrent;
  case ForceOrder::Auto:
    break;
  }
  return mlir::attn::Order::Auto;
}

const char *attn::compiler::toString(ForceOrder force) {
  switch (force) {
  case ForceOrder::QkFirst:
    return "qk_first";
  case ForceOrder::KvFirst:
    return "kv_first";
  case ForceOrder::Recurrent:
    return "recurrent";
  case ForceOrder::Auto:
    break;
  }
  return "";
}

//===----------------------------------------------------------------------===//
// Diagnostics
//===----------------------------------------------------------------------===//

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

/// The spec's words for an MLIR diagnostic: its spec location (and term
/// name) and the message with the spec's names for the dialect's spellings
/// (the op names and `favor_plus`), which a spec author never wrote.
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

/// The one diagnostic handler of a Compiler: maps every MLIR diagnostic
/// back to the spec and shows it as the compiler's mode asks.
class Compiler::DiagnosticRouter {
public:
  explicit DiagnosticRouter(Compiler &compiler)
      : compiler(compiler),
        handler(compiler.context.get(),
                [this](mlir::Diagnostic &diag) { return handle(diag); }) {}

private:
  mlir::LogicalResult handle(mlir::Diagnostic &diag) {
    bool isError = diag.getSeverity() == mlir::DiagnosticSeverity::Error;
    if (compiler.verifying) {
      if (isError && !compiler.verifierError)
        compiler.verifierError = toSpecDiagnostic(diag);
      return mlir::success();
    }
    if (compiler.passMessages == PassMessages::FirstError) {
      if (isError && !compiler.reportedError) {
        if (compiler.source)
          compiler.specError(toSpecDiagnostic(diag));
        else
          compiler.error(diag.str());
      }
    } else {
      render(diag);
      for (mlir::Diagnostic &note : diag.getNotes())
        render(note);
    }
    compiler.reportedError |= isError;
    return mlir::success();
  }

  void render(mlir::Diagnostic &diag) {
    SourceLocation loc;
    std::string termName;
    findSpecLocation(diag.getLocation(), loc, termName);
    const char *severity = "note";
    switch (diag.getSeverity()) {
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
    if (compiler.source)
      compiler.diagnostics << compiler.source->render(loc, diag.str(),
                                                      severity);
    else
      compiler.diagnostics << compiler.options.toolName << ": " << severity
                           << ": " << diag.str() << "\n";
  }

  Compiler &compiler;
  mlir::ScopedDiagnosticHandler handler;
};

Compiler::Compiler(CompilerOptions options, llvm::raw_ostream &diagnostics)
    : options(std::move(options)), diagnostics(diagnostics) {
  mlir::DialectRegistry registry;
  mlir::attn::registerCodegenDialects(registry);
  context = std::make_unique<mlir::MLIRContext>(registry);
  context->printOpOnDiagnostic(false);
  router = std::make_unique<DiagnosticRouter>(*this);
}

Compiler::~Compiler() = default;

void Compiler::error(const llvm::Twine &message) {
  diagnostics << options.toolName << ": error: " << message << "\n";
}

void Compiler::pipelineFailed(const std::string &why) {
  // With the first error shown in the spec's words, that error says it all.
  if (reportedError && passMessages == PassMessages::FirstError)
    return;
  error("cannot compile '" + spec->name + "': " + why);
}

void Compiler::specError(const Diagnostic &diag) {
  diagnostics << source->render(diag.loc, diag.message);
}

//===----------------------------------------------------------------------===//
// The spec
//===----------------------------------------------------------------------===//

bool Compiler::loadSpecFile(const std::string &path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (std::error_code ec = buffer.getError()) {
    error("cannot read '" + path + "': " + ec.message());
    return false;
  }
  return loadSpec((*buffer)->getBuffer().str(), path);
}

bool Compiler::loadSpec(std::string text, std::string name) {
  source = std::make_unique<SourceFile>(std::move(name), std::move(text));
  Diagnostic diag;
  std::optional<Spec> parsed = parseSpec(*source, diag);
  if (!parsed || !checkSpec(*parsed, diag)) {
    specError(diag);
    return false;
  }
  spec = std::make_unique<Spec>(std::move(*parsed));
  return true;
}

std::optional<SizeBindings>
Compiler::bindSizes(const SizeBindings &overrides, bool allowUnbound) {
  SizeBindings sizes;
  Diagnostic diag;
  if (!frontend::bindSizes(*spec, overrides, allowUnbound, sizes, diag)) {
    specError(diag);
    return std::nullopt;
  }
  return sizes;
}

//===----------------------------------------------------------------------===//
// Stages
//===----------------------------------------------------------------------===//

mlir::OwningOpRef<mlir::ModuleOp>
Compiler::generateModule(const SizeBindings &sizes) {
  Diagnostic shapeError;
  if (!checkShapes(*spec, sizes, shapeError)) {
    specError(shapeError);
    return nullptr;
  }
  verifierError.reset();
  verifying = true;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      generateMLIR(*context, *spec, *source, sizes);
  bool verified = mlir::succeeded(mlir::verify(*module));
  verifying = false;
  if (!verified) {
    specError(verifierError ? *verifierError
                            : Diagnostic{spec->loc,
                                         "the generated IR does not verify"});
    return nullptr;
  }
  return module;
}

/// MLIR's pass manager flags (--mlir-timing, --mlir-print-ir-after-all,
/// ...) where the tool registered them.
static void applyPassManagerOptions(mlir::PassManager &pm) {
  (void)mlir::applyPassManagerCLOptions(pm);
  (void)mlir::applyDefaultTimingPassManagerCLOptions(pm);
}

/// attn-lower-to-nvvm's options for \p o.
static void setGpuPipeline(mlir::attn::LowerToNVVMOptions &lower,
                           const CompilerOptions &o,
                           const std::string &costTarget) {
  lower.target = costTarget;
  lower.force = toOrder(o.force);
  lower.chip = o.chip;
  lower.features = o.ptxFeatures;
  lower.emulate = o.emulateGpu;
  lower.precision = o.gpuPrecision;
}

mlir::LogicalResult Compiler::lowerToLinalg(mlir::ModuleOp module) {
  mlir::PassManager pm(context.get());
  applyPassManagerOptions(pm);
  mlir::attn::AttnSelectOrderOptions select;
  select.force = toOrder(options.force);
  select.target = resolveCostTarget();
  mlir::attn::ConvertAttnToLinalgOptions convert;
  if (options.target == Target::NVPTX) {
    // What attn-lower-to-nvvm does before it bufferizes.
    mlir::attn::LowerToNVVMOptions gpu;
    select.chunk = gpu.chunk;
    convert.tileSize = gpu.tileSize;
    convert.staticTiles = true;
  } else {
    // What attn-lower-to-llvm does: the CPU's L1 sizes kv-first's state
    // tiles.
    std::string unresolved;
    if (std::optional<mlir::attn::CpuTarget> cpu = mlir::attn::resolveCpuTarget(
            options.cpu, options.cpuFeatures, unresolved))
      convert.stateCacheBytes = cpu->l1dBytes;
  }
  pm.addPass(mlir::attn::createAttnSelectOrder(select));
  mlir::OpPassManager &func = pm.nest<mlir::func::FuncOp>();
  func.addPass(mlir::attn::createConvertAttnToLinalg(convert));
  func.addPass(mlir::createCanonicalizerPass());
  func.addPass(mlir::createCSEPass());
  if (mlir::failed(pm.run(module)))
    return pipelineFailed("lowering to linalg failed"), mlir::failure();
  return mlir::success();
}

/// The target's pipeline, with attn-emit-c-entry after it when \p entry.
static void buildTargetPipeline(mlir::PassManager &pm,
                                const CompilerOptions &options,
                                const std::string &costTarget, bool entry,
                                bool packed) {
  if (options.target == Target::NVPTX) {
    mlir::attn::LowerToNVVMOptions lower;
    setGpuPipeline(lower, options, costTarget);
    mlir::attn::buildLowerToNVVMPipeline(pm, lower);
  } else {
    mlir::attn::LowerToLLVMOptions lower;
    lower.target = costTarget;
    lower.force = toOrder(options.force);
    lower.cpu = options.cpu;
    lower.cpuFeatures = options.cpuFeatures;
    mlir::attn::buildLowerToLLVMPipeline(pm, lower);
  }
  if (!entry)
    return;
  mlir::attn::AttnEmitCEntryOptions emit;
  emit.packed = packed;
  pm.addPass(mlir::attn::createAttnEmitCEntry(emit));
}

/// Writes why a pipeline failed unless a diagnostic has said so.
static const char *pipelineFailure(const CompilerOptions &options) {
  return options.target == Target::NVPTX ? "lowering to NVVM failed"
                                         : "lowering to LLVM failed";
}

mlir::FailureOr<std::string>
Compiler::lowerToGPUBinary(mlir::ModuleOp module,
                           mlir::attn::BinaryFormat format) {
  mlir::PassManager pm(context.get());
  applyPassManagerOptions(pm);
  mlir::attn::LowerToNVVMOptions lower;
  setGpuPipeline(lower, options, resolveCostTarget());
  lower.format = format;
  mlir::attn::buildLowerToNVVMPipeline(pm, lower);
  auto fail = [&](const std::string &why) {
    error("cannot compile '" + spec->name + "': " + why);
    return mlir::failure();
  };
  if (mlir::failed(pm.run(module)))
    return pipelineFailed(pipelineFailure(options)), mlir::failure();
  std::string binary;
  unsigned count = 0;
  module.walk([&](mlir::gpu::BinaryOp op) {
    for (mlir::Attribute object : op.getObjects()) {
      binary = mlir::cast<mlir::gpu::ObjectAttr>(object).getObject().str();
      ++count;
    }
  });
  if (count != 1)
    return fail("expected one serialised GPU module, found " +
                std::to_string(count));
  return binary;
}

void attn::compiler::initializeNativeTarget() {
  static bool initialized = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)initialized;
}

std::string Compiler::resolveCostTarget() {
  if (!options.costTarget.empty())
    return options.costTarget;
  // The lookup reads /proc/cpuinfo and parses the cached file: once, not
  // at every stage that builds a pipeline.
  if (!defaultCostTargetCache ||
      defaultCostTargetCache->first != options.target) {
    std::string warning;
    std::string name = defaultCostTarget(options.target, warning);
    if (!warning.empty())
      diagnostics << options.toolName << ": warning: " << warning << "\n";
    defaultCostTargetCache.emplace(options.target, std::move(name));
  }
  return defaultCostTargetCache->second;
}

std::optional<mlir::attn::CpuTarget> Compiler::resolveCpu() {
  std::string why;
  std::optional<mlir::attn::CpuTarget> target =
      mlir::attn::resolveCpuTarget(options.cpu, options.cpuFeatures, why);
  if (!target)
    error(why);
  return target;
}

std::unique_ptr<llvm::TargetMachine>
Compiler::createHostTargetMachine(bool portable) {
  initializeNativeTarget();
  llvm::orc::JITTargetMachineBuilder builder{
      llvm::Triple(llvm::sys::getProcessTriple())};
  if (!portable) {
    std::optional<mlir::attn::CpuTarget> cpu = resolveCpu();
    if (!cpu)
      return nullptr;
    builder.setCPU(cpu->cpu);
    llvm::SmallVector<llvm::StringRef> features;
    llvm::StringRef(cpu->features).split(features, ',', -1, false);
    builder.addFeatures(std::vector<std::string>(features.begin(),
                                                 features.end()));
  }
  auto fail = [&](llvm::Error err) -> std::unique_ptr<llvm::TargetMachine> {
    error("cannot compile '" + spec->name +
          "' for the host: " + llvm::toString(std::move(err)));
    return nullptr;
  };
  builder.setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  builder.setRelocationModel(llvm::Reloc::PIC_);
  auto machine = builder.createTargetMachine();
  if (!machine)
    return fail(machine.takeError());
  return std::move(*machine);
}

/// The naming of the entry point's sizes: the spec's dims.
static mlir::attn::EntryNaming entryNaming(const Spec &spec,
                                           const SizeBindings &sizes,
                                           const std::string &path) {
  mlir::attn::EntryNaming naming;
  naming.specName = spec.name;
  naming.sourcePath = path;
  for (const DimDecl &dim : spec.dims) {
    auto bound = sizes.find(dim.name);
    naming.dims.push_back(
        {dim.name, bound == sizes.end() ? std::nullopt
                                        : std::optional<int64_t>(bound->second)});
  }
  for (const InputDecl &input : spec.inputs) {
    std::vector<std::string> dims;
    for (const ShapeEntry &entry : input.shape)
      dims.push_back(entry.isLiteral() ? "" : entry.name);
    naming.argumentDims.push_back(std::move(dims));
  }
  return naming;
}

/// Moves the GPU module's load and unload (llvm.global_ctors/dtors, which
/// an object linked by a JIT never runs) into `NAME` functions the loader
/// calls.
static void hoistStructors(llvm::Module &module, llvm::StringRef list,
                           const std::string &name) {
  llvm::GlobalVariable *global = module.getGlobalVariable(list);
  llvm::LLVMContext &ctx = module.getContext();
  auto *fn = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), false),
      llvm::GlobalValue::ExternalLinkage, name, module);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", fn));
  if (global && global->hasInitializer())
    if (auto *entries =
            llvm::dyn_cast<llvm::ConstantArray>(global->getInitializer()))
      for (llvm::Value *entry : entries->operands())
        if (auto *fields = llvm::dyn_cast<llvm::ConstantStruct>(entry))
          if (auto *callee =
                  llvm::dyn_cast<llvm::Function>(fields->getOperand(1)))
            b.CreateCall(callee);
  b.CreateRetVoid();
  if (global)
    global->eraseFromParent();
}

/// Renames the spec's function of \p module and derives its entry point.
static std::optional<EntryAbi> prepareEntry(Compiler &compiler,
                                            mlir::ModuleOp module,
                                            const SizeBindings &sizes) {
  const Spec &spec = compiler.getSpec();
  // The spec's function is named after the spec, which may well be the
  // name of a function the generated code calls (`free`, `memset`, `expf`,
  // `__kmpc_fork_call`): give it a name no C symbol can have first.
  auto specFunction = module.lookupSymbol<mlir::func::FuncOp>(spec.name);
  if (!specFunction) {
    compiler.error("cannot compile '" + spec.name +
                   "': the module has no function '" + spec.name + "'");
    return std::nullopt;
  }
  specFunction.setSymName("attn.spec." + spec.name);
  mlir::attn::EntryNaming naming =
      entryNaming(spec, sizes, compiler.getSource().getName());
  mlir::FailureOr<EntryAbi> abi =
      mlir::attn::describeCEntry(specFunction, &naming);
  if (mlir::failed(abi))
    return std::nullopt;
  if (std::string why = checkStaticProducts(*abi); !why.empty()) {
    compiler.error("cannot compile '" + spec.name + "': " + why);
    return std::nullopt;
  }
  return *abi;
}

std::optional<EntryAbi> Compiler::describeKernel(const SizeBindings &sizes) {
  mlir::OwningOpRef<mlir::ModuleOp> module = generateModule(sizes);
  if (!module)
    return std::nullopt;
  return prepareEntry(*this, *module, sizes);
}

/// LLVM's -O3 pipeline without its loop unroller. The tile products are
/// unrolled to registers by the MLIR pipeline already; the unroller only
/// copies the elementwise and copy loops, which after the loop vectorizer
/// (which still interleaves) gain nothing from it, and it made up most of
/// the code and of the compile time (FAVOR+: 18,000 lines of IR).
static void optimizeModule(llvm::Module &module, llvm::TargetMachine &machine) {
  llvm::PipelineTuningOptions tuning;
  tuning.LoopUnrolling = false;
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager cgscc;
  llvm::ModuleAnalysisManager modules;
  llvm::PassBuilder builder(&machine, tuning);
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(cgscc);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, cgscc, modules);
  llvm::ModulePassManager pm =
      builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  pm.run(module, modules);
}

std::unique_ptr<llvm::Module>
Compiler::lowerToLLVMIR(mlir::ModuleOp module, const SizeBindings &sizes,
                        llvm::LLVMContext &llvmContext,
                        llvm::TargetMachine &machine, bool forJit,
                        EntryAbi &abi) {
  auto fail = [&](const std::string &why) -> std::unique_ptr<llvm::Module> {
    error("cannot compile '" + spec->name + "': " + why);
    return nullptr;
  };
  std::optional<EntryAbi> described = prepareEntry(*this, module, sizes);
  if (!described)
    return nullptr;
  abi = std::move(*described);
  module->setAttr(mlir::attn::kCEntryAttrName,
                  mlir::attn::entryAbiToAttr(context.get(), abi));

  mlir::PassManager pm(context.get());
  applyPassManagerOptions(pm);
  buildTargetPipeline(pm, options, resolveCostTarget(), /*entry=*/true,
                      /*packed=*/forJit);
  if (mlir::failed(pm.run(module)))
    return pipelineFailed(pipelineFailure(options)), nullptr;

  std::unique_ptr<llvm::Module> llvmModule =
      mlir::translateModuleToLLVMIR(module, llvmContext, spec->name);
  if (!llvmModule)
    return fail("translation to LLVM IR failed");
  llvmModule->setDataLayout(machine.createDataLayout());
  llvmModule->setTargetTriple(machine.getTargetTriple());
  // The CPU on every function, so that --emit=llvm compiles to the same
  // code under llc or clang as under attnc.
  for (llvm::Function &function : *llvmModule) {
    if (function.isDeclaration())
      continue;
    if (!machine.getTargetCPU().empty())
      function.addFnAttr("target-cpu", machine.getTargetCPU());
    if (!machine.getTargetFeatureString().empty())
      function.addFnAttr("target-features", machine.getTargetFeatureString());
  }
  // The parameters get the header's names, so that --emit=llvm reads like
  // the prototype.
  if (llvm::Function *entry = llvmModule->getFunction(abi.entryName)) {
    for (auto [i, array] : llvm::enumerate(abi.arrays))
      entry->getArg(i)->setName(array.cName);
    for (auto [i, name] : llvm::enumerate(abi.dynamicCNames))
      entry->getArg(abi.arrays.size() + i)->setName(name);
  }
  if (forJit) {
    hoistStructors(*llvmModule, "llvm.global_ctors", abi.entryName + "_init");
    hoistStructors(*llvmModule, "llvm.global_dtors", abi.entryName + "_fini");
  }

  std::string problems;
  llvm::raw_string_ostream verifierOutput(problems);
  if (llvm::verifyModule(*llvmModule, &verifierOutput))
    return fail("the LLVM IR does not verify: " + problems);
  optimizeModule(*llvmModule, machine);
  return llvmModule;
}

std::optional<std::string> Compiler::emitObject(llvm::Module &module,
                                                llvm::TargetMachine &machine) {
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager pm;
  if (machine.addPassesToEmitFile(pm, os, nullptr,
                                  llvm::CodeGenFileType::ObjectFile)) {
    error("cannot compile '" + spec->name +
          "': the host target cannot emit object files");
    return std::nullopt;
  }
  pm.run(module);
  return std::string(buffer.begin(), buffer.end());
}

std::optional<CompiledObject>
Compiler::compileKernelObject(mlir::ModuleOp module,
                              const SizeBindings &sizes) {
  if (options.target == Target::CPU || options.emulateGpu) {
    std::optional<mlir::attn::CpuTarget> cpu = resolveCpu();
    if (!cpu)
      return std::nullopt;
    std::string missing = mlir::attn::featuresMissingOnHost(*cpu);
    if (!missing.empty()) {
      error("cannot run code for CPU '" + options.cpu +
            "' on this host: it lacks " + missing +
            " (compile it with --emit=obj instead)");
      return std::nullopt;
    }
  }
  std::unique_ptr<llvm::TargetMachine> machine =
      createHostTargetMachine(/*portable=*/false);
  if (!machine)
    return std::nullopt;
  llvm::LLVMContext llvmContext;
  CompiledObject compiled;
  std::unique_ptr<llvm::Module> llvmModule = lowerToLLVMIR(
      module, sizes, llvmContext, *machine, /*forJit=*/true, compiled.abi);
  if (!llvmModule)
    return std::nullopt;
  std::optional<std::string> object = emitObject(*llvmModule, *machine);
  if (!object)
    return std::nullopt;
  compiled.object = std::move(*object);
  return compiled;
}

std::unique_ptr<Kernel> Compiler::loadKernel(CompiledObject compiled) {
  std::string why;
  std::unique_ptr<Kernel> kernel = Kernel::load(
      compiled.object, std::move(compiled.abi), options.threads, why);
  if (!kernel)
    error("cannot load '" + spec->name + "': " + why);
  return kernel;
}
