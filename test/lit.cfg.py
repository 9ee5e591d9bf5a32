# -*- Python -*-
# lit configuration for attn's FileCheck tests.

import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "ATTN"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".attn", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.attn_obj_root, "test")
# Unit/ has its own configuration (gtest binaries).
config.excludes = ["Unit", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%shlibext", config.llvm_shlib_ext))
config.substitutions.append(("%attn_libs", config.attn_lib_dir))
config.substitutions.append(("%llvm_libs", config.llvm_lib_dir))
config.substitutions.append(("%attn_src", config.attn_src_root))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
# The cost model's built-in numbers, whatever `attnc calibrate` has cached
# for this machine in HOME: tests pin the defaults' choices. calibrate.test
# unsets it to test the lookup.
config.environment["ATTN_CALIBRATION"] = "none"
llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.attn_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tool_dirs = [config.attn_tools_dir, config.llvm_tools_dir]
tools = [
    "attn-opt",
    "attnc",
    "attn-gpu-runtime-test",
    "attn-gpu-runner",
    "attn-example-cpp",
    "not",
    "mlir-runner",
    "split-file",
    # The stock mlir-opt from the packages, to load the plugins into.
    ToolSubst("host-mlir-opt", config.host_mlir_opt),
]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# The CUDA toolkit's link-time stub driver: loading it makes cuInit fail with
# CUDA_ERROR_STUB_LIBRARY, which test/Runtime/stub-driver.test checks.
config.cuda_stub_driver = "/usr/local/cuda/lib64/stubs/libcuda.so"
if os.path.exists(config.cuda_stub_driver):
    config.available_features.add("cuda-stub")
    config.substitutions.append(("%cuda_stub_driver", config.cuda_stub_driver))
