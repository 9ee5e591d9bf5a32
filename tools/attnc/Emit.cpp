//===- Emit.cpp - attnc --emit=linalg|llvm|obj ----------------------------===//
//
// The object file holds one external symbol, the entry point
//
//   int attn_<name>(const float *in..., float *out, int64_t size...)
//
// written here in LLVM IR after attn-lower-to-llvm: it checks the dynamic
// sizes (positive, equal where the spec ties them, no overflowing byte
// size) and the pointers, builds a dense row-major memref descriptor per
// array and calls `_mlir_ciface_attn.spec.<name>`, the C interface that
// attn-destination-abi gives the spec's function (renamed first, so that it
// cannot collide with a library function). Everything else in the module
// is made internal.
//
//===----------------------------------------------------------------------===//

#include "Emit.h"

#include "attn/Conversion/Passes.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "attn/Pipelines/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <set>
#include <unistd.h>

using namespace attnc;
using namespace attn::frontend;

#ifndef ATTN_LLVM_LIBRARY_DIR
#define ATTN_LLVM_LIBRARY_DIR "/usr/lib/llvm-22/lib"
#endif

//===----------------------------------------------------------------------===//
// The ABI of a spec
//===----------------------------------------------------------------------===//

static bool isCKeyword(const std::string &name) {
  static const std::set<std::string> keywords = {
      "auto",       "bool",          "break",     "case",
      "char",       "const",         "constexpr", "continue",
      "default",    "do",            "double",    "else",
      "enum",       "extern",        "false",     "float",
      "for",        "goto",          "if",        "inline",
      "int",        "long",          "nullptr",   "register",
      "restrict",   "return",        "short",     "signed",
      "sizeof",     "static",        "static_assert", "struct",
      "switch",     "thread_local",  "true",      "typedef",
      "typeof",     "union",         "unsigned",  "void",
      "volatile",   "while",         "alignas",   "alignof",
      "asm",        "catch",         "class",     "delete",
      "explicit",   "friend",        "mutable",   "namespace",
      "new",        "operator",      "private",   "protected",
      "public",     "template",      "this",      "throw",
      "try",        "typename",      "using",     "virtual",
      "int64_t",    "NULL"};
  return keywords.count(name) || llvm::StringRef(name).starts_with("__") ||
         (name.size() > 1 && name[0] == '_' && std::isupper(name[1]));
}

EntryAbi attnc::describeEntry(const Spec &spec, const SizeBindings &sizes,
                              const std::string &sourcePath) {
  EntryAbi abi;
  abi.specName = spec.name;
  abi.entryName = "attn_" + spec.name;
  abi.sourcePath = sourcePath;
  for (const DimDecl &dim : spec.dims) {
    auto bound = sizes.find(dim.name);
    if (bound != sizes.end())
      abi.staticSizes.push_back({dim.name, bound->second});
    else
      abi.dynamicSizes.push_back(dim.name);
  }

  // Parameter names: the spec's, unless C (or C++) cannot take them or two
  // would collide (an input named like a dim, or `out`).
  std::set<std::string> used;
  auto cName = [&](std::string name) {
    while (isCKeyword(name) || used.count(name))
      name += "_";
    used.insert(name);
    return name;
  };

  auto extentOf = [&](const ShapeEntry &entry) {
    Extent extent;
    if (entry.isLiteral()) {
      extent.value = entry.value;
      return extent;
    }
    extent.name = entry.name;
    auto bound = sizes.find(entry.name);
    if (bound != sizes.end()) {
      extent.value = bound->second;
      return extent;
    }
    for (size_t i = 0; i < abi.dynamicSizes.size(); ++i)
      if (abi.dynamicSizes[i] == entry.name)
        extent.dynamic = static_cast<int>(i);
    return extent;
  };
  auto shapeOf = [&](const std::string &input) {
    std::vector<Extent> shape;
    for (const ShapeEntry &entry : spec.findInput(input)->shape)
      shape.push_back(extentOf(entry));
    return shape;
  };

  for (const InputDecl &input : spec.inputs) {
    AbiArray array;
    array.name = input.name;
    array.cName = cName(input.name);
    array.shape = shapeOf(input.name);
    abi.arrays.push_back(std::move(array));
  }
  std::vector<Extent> q0 = shapeOf(spec.terms.front().query.name);
  std::vector<Extent> v = shapeOf(spec.value.name);
  AbiArray out;
  out.name = "out";
  out.cName = cName("out");
  out.shape = {q0[0], q0[1], q0[2], v[3]};
  out.isOutput = true;
  abi.arrays.push_back(out);
  for (const std::string &dim : abi.dynamicSizes)
    abi.dynamicCNames.push_back(cName(dim));

  auto equal = [&](const Extent &a, const Extent &b) {
    if (!a.isDynamic() && !b.isDynamic())
      return; // The verifier has checked it.
    if (a.isDynamic() && b.isDynamic() && a.dynamic == b.dynamic)
      return;
    abi.equalities.push_back({a, b});
  };
  for (const AbiArray &array : abi.arrays)
    abi.products.push_back(array.shape);
  for (const TermDecl &term : spec.terms) {
    std::vector<Extent> q = shapeOf(term.query.name);
    std::vector<Extent> k = shapeOf(term.key.name);
    // C1: B, H across query, key and value; D between query and key; M
    // between key and value.
    for (int d : {0, 1}) {
      equal(q[d], k[d]);
      equal(q[d], v[d]);
    }
    equal(q[3], k[3]);
    equal(k[2], v[2]);
    // C2 and the shapes across terms: every term's query has the output's
    // B, H and N.
    for (int d : {0, 1, 2})
      equal(q[d], q0[d]);
    // C6: causal masks need N = M.
    if (term.mask.kind == MaskKind::Causal ||
        term.mask.kind == MaskKind::BlockCausal)
      equal(q[2], k[2]);
    // The scores (or their tiles) cover N x M.
    abi.products.push_back({q[0], q[1], q[2], k[2]});
    // C4: omega is [m, D]; the features are N x m and M x m.
    if (term.omega.isSet()) {
      std::vector<Extent> w = shapeOf(term.omega.name);
      equal(w[1], q[3]);
      abi.products.push_back({q[0], q[1], q[2], w[0]});
      abi.products.push_back({k[0], k[1], k[2], w[0]});
    }
    // C7: E and F are both [k, M].
    if (term.projectKeys.isSet()) {
      std::vector<Extent> e = shapeOf(term.projectKeys.name);
      std::vector<Extent> f = shapeOf(term.projectValues.name);
      equal(e[1], k[2]);
      equal(f[1], k[2]);
      equal(e[0], f[0]);
      abi.products.push_back({q[0], q[1], q[2], e[0]});
    }
  }
  // The gate is [B, H, N, E].
  if (spec.gate.isSet()) {
    std::vector<Extent> g = shapeOf(spec.gate.name);
    for (int d : {0, 1, 2})
      equal(g[d], q0[d]);
    equal(g[3], v[3]);
  }
  return abi;
}

