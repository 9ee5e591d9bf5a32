// Tests of attn-select-order (docs/CostModel.md). The crossovers below are
// those of the cost model for B = 1, H = 8, D = E = 64 (the examples' shape),
// as `attnc report` and the dynamic-N cases of this file print them:
//
//   term (B=1, H=8, D=E=64)     cpu: plain  causal   nvptx: plain  causal
//   kernel elu1, relu                 49     135            263     488
//   kernel favor_plus, m = 256        75     202            192     457
//   kernel cosformer (width 2D)       63     173
//   kernel identity, prior_blocks(256), H = 1, D = 128, E = 256: 492 (cpu)
//
// Each product-form term is tried one below its crossover (qk_first, with the
// key tile 64 as chunk) and at it (kv_first; causal kv-first also gets its
// best state chunk: 32 for favor_plus, 16 for the others). Sections, cut by
// split-file:
//   select.mlir  every kind of term, with the default target (CPU), nvptx, a
//                target file, force=qk_first and chunk=32; its remarks are
//                verified with -verify-diagnostics.
//   kernels.mlir kernel terms only, for force=kv_first (a softmax term would
//                make it an error: attn-select-order-errors.mlir).

// RUN: split-file --leading-lines %s %t
// RUN: attn-opt %t/select.mlir --attn-select-order 2>/dev/null \
// RUN:   | FileCheck %s --check-prefixes=LBL,CPU
// The pass only fills auto clauses, so running it again changes nothing.
// RUN: attn-opt %t/select.mlir --attn-select-order 2>/dev/null \
// RUN:   | attn-opt --attn-select-order 2>/dev/null \
// RUN:   | FileCheck %s --check-prefixes=LBL,CPU
// RUN: attn-opt %t/select.mlir --attn-select-order -verify-diagnostics -o /dev/null
// RUN: attn-opt %t/select.mlir "--attn-select-order=target=nvptx" 2>/dev/null \
// RUN:   | FileCheck %s --check-prefixes=LBL,NV
// RUN: attn-opt %t/select.mlir "--attn-select-order=force=qk_first" 2>/dev/null \
// RUN:   | FileCheck %s --check-prefixes=LBL,FQK
// RUN: attn-opt %t/select.mlir "--attn-select-order=chunk=32" 2>/dev/null \
// RUN:   | FileCheck %s --check-prefixes=LBL,C32
// A target file that slows the kv-first contractions down (kv_efficiency 0.2
// instead of 0.7) moves the crossovers out: elu1 163, causal 400 (chunk 32).
// RUN: echo "base = cpu  # start from the CPU target" > %t.target
// RUN: echo "kv_efficiency = 0.2" >> %t.target
// RUN: attn-opt %t/select.mlir "--attn-select-order=target=%t.target" 2>/dev/null \
// RUN:   | FileCheck %s --check-prefixes=LBL,FILE
// The same as a JSON object.
// RUN: echo '{"base": "cpu", "kv_efficiency": 0.2}' > %t.json
// RUN: attn-opt %t/select.mlir "--attn-select-order=target=%t.json" 2>/dev/null \
// RUN:   | FileCheck %s --check-prefixes=LBL,FILE
// RUN: attn-opt %t/kernels.mlir "--attn-select-order=force=kv_first" \
// RUN:   | FileCheck %s --check-prefix=FKV
// RUN: attn-opt %t/kernels.mlir "--attn-select-order=force=kv_first chunk=128" \
// RUN:   | FileCheck %s --check-prefix=FKV128
// A chunk beyond kMaxChunk (1024), from the term or the pass option, is
// clamped with a remark: compile time and tile memory do not grow with it.
// RUN: attn-opt %t/clamp.mlir --attn-select-order --verify-diagnostics \
// RUN:   | FileCheck %s --check-prefix=CLAMP
// RUN: attn-opt %t/kernels.mlir "--attn-select-order=force=kv_first chunk=9223372036854775807" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CLAMP-OPTION
// CLAMP-OPTION: remark: attn-select-order: chunk 9223372036854775807 is beyond the largest chunk, 1024; using 1024
// CLAMP-OPTION: attn.term kernel relu (%{{.*}}) mask causal order kv_first chunk 1024
// Under a causal mask N = M (C6): a static M gives N, so the term gets the
// order of its static form and no run-time crossover (the crossover search
// ran for half a minute on M = 7: found by attn-mlir-fuzzer).
// RUN: attn-opt %t/causal.mlir --attn-select-order --verify-diagnostics \
// RUN:   | FileCheck %s --check-prefix=CAUSAL
// RUN: attn-opt %t/causal.mlir --attn-select-order=target=nvptx \
// RUN:   --verify-diagnostics | FileCheck %s --check-prefix=CAUSAL

//--- select.mlir

// kernel elu1: kv-first wins from N = 49 on the CPU, 263 on nvptx.
// LBL-LABEL: func.func @elu1_below(
// CPU:  attn.term kernel elu1 (%{{.*}}) order qk_first chunk 64 : tensor<1x8x48x64xf32>
// FQK:  attn.term kernel elu1 (%{{.*}}) order qk_first chunk 64 : tensor<1x8x48x64xf32>
// C32:  attn.term kernel elu1 (%{{.*}}) order qk_first chunk 32 : tensor<1x8x48x64xf32>
// FILE: attn.term kernel elu1 (%{{.*}}) order qk_first chunk 64 : tensor<1x8x48x64xf32>
// NV:   attn.term kernel elu1 (%{{.*}}) order qk_first chunk 64 : tensor<1x8x48x64xf32>
func.func @elu1_below(%q: tensor<1x8x48x64xf32>, %k: tensor<1x8x48x64xf32>, %v: tensor<1x8x48x64xf32>) -> tensor<1x8x48x64xf32> {
  %0 = attn.term kernel elu1 (%q, %k, %v)
         : tensor<1x8x48x64xf32>, tensor<1x8x48x64xf32>, tensor<1x8x48x64xf32> -> tensor<1x8x48x64xf32>
  return %0 : tensor<1x8x48x64xf32>
}

