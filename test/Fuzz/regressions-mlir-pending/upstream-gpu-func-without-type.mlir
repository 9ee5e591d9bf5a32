// UPSTREAM (MLIR 22, not attn): `attn-opt FILE` crashes in the verifier: the
// gpu.container_module check reads the function_type of the gpu.func a
// gpu.launch_func names before that gpu.func is verified, and this one
// has none (null TypeAttr::getValue()). Found by attn-mlir-fuzzer (seed
// 100, mutant 2150 of test/Codegen/GPU/attn-merge-gpu-modules.mlir,
// minimised with --reduce).

"builtin.module"() ({
  "func.func"() <{function_type = () -> (), sym_name = "host"}> ({
    %c1 = "arith.constant"() <{value = 1 : index}> : () -> index
    "gpu.launch_func"(%c1, %c1, %c1, %c1, %c1, %c1) <{kernel = @kernels::@kernel, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0>}> : (index, index, index, index, index, index) -> ()
    "func.return"() : () -> ()
  }) : () -> ()
  "gpu.module"() <{sym_name = "kernels"}> ({
    "gpu.func"() <{}> ({
      "gpu.return"() : () -> ()
    }) {gpu.kernel, sym_name = "kernel", workgroup_attributions = 0 : i64} : () -> ()
  }) : () -> ()
}) {gpu.container_module} : () -> ()