std::string attnc::checkStaticProducts(const EntryAbi &abi) {
  for (const std::vector<Extent> &product : abi.products) {
    uint64_t bytes = sizeof(float);
    bool tooLarge = false, dynamic = false;
    for (const Extent &extent : product) {
      if (extent.isDynamic()) {
        dynamic = true;
        continue;
      }
      bool overflow = false;
      bytes = llvm::SaturatingMultiply(bytes, uint64_t(extent.value),
                                       &overflow);
      tooLarge |= overflow;
    }
    if (tooLarge || bytes > kMaxBytes) {
      std::string shape;
      for (const Extent &extent : product)
        shape += (shape.empty() ? "" : ", ") +
                 (extent.isDynamic() ? extent.name
                                     : std::to_string(extent.value));
      return std::string(dynamic ? "even the static sizes of " : "") +
             "an array or intermediate of shape [" + shape +
             "] is too large (more than 2^62 bytes)";
    }
  }
  return "";
}

//===----------------------------------------------------------------------===//
// The header
//===----------------------------------------------------------------------===//

/// The shape with each dynamic size under its parameter's name.
static std::string shapeText(const EntryAbi &abi,
                             const std::vector<Extent> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") +
            (shape[i].isDynamic() ? abi.dynamicCNames[shape[i].dynamic]
                                  : std::to_string(shape[i].value));
  return text + "]";
}