// LBL-LABEL: func.func @elu1_above(
// CPU:  attn.term kernel elu1 (%{{.*}}) order kv_first : tensor<1x8x49x64xf32>
// FQK:  attn.term kernel elu1 (%{{.*}}) order qk_first chunk 64 : tensor<1x8x49x64xf32>
// C32:  attn.term kernel elu1 (%{{.*}}) order kv_first chunk 32 : tensor<1x8x49x64xf32>
// FILE: attn.term kernel elu1 (%{{.*}}) order qk_first chunk 64 : tensor<1x8x49x64xf32>
// NV:   attn.term kernel elu1 (%{{.*}}) order qk_first chunk 64 : tensor<1x8x49x64xf32>
func.func @elu1_above(%q: tensor<1x8x49x64xf32>, %k: tensor<1x8x49x64xf32>, %v: tensor<1x8x49x64xf32>) -> tensor<1x8x49x64xf32> {
  %0 = attn.term kernel elu1 (%q, %k, %v)
         : tensor<1x8x49x64xf32>, tensor<1x8x49x64xf32>, tensor<1x8x49x64xf32> -> tensor<1x8x49x64xf32>
  return %0 : tensor<1x8x49x64xf32>
}

// kernel relu: kv-first wins from N = 49 on the CPU, 263 on nvptx.
// LBL-LABEL: func.func @relu_below(
// CPU:  attn.term kernel relu (%{{.*}}) order qk_first chunk 64 : tensor<1x8x48x64xf32>
// FQK:  attn.term kernel relu (%{{.*}}) order qk_first chunk 64 : tensor<1x8x48x64xf32>
// C32:  attn.term kernel relu (%{{.*}}) order qk_first chunk 32 : tensor<1x8x48x64xf32>
// FILE: attn.term kernel relu (%{{.*}}) order qk_first chunk 64 : tensor<1x8x48x64xf32>
// NV:   attn.term kernel relu (%{{.*}}) order qk_first chunk 64 : tensor<1x8x48x64xf32>
func.func @relu_below(%q: tensor<1x8x48x64xf32>, %k: tensor<1x8x48x64xf32>, %v: tensor<1x8x48x64xf32>) -> tensor<1x8x48x64xf32> {
  %0 = attn.term kernel relu (%q, %k, %v)
         : tensor<1x8x48x64xf32>, tensor<1x8x48x64xf32>, tensor<1x8x48x64xf32> -> tensor<1x8x48x64xf32>
  return %0 : tensor<1x8x48x64xf32>
}

// LBL-LABEL: func.func @relu_above(
// CPU:  attn.term kernel relu (%{{.*}}) order kv_first : tensor<1x8x49x64xf32>
// FQK:  attn.term kernel relu (%{{.*}}) order qk_first chunk 64 : tensor<1x8x49x64xf32>
// C32:  attn.term kernel relu (%{{.*}}) order kv_first chunk 32 : tensor<1x8x49x64xf32>
// FILE: attn.term kernel relu (%{{.*}}) order qk_first chunk 64 : tensor<1x8x49x64xf32>
// NV:   attn.term kernel relu (%{{.*}}) order qk_first chunk 64 : tensor<1x8x49x64xf32>
func.func @relu_above(%q: tensor<1x8x49x64xf32>, %k: tensor<1x8x49x64xf32>, %v: tensor<1x8x49x64xf32>) -> tensor<1x8x49x64xf32> {
  %0 = attn.term kernel relu (%q, %k, %v)
         : tensor<1x8x49x64xf32>, tensor<1x8x49x64xf32>, tensor<1x8x49x64xf32> -> tensor<1x8x49x64xf32>
  return %0 : tensor<1x8x49x64xf32>
}

// kernel favor_plus: kv-first wins from N = 75 on the CPU, 192 on nvptx.
// LBL-LABEL: func.func @favor_below(
// CPU:  attn.term kernel favor_plus (%{{.*}}) omega(%{{.*}} : tensor<256x64xf32>) order qk_first chunk 64 : tensor<1x8x74x64xf32>
// FQK:  attn.term kernel favor_plus (%{{.*}}) omega(%{{.*}} : tensor<256x64xf32>) order qk_first chunk 64 : tensor<1x8x74x64xf32>
// C32:  attn.term kernel favor_plus (%{{.*}}) omega(%{{.*}} : tensor<256x64xf32>) order qk_first chunk 32 : tensor<1x8x74x64xf32>
// FILE: attn.term kernel favor_plus (%{{.*}}) omega(%{{.*}} : tensor<256x64xf32>) order qk_first chunk 64 : tensor<1x8x74x64xf32>
// NV:   attn.term kernel favor_plus (%{{.*}}) omega(%{{.*}} : tensor<256x64xf32>) order qk_first chunk 64 : tensor<1x8x74x64xf32>
func.func @favor_below(%q: tensor<1x8x74x64xf32>, %k: tensor<1x8x74x64xf32>, %v: tensor<1x8x74x64xf32>, %w: tensor<256x64xf32>) -> tensor<1x8x74x64xf32> {
  %0 = attn.term kernel favor_plus (%q, %k, %v) omega(%w : tensor<256x64xf32>)
         : tensor<1x8x74x64xf32>, tensor<1x8x74x64xf32>, tensor<1x8x74x64xf32> -> tensor<1x8x74x64xf32>
  return %0 : tensor<1x8x74x64xf32>
}

