// Errors of attn-select-order: each exits non-zero with one message.

// force=kv_first is only legal for kernel terms; the kernel term before the
// softmax one is fine, the error names the softmax term and the pass stops
// there. relu2 gets the same message.
// RUN: split-file --leading-lines %s %t
// RUN: not attn-opt %t/mixed.mlir "--attn-select-order=force=kv_first" 2>&1 \
// RUN:   | FileCheck %t/mixed.mlir --check-prefix=KV
// RUN: not attn-opt %t/relu2.mlir "--attn-select-order=force=kv_first" 2>&1 \
// RUN:   | FileCheck %t/relu2.mlir --check-prefix=KV
// Without force, and with force=qk_first, the same input is fine.
// RUN: attn-opt %t/mixed.mlir --attn-select-order 2>&1 \
// RUN:   | FileCheck %t/mixed.mlir --check-prefix=OK
// RUN: attn-opt %t/mixed.mlir "--attn-select-order=force=qk_first" 2>&1 \
// RUN:   | FileCheck %t/mixed.mlir --check-prefix=OK

// RUN: not attn-opt %s "--attn-select-order=force=bogus" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=FORCE
// force is an enum option (auto, qk_first, kv_first): the option parser
// rejects anything else.
// FORCE: for the --force option: Cannot find option named 'bogus'!

// RUN: not attn-opt %s "--attn-select-order=target=/nonexistent/file" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MISSING
// MISSING: error: attn-select-order: cannot read target file '/nonexistent/file'

// A target file with a bad key: the message names the file and the line.
// RUN: echo "# a target" > %t.target
// RUN: echo "peak_flops = 1e12" >> %t.target
// RUN: echo "bogus_key = 3" >> %t.target
// RUN: not attn-opt %s "--attn-select-order=target=%t.target" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=KEY -DFILE=%t.target
// KEY: error: attn-select-order: target file '[[FILE]]': line 3: unknown target key 'bogus_key'

// A bad number, an efficiency above 1, and an unknown base.
// RUN: echo "memory_bandwidth = fast" > %t.number
// RUN: not attn-opt %s "--attn-select-order=target=%t.number" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NUMBER
// NUMBER: error: attn-select-order: target file '{{.*}}': line 1: 'memory_bandwidth' needs a positive number, got 'fast'
// RUN: echo '{"base": "nvptx", "kv_efficiency": 1.5}' > %t.json
// RUN: not attn-opt %s "--attn-select-order=target=%t.json" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=EFFICIENCY
// EFFICIENCY: error: attn-select-order: target file '{{.*}}': 'kv_efficiency' is a fraction of the peak and must be at most 1, got '1.5'
// RUN: echo "base = tpu" > %t.base
// RUN: not attn-opt %s "--attn-select-order=target=%t.base" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BASE
// BASE: error: attn-select-order: target file '{{.*}}': line 1: unknown base target 'tpu'; expected cpu or nvptx

// RUN: not attn-opt %s "--attn-select-order=chunk=-1" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CHUNK
// CHUNK: error: attn-select-order: chunk must be positive, got -1
// RUN: not attn-opt %s "--attn-select-order=chunk=abc" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CHUNKTEXT
// CHUNKTEXT: for the --chunk option: 'abc' value invalid

//--- mixed.mlir
// OK-NOT: error:
// OK:     attn.term kernel elu1 (%{{.*}}) order
// OK:     attn.term softmax (%{{.*}}) order qk_first chunk 64
// OK:     attn.term relu2 (%{{.*}}) order qk_first chunk 64
// KV-NOT: error:
func.func @f(%q: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  %0 = attn.term kernel elu1 (%q, %q, %q)
         : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  // KV: mixed.mlir:[[@LINE+1]]:8: error: 'attn.term' op force=kv_first is not legal: score 'softmax' has no product form (only qk_first)
  %1 = attn.term softmax (%q, %q, %q)
         : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  // KV-NOT: error:
  %2 = attn.term relu2 (%q, %q, %q)
         : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  %3 = attn.combine %0, %1, %2 : tensor<1x2x16x8xf32>
  return %3 : tensor<1x2x16x8xf32>
}

//--- relu2.mlir
func.func @g(%q: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // KV: relu2.mlir:[[@LINE+1]]:8: error: 'attn.term' op force=kv_first is not legal: score 'relu2' has no product form (only qk_first)
  %0 = attn.term relu2 (%q, %q, %q)
         : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}