std::string attnc::generateHeader(const EntryAbi &abi,
                                  const CodegenTarget &target) {
  std::string guard = "ATTN_GENERATED_";
  for (char c : abi.specName)
    guard += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  guard += "_H";

  std::string prototype = "int " + abi.entryName + "(";
  std::string indent(prototype.size(), ' ');
  std::vector<std::string> params;
  for (const AbiArray &array : abi.arrays)
    params.push_back((array.isOutput ? "float *" : "const float *") +
                     array.cName);
  for (const std::string &name : abi.dynamicCNames)
    params.push_back("int64_t " + name);
  size_t column = prototype.size();
  for (size_t i = 0; i < params.size(); ++i) {
    std::string piece = params[i] + (i + 1 < params.size() ? "," : ");");
    if (i > 0) {
      if (column + 1 + piece.size() > 78) {
        prototype += "\n" + indent;
        column = indent.size();
      } else {
        prototype += " ";
        ++column;
      }
    }
    prototype += piece;
    column += piece.size();
  }

  size_t width = 3;
  for (const AbiArray &array : abi.arrays)
    width = std::max(width, array.cName.size());
  for (const std::string &name : abi.dynamicCNames)
    width = std::max(width, name.size());
  auto pad = [&](const std::string &name) {
    return name + std::string(width - name.size(), ' ');
  };

  std::string upperName;
  for (char c : abi.specName)
    upperName += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));

  std::string os;
  llvm::raw_string_ostream h(os);
  h << "/* " << abi.specName << ".h: the C interface of " << abi.specName
    << ".o, generated by attnc --emit=obj\n"
    << " * from " << llvm::sys::path::filename(abi.sourcePath)
    << ". Do not edit.\n"
    << " *\n";
  if (target.gpu)
    h << " * Link:  cc app.c " << abi.specName
      << ".o -Lbuild/lib -lattn_gpu_runtime -ldl\n"
      << " * (runtime/ of attn: the CUDA driver, loaded when the program "
         "runs).\n"
      << " * The kernels are embedded as " << target.chip << " "
      << (target.format == "isa" ? "PTX" : target.format)
      << " and load when the program starts.\n"
      << " * EVERY ARRAY POINTER IS A DEVICE POINTER (CUdeviceptr, "
         "cudaMalloc).\n"
      << " * After a call, attn_gpu_error() of the runtime is \"\" unless "
         "the GPU\n"
      << " * failed.\n";
  else
    h << " * Link:  cc app.c " << abi.specName << ".o -L" ATTN_LLVM_LIBRARY_DIR
      << " -lomp -lm \\\n"
      << " *            -Wl,-rpath," ATTN_LLVM_LIBRARY_DIR "\n"
      << " * The object is compiled for the CPU it was built on (like\n"
      << " * -march=native) and runs on OpenMP threads (OMP_NUM_THREADS).\n";
  h << " */\n"
    << "#ifndef " << guard << "\n"
    << "#define " << guard << "\n\n"
    << "#include <stdint.h>\n\n"
    << "#ifndef ATTN_OK\n"
    << "#define ATTN_OK 0           /* out holds the result */\n"
    << "#define ATTN_BAD_SIZE 1     /* a size is not positive, sizes the spec "
       "ties\n"
    << "                               differ, or an array would exceed "
       "2^62 bytes */\n"
    << "#define ATTN_NULL_POINTER 2 /* an array pointer is NULL */\n"
    << "#endif\n\n"
    << "#ifdef __cplusplus\n"
    << "extern \"C\" {\n"
    << "#endif\n\n"
    << "/* " << abi.entryName << ": attention '" << abi.specName << "'.\n"
    << " *\n"
    << " * Every array is dense float32 in row-major (C) order, aligned at "
       "least\n"
    << " * to a float; the inputs are only read, `" << abi.arrays.back().cName
    << "` is overwritten and must\n"
    << " * not overlap them.\n"
    << " *\n";
  for (const AbiArray &array : abi.arrays)
    h << " *   " << pad(array.cName) << "  " << shapeText(abi, array.shape)
      << (array.isOutput ? "  (output)" : "") << "\n";
  for (size_t i = 0; i < abi.dynamicSizes.size(); ++i)
    h << " *   " << pad(abi.dynamicCNames[i]) << "  the size "
      << abi.dynamicSizes[i] << " (dynamic), >= 1\n";
  if (!abi.staticSizes.empty()) {
    h << " *\n * Fixed in the object:";
    for (size_t i = 0; i < abi.staticSizes.size(); ++i)
      h << (i ? ", " : " ") << abi.staticSizes[i].first << " = "
        << abi.staticSizes[i].second;
    h << ".\n";
  }
  h << " *\n"
    << " * Returns ATTN_OK (0), or without touching any array ATTN_BAD_SIZE "
       "(1;\n"
    << " * the sizes are checked first) or ATTN_NULL_POINTER (2).\n"
    << " */\n"
    << prototype << "\n\n";

  // A uniform way to call any entry point, for runners that handle many
  // specs (bench/gpu's runner registers every compiled spec by it).
  h << "#define ATTN_" << upperName << "_NUM_ARRAYS " << abi.arrays.size()
    << "\n"
    << "#define ATTN_" << upperName << "_NUM_SIZES "
    << abi.dynamicSizes.size() << "\n\n"
    << "/* Calls " << abi.entryName
    << " with arrays[i] the i-th array above (the inputs,\n"
    << " * then " << abi.arrays.back().cName
    << ") and sizes[j] the j-th dynamic size. */\n"
    << "static inline int " << abi.entryName
    << "_call(void *const *arrays, const int64_t *sizes) {\n"
    << "  (void)sizes;\n"
    << "  return " << abi.entryName << "(";
  for (size_t i = 0; i < abi.arrays.size(); ++i)
    h << (i ? ", " : "") << "(" << (abi.arrays[i].isOutput ? "" : "const ")
      << "float *)arrays[" << i << "]";
  for (size_t i = 0; i < abi.dynamicSizes.size(); ++i)
    h << ", sizes[" << i << "]";
  h << ");\n}\n\n"
    << "#ifdef __cplusplus\n"
    << "}\n"
    << "#endif\n\n"
    << "#endif /* " << guard << " */\n";
  return os;
}

//===----------------------------------------------------------------------===//
// Lowering
//===----------------------------------------------------------------------===//