// LBL-LABEL: func.func @favor_above(
// CPU:  attn.term kernel favor_plus (%{{.*}}) omega(%{{.*}} : tensor<256x64xf32>) order kv_first : tensor<1x8x75x64xf32>
// FQK:  attn.term kernel favor_plus (%{{.*}}) omega(%{{.*}} : tensor<256x64xf32>) order qk_first chunk 64 : tensor<1x8x75x64xf32>
// C32:  attn.term kernel favor_plus (%{{.*}}) omega(%{{.*}} : tensor<256x64xf32>) order kv_first chunk 32 : tensor<1x8x75x64xf32>
// FILE: attn.term kernel favor_plus (%{{.*}}) omega(%{{.*}} : tensor<256x64xf32>) order qk_first chunk 64 : tensor<1x8x75x64xf32>
// NV:   attn.term kernel favor_plus (%{{.*}}) omega(%{{.*}} : tensor<256x64xf32>) order qk_first chunk 64 : tensor<1x8x75x64xf32>
func.func @favor_above(%q: tensor<1x8x75x64xf32>, %k: tensor<1x8x75x64xf32>, %v: tensor<1x8x75x64xf32>, %w: tensor<256x64xf32>) -> tensor<1x8x75x64xf32> {
  %0 = attn.term kernel favor_plus (%q, %k, %v) omega(%w : tensor<256x64xf32>)
         : tensor<1x8x75x64xf32>, tensor<1x8x75x64xf32>, tensor<1x8x75x64xf32> -> tensor<1x8x75x64xf32>
  return %0 : tensor<1x8x75x64xf32>
}

// kernel cosformer: kv-first wins from N = 63 on the CPU.
// LBL-LABEL: func.func @cosformer_below(
// CPU:  attn.term kernel cosformer (%{{.*}}) order qk_first chunk 64 : tensor<1x8x62x64xf32>
// FQK:  attn.term kernel cosformer (%{{.*}}) order qk_first chunk 64 : tensor<1x8x62x64xf32>
// C32:  attn.term kernel cosformer (%{{.*}}) order qk_first chunk 32 : tensor<1x8x62x64xf32>
// FILE: attn.term kernel cosformer (%{{.*}}) order qk_first chunk 64 : tensor<1x8x62x64xf32>
func.func @cosformer_below(%q: tensor<1x8x62x64xf32>, %k: tensor<1x8x62x64xf32>, %v: tensor<1x8x62x64xf32>) -> tensor<1x8x62x64xf32> {
  %0 = attn.term kernel cosformer (%q, %k, %v)
         : tensor<1x8x62x64xf32>, tensor<1x8x62x64xf32>, tensor<1x8x62x64xf32> -> tensor<1x8x62x64xf32>
  return %0 : tensor<1x8x62x64xf32>
}

// LBL-LABEL: func.func @cosformer_above(
// CPU:  attn.term kernel cosformer (%{{.*}}) order kv_first : tensor<1x8x63x64xf32>
// FQK:  attn.term kernel cosformer (%{{.*}}) order qk_first chunk 64 : tensor<1x8x63x64xf32>
// C32:  attn.term kernel cosformer (%{{.*}}) order kv_first chunk 32 : tensor<1x8x63x64xf32>
// FILE: attn.term kernel cosformer (%{{.*}}) order qk_first chunk 64 : tensor<1x8x63x64xf32>
func.func @cosformer_above(%q: tensor<1x8x63x64xf32>, %k: tensor<1x8x63x64xf32>, %v: tensor<1x8x63x64xf32>) -> tensor<1x8x63x64xf32> {
  %0 = attn.term kernel cosformer (%q, %k, %v)
         : tensor<1x8x63x64xf32>, tensor<1x8x63x64xf32>, tensor<1x8x63x64xf32> -> tensor<1x8x63x64xf32>
  return %0 : tensor<1x8x63x64xf32>
}

// kernel elu1, causal: kv-first (chunked) wins from N = 135 on the CPU.
// LBL-LABEL: func.func @elu1_causal_below(
// CPU:  attn.term kernel elu1 (%{{.*}}) mask causal order qk_first chunk 64 : tensor<1x8x134x64xf32>
// C32:  attn.term kernel elu1 (%{{.*}}) mask causal order qk_first chunk 32 : tensor<1x8x134x64xf32>
func.func @elu1_causal_below(%q: tensor<1x8x134x64xf32>, %k: tensor<1x8x134x64xf32>, %v: tensor<1x8x134x64xf32>) -> tensor<1x8x134x64xf32> {
  %0 = attn.term kernel elu1 (%q, %k, %v) mask causal
         : tensor<1x8x134x64xf32>, tensor<1x8x134x64xf32>, tensor<1x8x134x64xf32> -> tensor<1x8x134x64xf32>
  return %0 : tensor<1x8x134x64xf32>
}

// LBL-LABEL: func.func @elu1_causal_above(
// CPU:  attn.term kernel elu1 (%{{.*}}) mask causal order kv_first chunk 16 : tensor<1x8x135x64xf32>
// NV:   attn.term kernel elu1 (%{{.*}}) mask causal order qk_first chunk 64 : tensor<1x8x135x64xf32>
// FQK:  attn.term kernel elu1 (%{{.*}}) mask causal order qk_first chunk 64 : tensor<1x8x135x64xf32>
// C32:  attn.term kernel elu1 (%{{.*}}) mask causal order kv_first chunk 32 : tensor<1x8x135x64xf32>
func.func @elu1_causal_above(%q: tensor<1x8x135x64xf32>, %k: tensor<1x8x135x64xf32>, %v: tensor<1x8x135x64xf32>) -> tensor<1x8x135x64xf32> {
  %0 = attn.term kernel elu1 (%q, %k, %v) mask causal
         : tensor<1x8x135x64xf32>, tensor<1x8x135x64xf32>, tensor<1x8x135x64xf32> -> tensor<1x8x135x64xf32>
  return %0 : tensor<1x8x135x64xf32>
}

