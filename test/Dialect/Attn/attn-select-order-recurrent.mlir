// attn-select-order and the recurrent order (DESIGN §1.2, §2): force=recurrent
// records it on causal kernel terms; with the built-in CPU numbers a causal
// prefill picks chunked kv-first (recurrent only wins when the target says
// its per-token updates run near the peak, second file); a term without the
// recurrent form is an error under force=recurrent.
// RUN: split-file %s %t
// RUN: attn-opt %t/causal.mlir "--attn-select-order=force=recurrent" | FileCheck %t/causal.mlir --check-prefix=FORCED
// RUN: attn-opt %t/causal.mlir --attn-select-order | FileCheck %t/causal.mlir --check-prefix=AUTO
// RUN: attn-opt %t/causal.mlir "--attn-select-order=target=%t/fast-recurrent.target" | FileCheck %t/causal.mlir --check-prefix=FAST
// RUN: not attn-opt %t/plain.mlir "--attn-select-order=force=recurrent" 2>&1 | FileCheck %t/plain.mlir

//--- causal.mlir
// FORCED: attn.term kernel identity {{.*}} decay 9.000000e-01 mask causal normalizer none order recurrent :
// AUTO:   attn.term kernel identity {{.*}} decay 9.000000e-01 mask causal normalizer none order kv_first chunk {{[0-9]+}} :
// FAST:   attn.term kernel identity {{.*}} order recurrent :
!t = tensor<1x8x4096x64xf32>
func.func @decayed(%q: !t, %k: !t, %v: !t) -> !t {
  %o = attn.term kernel identity (%q, %k, %v) decay 0.9 mask causal normalizer none : !t, !t, !t -> !t
  return %o : !t
}

//--- fast-recurrent.target
base = cpu
recurrent_efficiency = 1
kv_efficiency = 0.01
chunked_efficiency = 0.01
qk_kernel_masked_efficiency = 0.001

//--- plain.mlir
// CHECK: error: 'attn.term' op force=recurrent is not legal: it needs a 'kernel' term with mask 'causal' and no projection
!t = tensor<1x8x64x64xf32>
func.func @plain(%q: !t, %k: !t, %v: !t) -> !t {
  %o = attn.term kernel elu1 (%q, %k, %v) mask block_causal(16) : !t, !t, !t -> !t
  return %o : !t
}