llvm::Error attnc::lowerToLinalg(mlir::ModuleOp module,
                                 const std::string &force,
                                 const CodegenTarget &target) {
  mlir::PassManager pm(module.getContext());
  mlir::attn::AttnSelectOrderOptions select;
  select.force = force;
  mlir::attn::ConvertAttnToLinalgOptions convert;
  if (target.gpu) {
    // What attn-lower-to-nvvm does before it bufferizes.
    mlir::attn::LowerToNVVMOptions gpu;
    select.target = gpu.target;
    select.chunk = gpu.chunk;
    convert.tileSize = gpu.tileSize;
  }
  pm.addPass(mlir::attn::createAttnSelectOrder(select));
  mlir::OpPassManager &func = pm.nest<mlir::func::FuncOp>();
  func.addPass(mlir::attn::createConvertAttnToLinalg(convert));
  func.addPass(mlir::createCanonicalizerPass());
  func.addPass(mlir::createCSEPass());
  if (mlir::failed(pm.run(module)))
    return llvm::createStringError("lowering to linalg failed");
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
attnc::createHostTargetMachine(bool portable) {
  static bool initialized = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)initialized;
  auto builder =
      portable ? llvm::Expected<llvm::orc::JITTargetMachineBuilder>(
                     llvm::orc::JITTargetMachineBuilder(
                         llvm::Triple(llvm::sys::getProcessTriple())))
               : llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder)
    return builder.takeError();
  builder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  builder->setRelocationModel(llvm::Reloc::PIC_);
  return builder->createTargetMachine();
}