// kernel relu, causal: kv-first (chunked) wins from N = 135 on the CPU.
// LBL-LABEL: func.func @relu_causal_below(
// CPU:  attn.term kernel relu (%{{.*}}) mask causal order qk_first chunk 64 : tensor<1x8x134x64xf32>
// C32:  attn.term kernel relu (%{{.*}}) mask causal order qk_first chunk 32 : tensor<1x8x134x64xf32>
func.func @relu_causal_below(%q: tensor<1x8x134x64xf32>, %k: tensor<1x8x134x64xf32>, %v: tensor<1x8x134x64xf32>) -> tensor<1x8x134x64xf32> {
  %0 = attn.term kernel relu (%q, %k, %v) mask causal
         : tensor<1x8x134x64xf32>, tensor<1x8x134x64xf32>, tensor<1x8x134x64xf32> -> tensor<1x8x134x64xf32>
  return %0 : tensor<1x8x134x64xf32>
}

// LBL-LABEL: func.func @relu_causal_above(
// CPU:  attn.term kernel relu (%{{.*}}) mask causal order kv_first chunk 16 : tensor<1x8x135x64xf32>
// NV:   attn.term kernel relu (%{{.*}}) mask causal order qk_first chunk 64 : tensor<1x8x135x64xf32>
// FQK:  attn.term kernel relu (%{{.*}}) mask causal order qk_first chunk 64 : tensor<1x8x135x64xf32>
// C32:  attn.term kernel relu (%{{.*}}) mask causal order kv_first chunk 32 : tensor<1x8x135x64xf32>
func.func @relu_causal_above(%q: tensor<1x8x135x64xf32>, %k: tensor<1x8x135x64xf32>, %v: tensor<1x8x135x64xf32>) -> tensor<1x8x135x64xf32> {
  %0 = attn.term kernel relu (%q, %k, %v) mask causal
         : tensor<1x8x135x64xf32>, tensor<1x8x135x64xf32>, tensor<1x8x135x64xf32> -> tensor<1x8x135x64xf32>
  return %0 : tensor<1x8x135x64xf32>
}

// kernel favor_plus, causal: kv-first (chunked) wins from N = 202 on the CPU.
// LBL-LABEL: func.func @favor_causal_below(
// CPU:  attn.term kernel favor_plus (%{{.*}}) omega(%{{.*}} : tensor<256x64xf32>) mask causal order qk_first chunk 64 : tensor<1x8x201x64xf32>
// C32:  attn.term kernel favor_plus (%{{.*}}) omega(%{{.*}} : tensor<256x64xf32>) mask causal order qk_first chunk 32 : tensor<1x8x201x64xf32>
func.func @favor_causal_below(%q: tensor<1x8x201x64xf32>, %k: tensor<1x8x201x64xf32>, %v: tensor<1x8x201x64xf32>, %w: tensor<256x64xf32>) -> tensor<1x8x201x64xf32> {
  %0 = attn.term kernel favor_plus (%q, %k, %v) omega(%w : tensor<256x64xf32>) mask causal
         : tensor<1x8x201x64xf32>, tensor<1x8x201x64xf32>, tensor<1x8x201x64xf32> -> tensor<1x8x201x64xf32>
  return %0 : tensor<1x8x201x64xf32>
}

// LBL-LABEL: func.func @favor_causal_above(
// CPU:  attn.term kernel favor_plus (%{{.*}}) omega(%{{.*}} : tensor<256x64xf32>) mask causal order kv_first chunk 32 : tensor<1x8x202x64xf32>
// NV:   attn.term kernel favor_plus (%{{.*}}) omega(%{{.*}} : tensor<256x64xf32>) mask causal order qk_first chunk 64 : tensor<1x8x202x64xf32>
// FQK:  attn.term kernel favor_plus (%{{.*}}) omega(%{{.*}} : tensor<256x64xf32>) mask causal order qk_first chunk 64 : tensor<1x8x202x64xf32>
// C32:  attn.term kernel favor_plus (%{{.*}}) omega(%{{.*}} : tensor<256x64xf32>) mask causal order kv_first chunk 32 : tensor<1x8x202x64xf32>
func.func @favor_causal_above(%q: tensor<1x8x202x64xf32>, %k: tensor<1x8x202x64xf32>, %v: tensor<1x8x202x64xf32>, %w: tensor<256x64xf32>) -> tensor<1x8x202x64xf32> {
  %0 = attn.term kernel favor_plus (%q, %k, %v) omega(%w : tensor<256x64xf32>) mask causal
         : tensor<1x8x202x64xf32>, tensor<1x8x202x64xf32>, tensor<1x8x202x64xf32> -> tensor<1x8x202x64xf32>
  return %0 : tensor<1x8x202x64xf32>
}

// kernel cosformer, causal: kv-first (chunked) wins from N = 173 on the CPU.
// LBL-LABEL: func.func @cosformer_causal_below(
// CPU:  attn.term kernel cosformer (%{{.*}}) mask causal order qk_first chunk 64 : tensor<1x8x172x64xf32>
// C32:  attn.term kernel cosformer (%{{.*}}) mask causal order qk_first chunk 32 : tensor<1x8x172x64xf32>
func.func @cosformer_causal_below(%q: tensor<1x8x172x64xf32>, %k: tensor<1x8x172x64xf32>, %v: tensor<1x8x172x64xf32>) -> tensor<1x8x172x64xf32> {
  %0 = attn.term kernel cosformer (%q, %k, %v) mask causal
         : tensor<1x8x172x64xf32>, tensor<1x8x172x64xf32>, tensor<1x8x172x64xf32> -> tensor<1x8x172x64xf32>
  return %0 : tensor<1x8x172x64xf32>
}

