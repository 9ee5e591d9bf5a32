// RUN: attn-opt %s -split-input-file -verify-diagnostics --attn-merge-gpu-modules | FileCheck %s

// Every kernel moves into the first gpu.module; the second @kernel is
// renamed, and each gpu.launch_func follows its kernel.
// CHECK-LABEL: func.func @host(
// CHECK-NEXT:    %[[C1:.+]] = arith.constant 1 : index
// CHECK-NEXT:    gpu.launch_func @first::@kernel blocks
// CHECK-NEXT:    gpu.launch_func @first::@kernel_0 blocks
// CHECK-NEXT:    gpu.launch_func @first::@other blocks
// CHECK-NEXT:    gpu.launch_func @first::@kernel blocks
// CHECK-NEXT:    return
// CHECK:       gpu.module @first {
// CHECK-NEXT:    gpu.func @kernel(%{{.+}}: memref<8xf32>) kernel {
// CHECK-NEXT:      gpu.return
// CHECK-NEXT:    }
// CHECK-NEXT:    gpu.func @kernel_0(%[[ARG:.+]]: memref<8xf32>) kernel {
// CHECK:           memref.store %{{.+}}, %[[ARG]][
// CHECK:         gpu.func @other(
// CHECK:       }
// CHECK-NOT:   gpu.module
module attributes {gpu.container_module} {
  func.func @host(%a: memref<8xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @first::@kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<8xf32>)
    gpu.launch_func @second::@kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<8xf32>)
    gpu.launch_func @third::@other blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<8xf32>)
    gpu.launch_func @first::@kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<8xf32>)
    return
  }
  gpu.module @first {
    gpu.func @kernel(%arg0: memref<8xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @second {
    gpu.func @kernel(%arg0: memref<8xf32>) kernel {
      %c0 = arith.constant 0 : index
      %one = arith.constant 1.0 : f32
      memref.store %one, %arg0[%c0] : memref<8xf32>
      gpu.return
    }
  }
  gpu.module @third {
    gpu.func @other(%arg0: memref<8xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// One gpu.module is left as it is.
// CHECK-LABEL: func.func @single(
// CHECK-NEXT:    %{{.+}} = arith.constant 1 : index
// CHECK-NEXT:    gpu.launch_func @only::@kernel blocks
// CHECK:       gpu.module @only {
// CHECK-NEXT:    gpu.func @kernel() kernel {
module attributes {gpu.container_module} {
  func.func @single() {
    %c1 = arith.constant 1 : index
    gpu.launch_func @only::@kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    return
  }
  gpu.module @only {
    gpu.func @kernel() kernel {
      gpu.return
    }
  }
}

// -----

// Modules compiled for different targets cannot share one binary.
module attributes {gpu.container_module} {
  gpu.module @first [#nvvm.target<chip = "sm_80">] {
    gpu.func @kernel() kernel {
      gpu.return
    }
  }
  // expected-error@+1 {{'gpu.module' op has other targets than first and cannot be merged into it}}
  gpu.module @second [#nvvm.target<chip = "sm_90">] {
    gpu.func @kernel() kernel {
      gpu.return
    }
  }
}

// -----

// A helper whose name clashes is renamed together with its calls.
// CHECK-LABEL: gpu.module @first
// CHECK:         func.func private @helper()
// CHECK:         gpu.func @k1() kernel
// CHECK-NEXT:      func.call @helper()
// CHECK:         func.func private @helper_0()
// CHECK-NEXT:      arith.constant 2 : i32
// CHECK:         gpu.func @k2() kernel
// CHECK-NEXT:      func.call @helper_0()
module attributes {gpu.container_module} {
  func.func @host() {
    %c1 = arith.constant 1 : index
    gpu.launch_func @first::@k1 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    gpu.launch_func @second::@k2 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    return
  }
  gpu.module @first {
    func.func private @helper() -> i32 {
      %c = arith.constant 1 : i32
      return %c : i32
    }
    gpu.func @k1() kernel {
      %r = func.call @helper() : () -> i32
      gpu.return
    }
  }
  gpu.module @second {
    func.func private @helper() -> i32 {
      %c = arith.constant 2 : i32
      return %c : i32
    }
    gpu.func @k2() kernel {
      %r = func.call @helper() : () -> i32
      gpu.return
    }
  }
}
