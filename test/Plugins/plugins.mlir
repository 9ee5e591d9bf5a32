// The stock mlir-opt from the LLVM packages loads attn as plugins: the dialect
// plugin parses and prints attn IR, the pass plugin runs attn's passes on it.

// RUN: host-mlir-opt %s --load-dialect-plugin=%attn_libs/AttnDialectPlugin%shlibext \
// RUN:   | FileCheck %s --check-prefix=ROUNDTRIP
// RUN: host-mlir-opt %s --load-dialect-plugin=%attn_libs/AttnDialectPlugin%shlibext \
// RUN:   --load-pass-plugin=%attn_libs/AttnPassPlugin%shlibext \
// RUN:   --pass-pipeline="builtin.module(func.func(attn-materialize-defaults))" \
// RUN:   | FileCheck %s --check-prefix=PASS
// Without the dialect plugin the stock tool does not know attn.
// RUN: not host-mlir-opt %s 2>&1 | FileCheck %s --check-prefix=NOPLUGIN

// ROUNDTRIP-LABEL: func.func @linear
// ROUNDTRIP: attn.term kernel elu1 (%{{.*}}, %{{.*}}, %{{.*}}) mask causal order kv_first chunk 64 :
// ROUNDTRIP: attn.combine %{{.*}} gate(%{{.*}}) : tensor<1x2x128x16xf32>
// PASS-LABEL: func.func @linear
// PASS: attn.term kernel elu1 (%{{.*}}, %{{.*}}, %{{.*}}) mask causal normalizer rows eps 9.9999999999999995E-7 order kv_first chunk 64 :
// NOPLUGIN: Dialect `attn' not found for custom op 'attn.term'
func.func @linear(%q: tensor<1x2x128x16xf32>, %k: tensor<1x2x128x16xf32>,
                  %v: tensor<1x2x128x16xf32>, %g: tensor<1x2x128x16xf32>)
    -> tensor<1x2x128x16xf32> {
  %t = attn.term kernel elu1 (%q, %k, %v) mask causal order kv_first chunk 64
      : tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>
      -> tensor<1x2x128x16xf32>
  %o = attn.combine %t gate(%g) : tensor<1x2x128x16xf32>
  return %o : tensor<1x2x128x16xf32>
}