// LBL-LABEL: func.func @cosformer_causal_above(
// CPU:  attn.term kernel cosformer (%{{.*}}) mask causal order kv_first chunk 16 : tensor<1x8x173x64xf32>
// NV:   attn.term kernel cosformer (%{{.*}}) mask causal order qk_first chunk 64 : tensor<1x8x173x64xf32>
// FQK:  attn.term kernel cosformer (%{{.*}}) mask causal order qk_first chunk 64 : tensor<1x8x173x64xf32>
// C32:  attn.term kernel cosformer (%{{.*}}) mask causal order kv_first chunk 32 : tensor<1x8x173x64xf32>
func.func @cosformer_causal_above(%q: tensor<1x8x173x64xf32>, %k: tensor<1x8x173x64xf32>, %v: tensor<1x8x173x64xf32>) -> tensor<1x8x173x64xf32> {
  %0 = attn.term kernel cosformer (%q, %k, %v) mask causal
         : tensor<1x8x173x64xf32>, tensor<1x8x173x64xf32>, tensor<1x8x173x64xf32> -> tensor<1x8x173x64xf32>
  return %0 : tensor<1x8x173x64xf32>
}

// FLASH's global term: kernel identity over prior blocks of 256, one head,
// D = 128, E = 256; kv-first (a running state) wins from N = 492. The pass
// records no chunk for it.
// LBL-LABEL: func.func @prior_blocks_below(
// CPU:  attn.term kernel identity (%{{.*}}) mask prior_blocks(256) normalizer length order qk_first chunk 64 : tensor<1x1x491x128xf32>
func.func @prior_blocks_below(%q: tensor<1x1x491x128xf32>, %k: tensor<1x1x491x128xf32>, %v: tensor<1x1x491x256xf32>) -> tensor<1x1x491x256xf32> {
  %0 = attn.term kernel identity (%q, %k, %v) mask prior_blocks(256) normalizer length
         : tensor<1x1x491x128xf32>, tensor<1x1x491x128xf32>, tensor<1x1x491x256xf32> -> tensor<1x1x491x256xf32>
  return %0 : tensor<1x1x491x256xf32>
}

// LBL-LABEL: func.func @prior_blocks_above(
// CPU:  attn.term kernel identity (%{{.*}}) mask prior_blocks(256) normalizer length order kv_first chunk 256 : tensor<1x1x492x128xf32>
func.func @prior_blocks_above(%q: tensor<1x1x492x128xf32>, %k: tensor<1x1x492x128xf32>, %v: tensor<1x1x492x256xf32>) -> tensor<1x1x492x256xf32> {
  %0 = attn.term kernel identity (%q, %k, %v) mask prior_blocks(256) normalizer length
         : tensor<1x1x492x128xf32>, tensor<1x1x492x128xf32>, tensor<1x1x492x256xf32> -> tensor<1x1x492x256xf32>
  return %0 : tensor<1x1x492x256xf32>
}

// softmax and relu2 have no product form: qk_first at any length and under
// any option (force=kv_first is an error, see attn-select-order-errors.mlir).
// LBL-LABEL: func.func @softmax_long(
// CPU: attn.term softmax (%{{.*}}) order qk_first chunk 64 : tensor<1x8x65536x64xf32>
// NV: attn.term softmax (%{{.*}}) order qk_first chunk 64 : tensor<1x8x65536x64xf32>
// FQK: attn.term softmax (%{{.*}}) order qk_first chunk 64 : tensor<1x8x65536x64xf32>
// C32: attn.term softmax (%{{.*}}) order qk_first chunk 32 : tensor<1x8x65536x64xf32>
// FILE: attn.term softmax (%{{.*}}) order qk_first chunk 64 : tensor<1x8x65536x64xf32>
func.func @softmax_long(%q: tensor<1x8x65536x64xf32>, %k: tensor<1x8x65536x64xf32>, %v: tensor<1x8x65536x64xf32>) -> tensor<1x8x65536x64xf32> {
  %0 = attn.term softmax (%q, %k, %v)
         : tensor<1x8x65536x64xf32>, tensor<1x8x65536x64xf32>, tensor<1x8x65536x64xf32> -> tensor<1x8x65536x64xf32>
  return %0 : tensor<1x8x65536x64xf32>
}

// A dynamic N gets no crossover.
// LBL-LABEL: func.func @softmax_causal_dynamic(
// CPU: attn.term softmax (%{{.*}}) mask causal order qk_first chunk 64 : tensor<1x8x?x64xf32>
func.func @softmax_causal_dynamic(%q: tensor<1x8x?x64xf32>, %k: tensor<1x8x?x64xf32>, %v: tensor<1x8x?x64xf32>) -> tensor<1x8x?x64xf32> {
  // expected-remark@+1 {{attn-select-order: N is dynamic; assuming 4096; M is dynamic; assuming 4096}}
  %0 = attn.term softmax (%q, %k, %v) mask causal
         : tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32> -> tensor<1x8x?x64xf32>
  return %0 : tensor<1x8x?x64xf32>
}

// LBL-LABEL: func.func @relu2_block_causal(
// CPU: attn.term relu2 (%{{.*}}) mask block_causal(256) order qk_first chunk 64 : tensor<1x1x65536x128xf32>
// NV:  attn.term relu2 (%{{.*}}) mask block_causal(256) order qk_first chunk 64 : tensor<1x1x65536x128xf32>
func.func @relu2_block_causal(%q: tensor<1x1x65536x128xf32>, %k: tensor<1x1x65536x128xf32>, %v: tensor<1x1x65536x256xf32>) -> tensor<1x1x65536x256xf32> {
  %0 = attn.term relu2 (%q, %k, %v) mask block_causal(256)
         : tensor<1x1x65536x128xf32>, tensor<1x1x65536x128xf32>, tensor<1x1x65536x256xf32> -> tensor<1x1x65536x256xf32>
  return %0 : tensor<1x1x65536x256xf32>
}