/// Defines `void NAME(i64 elemSize, ptr src, ptr dst)` with the semantics of
/// MLIR's runtime `memrefCopy` (mlir/lib/ExecutionEngine/CRunnerUtils.cpp):
/// src and dst point to unranked descriptors {i64 rank, ptr ranked}, and the
/// ranked descriptor is {ptr allocated, ptr aligned, i64 offset,
/// i64 sizes[rank], i64 strides[rank]}. It copies whole rows at once when
/// both innermost strides are 1.
static llvm::Function *defineMemrefCopy(llvm::Module &module,
                                        llvm::StringRef name) {
  llvm::LLVMContext &ctx = module.getContext();
  llvm::Type *i64 = llvm::Type::getInt64Ty(ctx);
  llvm::Type *i8 = llvm::Type::getInt8Ty(ctx);
  llvm::Type *ptr = llvm::PointerType::getUnqual(ctx);
  auto *type = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx),
                                       {i64, ptr, ptr}, false);
  auto *fn = llvm::Function::Create(type, llvm::GlobalValue::InternalLinkage,
                                    name, module);
  llvm::Argument *elemSize = fn->getArg(0), *src = fn->getArg(1),
                 *dst = fn->getArg(2);
  elemSize->setName("elem_size");
  src->setName("src");
  dst->setName("dst");

  auto block = [&](const char *label) {
    return llvm::BasicBlock::Create(ctx, label, fn);
  };
  llvm::BasicBlock *entry = block("entry"), *emptyLoop = block("empty.loop"),
                   *emptyBody = block("empty.body"), *setup = block("setup"),
                   *scalar = block("rank0"), *strided = block("strided"),
                   *copy = block("copy"), *axisLoop = block("axis.loop"),
                   *axisBody = block("axis.body"),
                   *axisReset = block("axis.reset"), *done = block("done");
  llvm::IRBuilder<> b(entry);
  auto c64 = [&](int64_t v) { return b.getInt64(v); };
  auto byteGep = [&](llvm::Value *base, llvm::Value *offset) {
    return b.CreateGEP(i8, base, offset);
  };
  auto word = [&](llvm::Value *desc, llvm::Value *index) {
    return b.CreateLoad(i64, b.CreateGEP(i64, desc, index));
  };

  llvm::Value *rank = b.CreateLoad(i64, src, "rank");
  llvm::Value *srcDesc = b.CreateLoad(ptr, byteGep(src, c64(8)), "src.desc");
  llvm::Value *dstDesc = b.CreateLoad(ptr, byteGep(dst, c64(8)), "dst.desc");
  llvm::Value *srcData = b.CreateLoad(ptr, byteGep(srcDesc, c64(8)));
  llvm::Value *dstData = b.CreateLoad(ptr, byteGep(dstDesc, c64(8)));
  llvm::Value *srcPtr =
      byteGep(srcData, b.CreateMul(word(srcDesc, c64(2)), elemSize));
  llvm::Value *dstPtr =
      byteGep(dstData, b.CreateMul(word(dstDesc, c64(2)), elemSize));
  // sizes[i] is word 3 + i, strides[i] word 3 + rank + i.
  auto size = [&](llvm::Value *i) {
    return word(srcDesc, b.CreateAdd(c64(3), i));
  };
  auto stride = [&](llvm::Value *desc, llvm::Value *i) {
    return word(desc, b.CreateAdd(b.CreateAdd(c64(3), rank), i));
  };
  llvm::Value *index = b.CreateAlloca(i64, rank, "index");
  llvm::Value *readSlot = b.CreateAlloca(i64, nullptr, "read");
  llvm::Value *writeSlot = b.CreateAlloca(i64, nullptr, "write");
  llvm::Value *axisSlot = b.CreateAlloca(i64, nullptr, "axis");
  b.CreateBr(emptyLoop);

  // Nothing to copy when a size is 0; zero the index meanwhile.
  b.SetInsertPoint(emptyLoop);
  llvm::PHINode *i = b.CreatePHI(i64, 2, "i");
  i->addIncoming(c64(0), entry);
  b.CreateCondBr(b.CreateICmpEQ(i, rank), setup, emptyBody);
  b.SetInsertPoint(emptyBody);
  b.CreateStore(c64(0), b.CreateGEP(i64, index, i));
  llvm::Value *next = b.CreateAdd(i, c64(1));
  i->addIncoming(next, emptyBody);
  b.CreateCondBr(b.CreateICmpEQ(size(i), c64(0)), done, emptyLoop);

  b.SetInsertPoint(setup);
  b.CreateCondBr(b.CreateICmpEQ(rank, c64(0)), scalar, strided);
  b.SetInsertPoint(scalar);
  b.CreateMemCpy(dstPtr, llvm::MaybeAlign(1), srcPtr, llvm::MaybeAlign(1),
                 elemSize);
  b.CreateBr(done);

  // The odometer runs over the `outer` leading axes; each step copies a
  // row of `rowBytes` (the whole innermost axis when it is contiguous on
  // both sides, else one element).
  b.SetInsertPoint(strided);
  llvm::Value *last = b.CreateSub(rank, c64(1));
  llvm::Value *contiguous =
      b.CreateAnd(b.CreateICmpEQ(stride(srcDesc, last), c64(1)),
                  b.CreateICmpEQ(stride(dstDesc, last), c64(1)));
  llvm::Value *rowBytes =
      b.CreateMul(b.CreateSelect(contiguous, size(last), c64(1)), elemSize);
  llvm::Value *outer = b.CreateSelect(contiguous, last, rank);
  b.CreateStore(c64(0), readSlot);
  b.CreateStore(c64(0), writeSlot);
  b.CreateBr(copy);

  b.SetInsertPoint(copy);
  b.CreateMemCpy(byteGep(dstPtr, b.CreateLoad(i64, writeSlot)),
                 llvm::MaybeAlign(1),
                 byteGep(srcPtr, b.CreateLoad(i64, readSlot)),
                 llvm::MaybeAlign(1), rowBytes);
  b.CreateStore(b.CreateSub(outer, c64(1)), axisSlot);
  b.CreateBr(axisLoop);

  b.SetInsertPoint(axisLoop);
  llvm::Value *axis = b.CreateLoad(i64, axisSlot);
  b.CreateCondBr(b.CreateICmpSLT(axis, c64(0)), done, axisBody);

  b.SetInsertPoint(axisBody);
  llvm::Value *slot = b.CreateGEP(i64, index, axis);
  llvm::Value *advanced = b.CreateAdd(b.CreateLoad(i64, slot), c64(1));
  b.CreateStore(advanced, slot);
  llvm::Value *srcStep = b.CreateMul(stride(srcDesc, axis), elemSize);
  llvm::Value *dstStep = b.CreateMul(stride(dstDesc, axis), elemSize);
  b.CreateStore(b.CreateAdd(b.CreateLoad(i64, readSlot), srcStep), readSlot);
  b.CreateStore(b.CreateAdd(b.CreateLoad(i64, writeSlot), dstStep),
                writeSlot);
  llvm::Value *extent = size(axis);
  b.CreateCondBr(b.CreateICmpNE(advanced, extent), copy, axisReset);

  // This axis wrapped: undo its advance and carry into the next outer one.
  b.SetInsertPoint(axisReset);
  b.CreateStore(c64(0), slot);
  b.CreateStore(b.CreateSub(b.CreateLoad(i64, readSlot),
                            b.CreateMul(extent, srcStep)),
                readSlot);
  b.CreateStore(b.CreateSub(b.CreateLoad(i64, writeSlot),
                            b.CreateMul(extent, dstStep)),
                writeSlot);
  b.CreateStore(b.CreateSub(axis, c64(1)), axisSlot);
  b.CreateBr(axisLoop);

  b.SetInsertPoint(done);
  b.CreateRetVoid();
  return fn;
}

