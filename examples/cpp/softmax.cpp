//===- examples/cpp/softmax.cpp - The compiler library from C++ -----------===//
//
// Compiles a spec with attn::compiler::Compiler, prints the stages it can
// stop at, and runs the kernel in process on generated inputs:
//
//   build/bin/attn-example-cpp examples/softmax.attn 100
//
//===----------------------------------------------------------------------===//

#include "attn/Compiler/Compiler.h"
#include "attn/Compiler/Kernel.h"
#include "attn/Frontend/RunInputs.h"
#include "attn/Reference/Reference.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace attn;
using namespace attn::compiler;
using namespace attn::frontend;

int main(int argc, char **argv) {
  std::string path = argc > 1 ? argv[1] : "examples/softmax.attn";
  int64_t n = argc > 2 ? std::atoll(argv[2]) : 100;

  // Messages go to stderr as attnc prints them.
  Compiler compiler(CompilerOptions(), llvm::errs());
  if (!compiler.loadSpecFile(path))
    return 1;
  const Spec &spec = compiler.getSpec();

  // Bind every dynamic dim to n, so that the kernel is specialised.
  SizeBindings overrides;
  for (const DimDecl &dim : spec.dims)
    if (!dim.value)
      overrides[dim.name] = n;
  std::optional<SizeBindings> sizes = compiler.bindSizes(overrides, false);
  if (!sizes)
    return 1;

  // The attn dialect, then the kernel loaded into this process.
  mlir::OwningOpRef<mlir::ModuleOp> module = compiler.generateModule(*sizes);
  if (!module)
    return 1;
  llvm::outs() << "attn module with "
               << std::distance(module->getBody()->begin(),
                                module->getBody()->end())
               << " function(s)\n";
  std::optional<CompiledObject> object =
      compiler.compileKernelObject(*module, *sizes);
  if (!object)
    return 1;
  llvm::outs() << "object: " << object->object.size() << " bytes, entry "
               << object->abi.entryName << "\n";
  std::unique_ptr<Kernel> kernel = compiler.loadKernel(std::move(*object));
  if (!kernel)
    return 1;

  // Inputs as `attnc run` generates them, the output, and the reference.
  RunInputs inputs(spec);
  if (std::string error = inputs.generate(*sizes, /*seed=*/0); !error.empty())
    return llvm::errs() << error << "\n", 1;
  reference::Problem problem = buildProblem(spec, inputs.all());
  std::vector<int64_t> shape = outputShape(problem);
  std::vector<float> out(shape[0] * shape[1] * shape[2] * shape[3]);
  std::vector<float> expected(out.size());
  std::vector<void *> arrays;
  for (const InputDecl &input : spec.inputs)
    arrays.push_back(const_cast<float *>(inputs.get(input.name).data.data()));
  arrays.push_back(out.data());
  if (int status = kernel->call(arrays.data(), nullptr))
    return llvm::errs() << "the entry point returned " << status << "\n", 1;
  if (std::string error = reference::evaluate(problem, expected.data());
      !error.empty())
    return llvm::errs() << error << "\n", 1;
  Comparison comparison =
      compareWithReference(out, expected, checkTolerance(spec));
  llvm::outs() << spec.name << " " << formatShape(shape)
               << ": max rel error " << comparison.maxRelError << ": "
               << (comparison.ok ? "ok" : "FAILED") << "\n";
  return comparison.ok ? 0 : 1;
}