// A term whose order is fixed keeps it, against the cost model and against
// force; only an auto chunk is filled (the key tile for qk_first, the best
// state chunk for causal kv_first). A fixed chunk is kept too.
// LBL-LABEL: func.func @fixed_qk_first(
// CPU: attn.term kernel elu1 (%{{.*}}) mask causal order qk_first chunk 64 : tensor<1x8x8192x64xf32>
// NV: attn.term kernel elu1 (%{{.*}}) mask causal order qk_first chunk 64 : tensor<1x8x8192x64xf32>
// FQK: attn.term kernel elu1 (%{{.*}}) mask causal order qk_first chunk 64 : tensor<1x8x8192x64xf32>
// C32: attn.term kernel elu1 (%{{.*}}) mask causal order qk_first chunk 32 : tensor<1x8x8192x64xf32>
func.func @fixed_qk_first(%q: tensor<1x8x8192x64xf32>, %k: tensor<1x8x8192x64xf32>, %v: tensor<1x8x8192x64xf32>) -> tensor<1x8x8192x64xf32> {
  %0 = attn.term kernel elu1 (%q, %k, %v) mask causal order qk_first
         : tensor<1x8x8192x64xf32>, tensor<1x8x8192x64xf32>, tensor<1x8x8192x64xf32> -> tensor<1x8x8192x64xf32>
  return %0 : tensor<1x8x8192x64xf32>
}

// LBL-LABEL: func.func @fixed_kv_first(
// CPU: attn.term kernel elu1 (%{{.*}}) mask causal order kv_first chunk 16 : tensor<1x8x64x64xf32>
// NV: attn.term kernel elu1 (%{{.*}}) mask causal order kv_first chunk 64 : tensor<1x8x64x64xf32>
// FQK: attn.term kernel elu1 (%{{.*}}) mask causal order kv_first chunk 16 : tensor<1x8x64x64xf32>
// C32: attn.term kernel elu1 (%{{.*}}) mask causal order kv_first chunk 32 : tensor<1x8x64x64xf32>
func.func @fixed_kv_first(%q: tensor<1x8x64x64xf32>, %k: tensor<1x8x64x64xf32>, %v: tensor<1x8x64x64xf32>) -> tensor<1x8x64x64xf32> {
  %0 = attn.term kernel elu1 (%q, %k, %v) mask causal order kv_first
         : tensor<1x8x64x64xf32>, tensor<1x8x64x64xf32>, tensor<1x8x64x64xf32> -> tensor<1x8x64x64xf32>
  return %0 : tensor<1x8x64x64xf32>
}

// Below its crossover, at N = 32, the best state chunk is 16 too (at most N).
// LBL-LABEL: func.func @fixed_kv_first_short(
// CPU: attn.term kernel elu1 (%{{.*}}) mask causal order kv_first chunk 16 : tensor<1x8x32x64xf32>
func.func @fixed_kv_first_short(%q: tensor<1x8x32x64xf32>, %k: tensor<1x8x32x64xf32>, %v: tensor<1x8x32x64xf32>) -> tensor<1x8x32x64xf32> {
  %0 = attn.term kernel elu1 (%q, %k, %v) mask causal order kv_first
         : tensor<1x8x32x64xf32>, tensor<1x8x32x64xf32>, tensor<1x8x32x64xf32> -> tensor<1x8x32x64xf32>
  return %0 : tensor<1x8x32x64xf32>
}

// LBL-LABEL: func.func @fixed_chunk(
// CPU: attn.term kernel elu1 (%{{.*}}) mask causal order kv_first chunk 128 : tensor<1x8x8192x64xf32>
// NV: attn.term kernel elu1 (%{{.*}}) mask causal order kv_first chunk 128 : tensor<1x8x8192x64xf32>
// FQK: attn.term kernel elu1 (%{{.*}}) mask causal order qk_first chunk 128 : tensor<1x8x8192x64xf32>
// C32: attn.term kernel elu1 (%{{.*}}) mask causal order kv_first chunk 128 : tensor<1x8x8192x64xf32>
func.func @fixed_chunk(%q: tensor<1x8x8192x64xf32>, %k: tensor<1x8x8192x64xf32>, %v: tensor<1x8x8192x64xf32>) -> tensor<1x8x8192x64xf32> {
  %0 = attn.term kernel elu1 (%q, %k, %v) mask causal chunk 128
         : tensor<1x8x8192x64xf32>, tensor<1x8x8192x64xf32>, tensor<1x8x8192x64xf32> -> tensor<1x8x8192x64xf32>
  return %0 : tensor<1x8x8192x64xf32>
}

// A dynamic N keeps `order auto` and records where kv-first starts to win;
// a causal term also gets the best state chunk at the assumed N = 4096.
// LBL-LABEL: func.func @elu1_dynamic(
// CPU:  attn.term kernel elu1 (%{{.*}}) crossover 49 : tensor<1x8x?x64xf32>
// NV:   attn.term kernel elu1 (%{{.*}}) crossover 263 : tensor<1x8x?x64xf32>
// FILE: attn.term kernel elu1 (%{{.*}}) crossover 163 : tensor<1x8x?x64xf32>
// FQK:  attn.term kernel elu1 (%{{.*}}) order qk_first chunk 64 : tensor<1x8x?x64xf32>
// C32:  attn.term kernel elu1 (%{{.*}}) chunk 32 crossover 49 : tensor<1x8x?x64xf32>
func.func @elu1_dynamic(%q: tensor<1x8x?x64xf32>, %k: tensor<1x8x?x64xf32>, %v: tensor<1x8x?x64xf32>) -> tensor<1x8x?x64xf32> {
  // expected-remark@+1 {{attn-select-order: N is dynamic; assuming 4096; M is dynamic; assuming 4096}}
  %0 = attn.term kernel elu1 (%q, %k, %v)
         : tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32> -> tensor<1x8x?x64xf32>
  return %0 : tensor<1x8x?x64xf32>
}