/// Defines the entry point of \p abi, which calls \p cInterface.
static llvm::Error defineEntry(llvm::Module &module, const EntryAbi &abi,
                               llvm::Function *cInterface) {
  llvm::LLVMContext &ctx = module.getContext();
  llvm::Type *i64 = llvm::Type::getInt64Ty(ctx);
  llvm::Type *i32 = llvm::Type::getInt32Ty(ctx);
  llvm::Type *ptr = llvm::PointerType::getUnqual(ctx);
  if (module.getNamedValue(abi.entryName))
    return llvm::createStringError("the generated code already has a symbol "
                                   "named '" +
                                   abi.entryName + "'");

  std::vector<llvm::Type *> params(abi.arrays.size(), ptr);
  params.insert(params.end(), abi.dynamicSizes.size(), i64);
  auto *fn = llvm::Function::Create(llvm::FunctionType::get(i32, params, false),
                                    llvm::GlobalValue::ExternalLinkage,
                                    abi.entryName, module);
  fn->setDSOLocal(true);
  // Keep what the generated code's functions say about frame pointers,
  // unwinding and the like.
  for (llvm::Attribute attribute : cInterface->getAttributes().getFnAttrs())
    if (attribute.isStringAttribute() ||
        attribute.getKindAsEnum() == llvm::Attribute::NoUnwind ||
        attribute.getKindAsEnum() == llvm::Attribute::UWTable)
      fn->addFnAttr(attribute);
  std::vector<llvm::Value *> arrays, dynamic;
  for (size_t i = 0; i < abi.arrays.size(); ++i) {
    fn->getArg(i)->setName(abi.arrays[i].cName);
    arrays.push_back(fn->getArg(i));
  }
  for (size_t i = 0; i < abi.dynamicSizes.size(); ++i) {
    llvm::Argument *arg = fn->getArg(abi.arrays.size() + i);
    arg->setName(abi.dynamicCNames[i]);
    dynamic.push_back(arg);
  }

  llvm::BasicBlock *entry = llvm::BasicBlock::Create(ctx, "entry", fn);
  llvm::BasicBlock *checkPointers =
      llvm::BasicBlock::Create(ctx, "check.pointers", fn);
  llvm::BasicBlock *call = llvm::BasicBlock::Create(ctx, "call", fn);
  llvm::BasicBlock *badSize = llvm::BasicBlock::Create(ctx, "bad.size", fn);
  llvm::BasicBlock *nullPointer =
      llvm::BasicBlock::Create(ctx, "null.pointer", fn);
  llvm::IRBuilder<> b(entry);

  // The descriptors, as static allocas.
  std::vector<llvm::StructType *> descriptorTypes;
  std::vector<llvm::Value *> descriptors;
  for (const AbiArray &array : abi.arrays) {
    auto *dims = llvm::ArrayType::get(i64, array.shape.size());
    auto *type = llvm::StructType::get(ctx, {ptr, ptr, i64, dims, dims});
    descriptorTypes.push_back(type);
    descriptors.push_back(b.CreateAlloca(type, nullptr, array.cName + ".desc"));
  }

  auto value = [&](const Extent &extent) -> llvm::Value * {
    return extent.isDynamic() ? dynamic[extent.dynamic]
                              : b.getInt64(extent.value);
  };
  llvm::Value *bad = b.getFalse();
  for (llvm::Value *size : dynamic)
    bad = b.CreateOr(bad, b.CreateICmpSLT(size, b.getInt64(1)));
  for (const auto &[lhs, rhs] : abi.equalities)
    bad = b.CreateOr(bad, b.CreateICmpNE(value(lhs), value(rhs)));
  for (const std::vector<Extent> &product : abi.products) {
    llvm::Value *bytes = b.getInt64(sizeof(float));
    for (const Extent &extent : product) {
      llvm::Value *result = b.CreateBinaryIntrinsic(
          llvm::Intrinsic::umul_with_overflow, bytes, value(extent));
      bytes = b.CreateExtractValue(result, 0);
      bad = b.CreateOr(bad, b.CreateExtractValue(result, 1));
    }
    bad = b.CreateOr(bad, b.CreateICmpUGT(bytes, b.getInt64(kMaxBytes)));
  }
  b.CreateCondBr(bad, badSize, checkPointers);

  b.SetInsertPoint(checkPointers);
  llvm::Value *null = b.getFalse();
  for (llvm::Value *array : arrays)
    null = b.CreateOr(null, b.CreateIsNull(array));
  b.CreateCondBr(null, nullPointer, call);

  b.SetInsertPoint(call);
  for (size_t a = 0; a < abi.arrays.size(); ++a) {
    const std::vector<Extent> &shape = abi.arrays[a].shape;
    llvm::StructType *type = descriptorTypes[a];
    llvm::Value *desc = descriptors[a];
    b.CreateStore(arrays[a], b.CreateStructGEP(type, desc, 0));
    b.CreateStore(arrays[a], b.CreateStructGEP(type, desc, 1));
    b.CreateStore(b.getInt64(0), b.CreateStructGEP(type, desc, 2));
    llvm::Value *stride = b.getInt64(1);
    for (size_t d = shape.size(); d-- > 0;) {
      llvm::Value *size = value(shape[d]);
      b.CreateStore(size, b.CreateConstInBoundsGEP2_32(
                              type->getElementType(3),
                              b.CreateStructGEP(type, desc, 3), 0, d));
      b.CreateStore(stride, b.CreateConstInBoundsGEP2_32(
                                type->getElementType(4),
                                b.CreateStructGEP(type, desc, 4), 0, d));
      stride = b.CreateMul(stride, size, "", /*HasNUW=*/true,
                           /*HasNSW=*/true);
    }
  }
  b.CreateCall(cInterface, descriptors);
  b.CreateRet(b.getInt32(kStatusOk));

  b.SetInsertPoint(badSize);
  b.CreateRet(b.getInt32(kStatusBadSize));
  b.SetInsertPoint(nullPointer);
  b.CreateRet(b.getInt32(kStatusNullPointer));
  return llvm::Error::success();
}