// LBL-LABEL: func.func @elu1_causal_dynamic(
// CPU:  attn.term kernel elu1 (%{{.*}}) mask causal chunk 16 crossover 135 : tensor<1x8x?x64xf32>
// NV:   attn.term kernel elu1 (%{{.*}}) mask causal chunk 64 crossover 488 : tensor<1x8x?x64xf32>
// FILE: attn.term kernel elu1 (%{{.*}}) mask causal chunk 32 crossover 400 : tensor<1x8x?x64xf32>
// C32:  attn.term kernel elu1 (%{{.*}}) mask causal chunk 32 crossover 135 : tensor<1x8x?x64xf32>
func.func @elu1_causal_dynamic(%q: tensor<1x8x?x64xf32>, %k: tensor<1x8x?x64xf32>, %v: tensor<1x8x?x64xf32>) -> tensor<1x8x?x64xf32> {
  // expected-remark@+1 {{attn-select-order: N is dynamic; assuming 4096; M is dynamic; assuming 4096}}
  %0 = attn.term kernel elu1 (%q, %k, %v) mask causal
         : tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32> -> tensor<1x8x?x64xf32>
  return %0 : tensor<1x8x?x64xf32>
}

// LBL-LABEL: func.func @favor_dynamic(
// CPU:  attn.term kernel favor_plus (%{{.*}}) omega(%{{.*}} : tensor<256x64xf32>) crossover 75 : tensor<1x8x?x64xf32>
// NV:   attn.term kernel favor_plus (%{{.*}}) omega(%{{.*}} : tensor<256x64xf32>) crossover 192 : tensor<1x8x?x64xf32>
func.func @favor_dynamic(%q: tensor<1x8x?x64xf32>, %k: tensor<1x8x?x64xf32>, %v: tensor<1x8x?x64xf32>, %w: tensor<256x64xf32>) -> tensor<1x8x?x64xf32> {
  // expected-remark@+1 {{attn-select-order: N is dynamic; assuming 4096; M is dynamic; assuming 4096}}
  %0 = attn.term kernel favor_plus (%q, %k, %v) omega(%w : tensor<256x64xf32>)
         : tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32> -> tensor<1x8x?x64xf32>
  return %0 : tensor<1x8x?x64xf32>
}

// N queries over M = 16 fixed keys: per query, qk-first costs
// 16·(2·64 + 2·64 + 1) = 4112 FLOPs and kv-first's query pass alone
// 2·64·64 + 2·64 + 64 = 8384 at a similar efficiency, so kv-first never wins
// and the term is qk_first at every N.
// LBL-LABEL: func.func @few_keys_dynamic(
// CPU: attn.term kernel elu1 (%{{.*}}) order qk_first chunk 64 : tensor<1x8x?x64xf32>
// NV: attn.term kernel elu1 (%{{.*}}) order qk_first chunk 64 : tensor<1x8x?x64xf32>
// FILE: attn.term kernel elu1 (%{{.*}}) order qk_first chunk 64 : tensor<1x8x?x64xf32>
func.func @few_keys_dynamic(%q: tensor<1x8x?x64xf32>, %k: tensor<1x8x16x64xf32>, %v: tensor<1x8x16x64xf32>) -> tensor<1x8x?x64xf32> {
  // expected-remark@+1 {{attn-select-order: N is dynamic; assuming 4096}}
  %0 = attn.term kernel elu1 (%q, %k, %v)
         : tensor<1x8x?x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32> -> tensor<1x8x?x64xf32>
  return %0 : tensor<1x8x?x64xf32>
}

// A dynamic feature size is assumed to be 64, and the remark says so.
// LBL-LABEL: func.func @dynamic_d(
// CPU: attn.term kernel elu1 (%{{.*}}) order kv_first : tensor<1x8x8192x?xf32>
func.func @dynamic_d(%q: tensor<1x8x8192x?xf32>, %k: tensor<1x8x8192x?xf32>, %v: tensor<1x8x8192x64xf32>) -> tensor<1x8x8192x64xf32> {
  // expected-remark@+1 {{attn-select-order: D is dynamic; assuming 64}}
  %0 = attn.term kernel elu1 (%q, %k, %v)
         : tensor<1x8x8192x?xf32>, tensor<1x8x8192x?xf32>, tensor<1x8x8192x64xf32> -> tensor<1x8x8192x64xf32>
  return %0 : tensor<1x8x8192x64xf32>
}

//--- kernels.mlir

// force=kv_first applies to every auto order; a fixed order is kept.
// FKV-LABEL: func.func @force_elu1_short(
// FKV:       attn.term kernel elu1 (%{{.*}}) order kv_first : tensor<1x8x16x64xf32>
// FKV128-LABEL: func.func @force_elu1_short(
// FKV128:       attn.term kernel elu1 (%{{.*}}) order kv_first chunk 128 : tensor<1x8x16x64xf32>
func.func @force_elu1_short(%q: tensor<1x8x16x64xf32>, %k: tensor<1x8x16x64xf32>, %v: tensor<1x8x16x64xf32>) -> tensor<1x8x16x64xf32> {
  %0 = attn.term kernel elu1 (%q, %k, %v)
         : tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32> -> tensor<1x8x16x64xf32>
  return %0 : tensor<1x8x16x64xf32>
}