llvm::Error attnc::runTargetPipeline(mlir::ModuleOp module,
                                     const std::string &force,
                                     const CodegenTarget &target) {
  mlir::PassManager pm(module.getContext());
  if (target.gpu) {
    mlir::attn::LowerToNVVMOptions lower;
    lower.force = force;
    lower.chip = target.chip;
    lower.features = target.features;
    lower.format = target.format;
    lower.emulate = target.emulate;
    mlir::attn::buildLowerToNVVMPipeline(pm, lower);
  } else {
    mlir::attn::LowerToLLVMOptions lower;
    lower.force = force;
    mlir::attn::buildLowerToLLVMPipeline(pm, lower);
  }
  if (mlir::failed(pm.run(module)))
    return llvm::createStringError(target.gpu ? "lowering to NVVM failed"
                                              : "lowering to LLVM failed");
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<llvm::Module>>
attnc::lowerToLLVMIR(mlir::ModuleOp module, const EntryAbi &abi,
                     const std::string &force, const CodegenTarget &target,
                     llvm::LLVMContext &llvmContext,
                     llvm::TargetMachine &machine) {
  // The spec's function is named after the spec, which may well be the
  // name of a function the generated code calls (`free`, `memset`, `expf`,
  // `__kmpc_fork_call`): give it a name no C symbol can have first.
  std::string internalName = "attn.spec." + abi.specName;
  auto specFunction = module.lookupSymbol<mlir::func::FuncOp>(abi.specName);
  if (!specFunction)
    return llvm::createStringError("the module has no function '" +
                                   abi.specName + "'");
  specFunction.setSymName(internalName);

  if (llvm::Error error = runTargetPipeline(module, force, target))
    return std::move(error);

  // The argument names that attnc gives the spec's function mean nothing
  // to LLVM (the translation would warn about each).
  module.walk([](mlir::LLVM::LLVMFuncOp fn) {
    for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i)
      fn.removeArgAttr(i, "attn.input");
  });
  std::unique_ptr<llvm::Module> llvmModule =
      mlir::translateModuleToLLVMIR(module, llvmContext, abi.specName);
  if (!llvmModule)
    return llvm::createStringError("translation to LLVM IR failed");
  llvmModule->setDataLayout(machine.createDataLayout());
  llvmModule->setTargetTriple(machine.getTargetTriple());

  std::string cInterfaceName = "_mlir_ciface_" + internalName;
  llvm::Function *cInterface = llvmModule->getFunction(cInterfaceName);
  if (!cInterface || cInterface->isDeclaration() ||
      cInterface->arg_size() != abi.arrays.size() ||
      !cInterface->getReturnType()->isVoidTy())
    return llvm::createStringError(
        "the lowered module has no function '" + cInterfaceName +
        "' taking " + std::to_string(abi.arrays.size()) +
        " memref descriptors (attn-destination-abi's convention)");

  // MLIR lowers a memref.copy between layouts it cannot prove contiguous to
  // a call to `memrefCopy` of libmlir_c_runner_utils: give the object its
  // own, internal one instead, so that it needs no MLIR library.
  if (llvm::Function *runtimeCopy = llvmModule->getFunction("memrefCopy")) {
    llvm::FunctionType *type = runtimeCopy->getFunctionType();
    llvm::LLVMContext &ctx = llvmContext;
    if (!runtimeCopy->isDeclaration() || !type->getReturnType()->isVoidTy() ||
        type->getNumParams() != 3 ||
        type->getParamType(0) != llvm::Type::getInt64Ty(ctx) ||
        !type->getParamType(1)->isPointerTy() ||
        !type->getParamType(2)->isPointerTy())
      return llvm::createStringError(
          "the lowered module's memrefCopy has an unexpected signature");
    llvm::Function *copy = defineMemrefCopy(*llvmModule, "attn.memref_copy");
    runtimeCopy->replaceAllUsesWith(copy);
    runtimeCopy->eraseFromParent();
  }

  if (llvm::Error error = defineEntry(*llvmModule, abi, cInterface))
    return std::move(error);

  // Only the entry point is exported: the spec's function and its C
  // interface are implementation details.
  for (llvm::Function &fn : *llvmModule)
    if (!fn.isDeclaration() && fn.getName() != abi.entryName)
      fn.setLinkage(llvm::GlobalValue::InternalLinkage);
  // llvm.global_ctors (which loads the GPU kernels) keeps its linkage.
  for (llvm::GlobalVariable &global : llvmModule->globals())
    if (!global.isDeclaration() && !global.getName().starts_with("llvm."))
      global.setLinkage(llvm::GlobalValue::InternalLinkage);

  std::string problems;
  llvm::raw_string_ostream verifierOutput(problems);
  if (llvm::verifyModule(*llvmModule, &verifierOutput))
    return llvm::createStringError("the LLVM IR does not verify: " + problems);

  auto optimize = mlir::makeOptimizingTransformer(/*optLevel=*/3,
                                                  /*sizeLevel=*/0, &machine);
  if (llvm::Error error = optimize(llvmModule.get()))
    return std::move(error);
  return std::move(llvmModule);
}

llvm::Expected<std::string>
attnc::lowerToGPUBinary(mlir::ModuleOp module, const std::string &force,
                        const CodegenTarget &target) {
  if (llvm::Error error = runTargetPipeline(module, force, target))
    return std::move(error);
  std::string binary;
  unsigned count = 0;
  module.walk([&](mlir::gpu::BinaryOp op) {
    for (mlir::Attribute object : op.getObjects()) {
      binary = mlir::cast<mlir::gpu::ObjectAttr>(object).getObject().str();
      ++count;
    }
  });
  if (count != 1)
    return llvm::createStringError(
        "expected one serialised GPU module, found " + std::to_string(count));
  return binary;
}

llvm::Expected<std::string> attnc::emitObject(llvm::Module &module,
                                              llvm::TargetMachine &machine) {
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager pm;
  if (machine.addPassesToEmitFile(pm, os, nullptr,
                                  llvm::CodeGenFileType::ObjectFile))
    return llvm::createStringError(
        "the host target cannot emit object files");
  pm.run(module);
  return std::string(buffer.begin(), buffer.end());
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

namespace {
/// A file written to a temporary in its directory, to be renamed in place.
struct StagedFile {
  std::string path, temp;
  bool renamed = false;
};
} // namespace

static std::string errnoText(int err) { return std::strerror(err); }

static llvm::Error writeTemporary(StagedFile &file,
                                  const std::string &contents) {
  static unsigned counter = 0;
  llvm::StringRef directory = llvm::sys::path::parent_path(file.path);
  llvm::StringRef base = llvm::sys::path::filename(file.path);
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    llvm::SmallString<256> temp(directory);
    llvm::sys::path::append(temp, "." + base + ".tmp." +
                                      std::to_string(::getpid()) + "." +
                                      std::to_string(counter++));
    file.temp = temp.str().str();
    fd = ::open(file.temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                0666);
    if (fd < 0 && errno != EEXIST && errno != EINTR)
      break;
  }
  if (fd < 0) {
    int err = errno;
    file.temp.clear();
    return llvm::createStringError("cannot write '" + file.path +
                                   "': " + errnoText(err));
  }
  llvm::sys::RemoveFileOnSignal(file.temp);
  auto fail = [&](int err) {
    if (fd >= 0)
      ::close(fd);
    return llvm::createStringError("cannot write '" + file.path +
                                   "': " + errnoText(err));
  };
  const char *data = contents.data();
  size_t left = contents.size();
  while (left > 0) {
    ssize_t written = ::write(fd, data, left);
    if (written < 0) {
      if (errno == EINTR)
        continue;
      return fail(errno);
    }
    data += written;
    left -= written;
  }
  if (::fsync(fd) != 0)
    return fail(errno);
  int closed = ::close(fd);
  fd = -1;
  if (closed != 0)
    return fail(errno);
  return llvm::Error::success();
}

llvm::Error attnc::writeFilesAtomically(
    const std::vector<std::pair<std::string, std::string>> &files) {
  std::vector<StagedFile> staged(files.size());
  auto cleanUp = [&](llvm::Error error) {
    for (StagedFile &file : staged) {
      if (file.renamed) {
        ::unlink(file.path.c_str());
      } else if (!file.temp.empty()) {
        ::unlink(file.temp.c_str());
        llvm::sys::DontRemoveFileOnSignal(file.temp);
      }
    }
    return error;
  };
  for (size_t i = 0; i < files.size(); ++i) {
    staged[i].path = files[i].first;
    if (llvm::Error error = writeTemporary(staged[i], files[i].second))
      return cleanUp(std::move(error));
  }
  for (StagedFile &file : staged) {
    if (::rename(file.temp.c_str(), file.path.c_str()) != 0)
      return cleanUp(llvm::createStringError("cannot write '" + file.path +
                                             "': " + errnoText(errno)));
    file.renamed = true;
    llvm::sys::DontRemoveFileOnSignal(file.temp);
  }
  return llvm::Error::success();
}