// FKV-LABEL: func.func @force_favor_short(
// FKV:       attn.term kernel favor_plus (%{{.*}}) omega(%{{.*}} : tensor<256x64xf32>) order kv_first : tensor<1x8x16x64xf32>
// FKV128-LABEL: func.func @force_favor_short(
// FKV128:       attn.term kernel favor_plus (%{{.*}}) omega(%{{.*}} : tensor<256x64xf32>) order kv_first chunk 128 : tensor<1x8x16x64xf32>
func.func @force_favor_short(%q: tensor<1x8x16x64xf32>, %k: tensor<1x8x16x64xf32>, %v: tensor<1x8x16x64xf32>, %w: tensor<256x64xf32>) -> tensor<1x8x16x64xf32> {
  %0 = attn.term kernel favor_plus (%q, %k, %v) omega(%w : tensor<256x64xf32>)
         : tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32> -> tensor<1x8x16x64xf32>
  return %0 : tensor<1x8x16x64xf32>
}

// FKV-LABEL: func.func @force_causal_short(
// FKV:       attn.term kernel cosformer (%{{.*}}) mask causal order kv_first chunk 16 : tensor<1x8x32x64xf32>
// FKV128-LABEL: func.func @force_causal_short(
// FKV128:       attn.term kernel cosformer (%{{.*}}) mask causal order kv_first chunk 128 : tensor<1x8x32x64xf32>
func.func @force_causal_short(%q: tensor<1x8x32x64xf32>, %k: tensor<1x8x32x64xf32>, %v: tensor<1x8x32x64xf32>) -> tensor<1x8x32x64xf32> {
  %0 = attn.term kernel cosformer (%q, %k, %v) mask causal
         : tensor<1x8x32x64xf32>, tensor<1x8x32x64xf32>, tensor<1x8x32x64xf32> -> tensor<1x8x32x64xf32>
  return %0 : tensor<1x8x32x64xf32>
}

// FKV-LABEL: func.func @force_dynamic(
// FKV:       attn.term kernel relu (%{{.*}}) mask causal order kv_first chunk 16 : tensor<1x8x?x64xf32>
// FKV128-LABEL: func.func @force_dynamic(
// FKV128:       attn.term kernel relu (%{{.*}}) mask causal order kv_first chunk 128 : tensor<1x8x?x64xf32>
func.func @force_dynamic(%q: tensor<1x8x?x64xf32>, %k: tensor<1x8x?x64xf32>, %v: tensor<1x8x?x64xf32>) -> tensor<1x8x?x64xf32> {
  %0 = attn.term kernel relu (%q, %k, %v) mask causal
         : tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32> -> tensor<1x8x?x64xf32>
  return %0 : tensor<1x8x?x64xf32>
}

// FKV-LABEL: func.func @force_keeps_fixed(
// FKV:       attn.term kernel elu1 (%{{.*}}) order qk_first chunk 64 : tensor<1x8x8192x64xf32>
// FKV128-LABEL: func.func @force_keeps_fixed(
// FKV128:       attn.term kernel elu1 (%{{.*}}) order qk_first chunk 128 : tensor<1x8x8192x64xf32>
func.func @force_keeps_fixed(%q: tensor<1x8x8192x64xf32>, %k: tensor<1x8x8192x64xf32>, %v: tensor<1x8x8192x64xf32>) -> tensor<1x8x8192x64xf32> {
  %0 = attn.term kernel elu1 (%q, %k, %v) order qk_first
         : tensor<1x8x8192x64xf32>, tensor<1x8x8192x64xf32>, tensor<1x8x8192x64xf32> -> tensor<1x8x8192x64xf32>
  return %0 : tensor<1x8x8192x64xf32>
}

//--- clamp.mlir

// CLAMP-LABEL: func.func @huge_chunk(
// CLAMP:       attn.term softmax (%{{.*}}) mask causal order qk_first chunk 1024
func.func @huge_chunk(%q: tensor<1x8x37x64xf32>, %k: tensor<1x8x37x64xf32>, %v: tensor<1x8x37x64xf32>) -> tensor<1x8x37x64xf32> {
  // expected-remark @below {{attn-select-order: chunk 9223372036854775807 is beyond the largest chunk, 1024; using 1024}}
  %0 = attn.term softmax (%q, %k, %v) mask causal chunk 9223372036854775807
         : tensor<1x8x37x64xf32>, tensor<1x8x37x64xf32>, tensor<1x8x37x64xf32> -> tensor<1x8x37x64xf32>
  return %0 : tensor<1x8x37x64xf32>
}

//--- causal.mlir

// CAUSAL-LABEL: func.func @causal_static_keys(
// CAUSAL:       attn.term kernel relu (%{{.*}}) mask causal order qk_first chunk 64 :
// CAUSAL-NOT:   crossover
func.func @causal_static_keys(%q: tensor<1x8x?x64xf32>, %k: tensor<1x8x7x64xf32>) -> tensor<1x8x?x64xf32> {
  %0 = attn.term kernel relu (%q, %k, %k) mask causal
         : tensor<1x8x?x64xf32>, tensor<1x8x7x64xf32>, tensor<1x8x7x64xf32> -> tensor<1x8x?x64xf32>
  return %0 : tensor<1x8x?x64xf32>
}

// CAUSAL-LABEL: func.func @block_causal_static_keys(
// CAUSAL:       attn.term kernel elu1 (%{{.*}}) mask block_causal(64) order qk_first chunk 64 :
// CAUSAL-NOT:   crossover
func.func @block_causal_static_keys(%q: tensor<1x8x?x64xf32>, %k: tensor<1x8x4096x64xf32>) -> tensor<1x8x?x64xf32> {
  %0 = attn.term kernel elu1 (%q, %k, %k) mask block_causal(64)
         : tensor<1x8x?x64xf32>, tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32> -> tensor<1x8x?x64xf32>
  return %0 : tensor<1x8x?x64xf32>
}
