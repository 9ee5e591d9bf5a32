// RUN: attn-opt %s -split-input-file --attn-mma-attention --canonicalize --cse | FileCheck %s
// RUN: attn-opt %s -split-input-file --attn-mma-attention | grep -c nvvm.mma.sync | FileCheck %s --check-prefix=PRODUCTS
// RUN: attn-opt %s -split-input-file --attn-mma-attention=precision=tf32 --canonicalize --cse | FileCheck %s --check-prefix=TF32

// 64 products per key tile in each kernel: D = 64, 64 keys: (4 + 4) × 8;
// D = 128, 32 keys: 8 × 4 + 2 × 16; D = 256 (a rolled loop over the 16
// steps of Q Kᵀ): 4 + 16 × 2 for each warp's half of O.
// PRODUCTS: 356

// Causal softmax over bf16, B = 1, H = 2, N = M = 100, D = 64, s = 1/8:
//   grid (⌈100/64⌉ = 2, B·H = 2) of 128 threads (4 warps × 16 query rows);
//   K and V tiles 64 × (64 + 8) bf16 in shared memory;
//   Q's A fragments: 4 steps of 16 columns × 4 registers, loaded once;
//   key tiles: ⌈min(max(r + M − N + 1, 0), M) / 64⌉, r = min(64·qt + 63, N − 1);
//   K, V by 16-byte cp.async into two buffers: tile 0 before the loop, tile
//   kt + 1 during tile kt (wait for all groups but the newest, then a
//   barrier);
//     S = Q Kᵀ: 4 steps × 4 ldmatrix.x4 (row) × 2 mma.sync = 32;
//     s = S/8, j ≥ M or j ≥ i + M − N + 1 → −inf;
//     m' = max(m, row max) with shfl.sync bfly 1, 2 per row (g and g + 8);
//     α = exp(m − m') (m' = −inf shifts by 0); P = exp(s − m');
//     O += P V: P rounded to bf16, 4 steps × 4 ldmatrix.x4.trans (col) × 2 mma = 32;
//   l = Σ over the row's 4 lanes (bfly 1, 2); O / l stored for rows < N.
// CHECK-LABEL: func.func @causal_bf16(
// CHECK-DAG:     %[[SCALE:.+]] = arith.constant 1.250000e-01 : f32
// CHECK-DAG:     %[[NEG_INF:.+]] = arith.constant 0xFF800000 : f32
// CHECK-DAG:     %[[C99:.+]] = arith.constant 99 : index
// CHECK:         %[[OUT:.+]] = memref.alloc() : memref<1x2x100x64xf32>
// CHECK:         gpu.launch blocks({{.*}}) in ({{.*}} = %c2, {{.*}} = %c2, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c128, {{.*}} = %c1, {{.*}} = %c1)
// CHECK-SAME:      workgroup(%{{.+}} : memref<2x64x72xbf16, #gpu.address_space<workgroup>>, %{{.+}} : memref<2x64x72xbf16, #gpu.address_space<workgroup>>)
// CHECK-COUNT-16: vector.load %{{.+}} : memref<1x2x100x64xbf16>, vector<2xbf16>
// CHECK:           %[[LAST:.+]] = arith.minsi %{{.+}}, %[[C99]] : index
// CHECK:           %[[TILES:.+]] = arith.ceildivsi %{{.+}}, %c64 : index
// CHECK:           scf.for %{{.+}} = %{{.+}} to %c512 step %c128 {
// CHECK-COUNT-2:     nvvm.cp.async.shared.global %{{.+}}, %{{.+}}, 16, cache = cg, %{{.+}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK:           nvvm.cp.async.commit.group
// CHECK:           scf.for %[[TILE:.+]] = %c0 to %[[TILES]] step %c1 iter_args(
// CHECK:             %[[NEXT:.+]] = arith.addi %[[TILE]], %c1 : index
// CHECK:             %[[MORE:.+]] = arith.cmpi slt, %[[NEXT]], %[[TILES]] : index
// CHECK:             scf.if %[[MORE]] {
// CHECK:               scf.for %{{.+}} = %{{.+}} to %c512 step %c128 {
// CHECK-COUNT-2:         nvvm.cp.async.shared.global
// CHECK:               nvvm.cp.async.commit.group
// CHECK-NEXT:          nvvm.cp.async.wait.group 1
// CHECK-NEXT:        } else {
// CHECK-NEXT:          nvvm.cp.async.wait.group 0
// CHECK-NEXT:        }
// CHECK-NEXT:        gpu.barrier
// CHECK:             nvvm.ldmatrix %{{.+}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, num = 4 : i32
// CHECK-NEXT:        llvm.extractvalue
// CHECK-COUNT-3:     llvm.extractvalue
// CHECK-NEXT:        nvvm.mma.sync A[{{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK-COUNT-15:    nvvm.ldmatrix %{{.+}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>
// CHECK:             arith.mulf %{{.+}}, %[[SCALE]] : f32
// CHECK:             arith.select %{{.+}}, %{{.+}}, %[[NEG_INF]] : f32
// CHECK:             nvvm.shfl.sync  bfly %c-1_i32, %{{.+}}, %c1_i32, %c31_i32 : f32 -> f32
// CHECK-NEXT:        arith.maximumf
// CHECK-NEXT:        nvvm.shfl.sync  bfly %c-1_i32, %{{.+}}, %c2_i32, %c31_i32 : f32 -> f32
// CHECK-NEXT:        arith.maximumf
// CHECK-NEXT:        %[[NEW_MAX:.+]] = arith.maximumf %{{.+}}, %{{.+}} : f32
// CHECK-NEXT:        %[[NONE:.+]] = arith.cmpf oeq, %[[NEW_MAX]], %[[NEG_INF]] : f32
// CHECK-NEXT:        %[[SHIFT:.+]] = arith.select %[[NONE]], %{{.+}}, %[[NEW_MAX]] : f32
// CHECK-NEXT:        %[[DIFF:.+]] = arith.subf %{{.+}}, %[[SHIFT]] : f32
// CHECK-NEXT:        math.exp %[[DIFF]] : f32
// CHECK-COUNT-32:    math.exp
// CHECK:             arith.truncf %{{.+}} : f32 to bf16
// CHECK-COUNT-16:    nvvm.ldmatrix %{{.+}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<col>, num = 4 : i32
// CHECK:             gpu.barrier
// CHECK:             scf.yield
// CHECK:           nvvm.shfl.sync  bfly
// CHECK:           arith.divf
// CHECK:           scf.if
// CHECK-COUNT-16:    memref.store %{{.+}}, %[[OUT]]
// CHECK:         bufferization.to_tensor %[[OUT]] restrict writable
func.func @causal_bf16(%q: tensor<1x2x100x64xbf16>, %k: tensor<1x2x100x64xbf16>, %v: tensor<1x2x100x64xbf16>) -> tensor<1x2x100x64xf32> {
  %r = attn.term softmax (%q, %k, %v) mask causal : tensor<1x2x100x64xbf16>, tensor<1x2x100x64xbf16>, tensor<1x2x100x64xbf16> -> tensor<1x2x100x64xf32>
  return %r : tensor<1x2x100x64xf32>
}

// -----

// f16, D = 128, grouped heads (8 query heads over 2 key/value heads: head
// h reads ⌊h / 4⌋), M ≠ N: 32-key tiles (64 × 128 accumulators leave no
// room for 64 keys' scores), f16x2 registers, output rounded to f16.
// CHECK-LABEL: func.func @grouped_f16(
// CHECK:         gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c8, {{.*}} = %c1)
// CHECK-SAME:      workgroup(%{{.+}} : memref<2x32x136xf16, #gpu.address_space<workgroup>>, %{{.+}} : memref<2x32x136xf16, #gpu.address_space<workgroup>>)
// CHECK:           arith.divui %{{.+}}, %c4 : index
// CHECK:           scf.for %{{.+}} = %c0 to %c3 step %c1 iter_args(
// CHECK:             nvvm.mma.sync {{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK:           arith.truncf %{{.+}} : f32 to f16
// CHECK:           memref.store %{{.+}} : memref<1x8x40x128xf16>
func.func @grouped_f16(%q: tensor<1x8x40x128xf16>, %k: tensor<1x2x70x128xf16>, %v: tensor<1x2x70x128xf16>) -> tensor<1x8x40x128xf16> {
  %r = attn.term softmax (%q, %k, %v) : tensor<1x8x40x128xf16>, tensor<1x2x70x128xf16>, tensor<1x2x70x128xf16> -> tensor<1x8x40x128xf16>
  return %r : tensor<1x8x40x128xf16>
}

// -----

// A window (7 keys up to the query's own: p_i − 6 ≤ j ≤ p_i), softcap 30
// and a sink per head, N = M = 200:
//   key tiles from ⌊max(64·qt − 6, 0) / 64⌋ to ⌈min(r + 1, M) / 64⌉;
//   s = 30·tanh(s/30) before the mask; j visible iff j < r + 1 and
//   r − 6 < j + 1;
//   every row starts at m = σ_h and l = 1 in lane t = 0 (0 elsewhere, and
//   0 for σ_h = −inf).
// CHECK-LABEL: func.func @window_softcap_sink(
// CHECK-DAG:     %[[CAP:.+]] = arith.constant 3.000000e+01 : f32
// CHECK-DAG:     %[[INV_CAP:.+]] = arith.constant 0.0333333351 : f32
// CHECK:         gpu.launch
// CHECK:           %[[FIRST_KEY:.+]] = arith.subi %{{.+}}, %c6 : index
// CHECK-NEXT:      %[[CLAMPED:.+]] = arith.maxsi %[[FIRST_KEY]], %c0 : index
// CHECK-NEXT:      %[[FIRST_TILE:.+]] = arith.divui %[[CLAMPED]], %c64 : index
// CHECK-NEXT:      %[[START:.+]] = arith.minsi %[[FIRST_TILE]], %[[TILES:.+]] : index
// CHECK:           %[[SIGMA:.+]] = tensor.extract %{{.+}}[%{{.+}}] : tensor<2xf32>
// CHECK-NEXT:      %[[FINITE:.+]] = arith.cmpf ogt, %[[SIGMA]], %{{.+}} : f32
// CHECK-NEXT:      %[[LANE0:.+]] = arith.cmpi eq, %{{.+}}, %c0 : index
// CHECK-NEXT:      %[[LEAD:.+]] = arith.andi %[[FINITE]], %[[LANE0]] : i1
// CHECK-NEXT:      %[[L0:.+]] = arith.select %[[LEAD]], %{{.+}}, %{{.+}} : f32
// CHECK-NEXT:      scf.for %{{.+}} = %[[START]] to %[[TILES]] step %c1 iter_args({{.*}}%{{.+}} = %[[SIGMA]], %{{.+}} = %[[SIGMA]], %{{.+}} = %[[L0]], %{{.+}} = %[[L0]])
// CHECK:             %[[LOWEST:.+]] = arith.subi %{{.+}}, %c6 : index
// CHECK-NEXT:        %[[KEY1:.+]] = arith.addi %{{.+}}, %c1 : index
// CHECK-NEXT:        %[[AFTER:.+]] = arith.cmpi slt, %[[LOWEST]], %[[KEY1]] : index
// CHECK-NEXT:        %[[VISIBLE:.+]] = arith.andi %{{.+}}, %[[AFTER]] : i1
// CHECK-NEXT:        %[[S:.+]] = arith.mulf %{{.+}}, %{{.+}} : f32
// CHECK-NEXT:        %[[SC:.+]] = arith.mulf %[[S]], %[[INV_CAP]] : f32
// CHECK-NEXT:        %[[T:.+]] = math.tanh %[[SC]] : f32
// CHECK-NEXT:        %[[CAPPED:.+]] = arith.mulf %[[T]], %[[CAP]] : f32
// CHECK-NEXT:        arith.select %[[VISIBLE]], %[[CAPPED]], %{{.+}} : f32
func.func @window_softcap_sink(%q: tensor<1x2x200x64xbf16>, %sinks: tensor<2xf32>) -> tensor<1x2x200x64xf32> {
  %r = attn.term softmax (%q, %q, %q) mask window(6, 0) softcap 30.0 sink(%sinks : tensor<2xf32>) : tensor<1x2x200x64xbf16>, tensor<1x2x200x64xbf16>, tensor<1x2x200x64xbf16> -> tensor<1x2x200x64xf32>
  return %r : tensor<1x2x200x64xf32>
}

// -----

// ALiBi with the reference's slopes for H = 6 (n = 4: a_h = 2^(-8(h+1)/4)
// for h < 4, then 2^(-4(2(h-4)+1)/4)), as exp(x ln 2); s <- s - a_h |p_i - j|;
// key lengths hide j >= L_b, query lengths zero the rows i >= L_b.
// CHECK-LABEL: func.func @alibi_lengths(
// CHECK-DAG:     %[[OWN:.+]] = arith.constant -1.38629436 : f32
// CHECK-DAG:     %[[EXTRA:.+]] = arith.constant -0.693147182 : f32
// CHECK:         gpu.launch
// CHECK:           %[[FIRST:.+]] = arith.cmpi slt, %[[H:.+]], %c4 : index
// CHECK:           arith.mulf %{{.+}}, %[[OWN]] : f32
// CHECK:           arith.mulf %{{.+}}, %[[EXTRA]] : f32
// CHECK:           %[[EXPONENT:.+]] = arith.select %[[FIRST]], %{{.+}}, %{{.+}} : f32
// CHECK-NEXT:      %[[SLOPE:.+]] = math.exp %[[EXPONENT]] : f32
// CHECK:           %[[LK:.+]] = tensor.extract %{{.+}}[%{{.+}}] : tensor<1xf32>
// CHECK:           scf.for
// CHECK:             %[[DISTANCE:.+]] = math.absf %{{.+}} : f32
// CHECK-NEXT:        %[[BIAS:.+]] = arith.mulf %[[SLOPE]], %[[DISTANCE]] : f32
// CHECK-NEXT:        %[[BIASED:.+]] = arith.subf %{{.+}}, %[[BIAS]] : f32
// CHECK-NEXT:        %[[SHORT:.+]] = arith.cmpf olt, %{{.+}}, %[[LK]] : f32
// CHECK-NEXT:        %[[VISIBLE:.+]] = arith.andi %{{.+}}, %[[SHORT]] : i1
// CHECK-NEXT:        arith.select %[[VISIBLE]], %[[BIASED]], %{{.+}} : f32
// CHECK:           arith.cmpf olt, %{{.+}}, %[[LK]] : f32
func.func @alibi_lengths(%q: tensor<1x6x200x64xbf16>, %lengths: tensor<1xf32>) -> tensor<1x6x200x64xf32> {
  %r = attn.term softmax (%q, %q, %q) alibi mask causal key_lengths(%lengths : tensor<1xf32>) query_lengths(%lengths : tensor<1xf32>) : tensor<1x6x200x64xbf16>, tensor<1x6x200x64xbf16>, tensor<1x6x200x64xbf16> -> tensor<1x6x200x64xf32>
  return %r : tensor<1x6x200x64xf32>
}

// -----

// lse: the kernel also carries each row's largest visible score (from −inf)
// and stores lse_i = m_i + log l_i from lane t = 0, −inf for a row that saw
// no key.
// CHECK-LABEL: func.func @log_sum_exp(
// CHECK:         %[[LSE:.+]] = memref.alloc() : memref<1x2x100xf32>
// CHECK:         gpu.launch
// CHECK:           %[[LOOP:.+]]:38 = scf.for
// CHECK:           %[[SEEN:.+]] = arith.cmpf ogt, %[[LOOP]]#36, %{{.+}} : f32
// CHECK-NEXT:      %[[BOTH:.+]] = arith.andi %[[SEEN]], %{{.+}} : i1
// CHECK-NEXT:      %[[LOG:.+]] = math.log %{{.+}} : f32
// CHECK-NEXT:      %[[VALUE:.+]] = arith.addf %[[LOOP]]#32, %[[LOG]] : f32
// CHECK-NEXT:      %[[OR_NOT:.+]] = arith.select %[[BOTH]], %[[VALUE]], %{{.+}} : f32
// CHECK:           scf.if
// CHECK-NEXT:        memref.store %[[OR_NOT]], %[[LSE]][
// CHECK:         %[[LSE_TENSOR:.+]] = bufferization.to_tensor %[[LSE]] restrict writable : memref<1x2x100xf32>
// CHECK:         return %{{.+}}, %[[LSE_TENSOR]]
func.func @log_sum_exp(%q: tensor<1x2x100x64xbf16>) -> (tensor<1x2x100x64xf32>, tensor<1x2x100xf32>) {
  %r:2 = attn.term softmax (%q, %q, %q) mask causal lse : tensor<1x2x100x64xbf16>, tensor<1x2x100x64xbf16>, tensor<1x2x100x64xbf16> -> tensor<1x2x100x64xf32>, tensor<1x2x100xf32>
  return %r#0, %r#1 : tensor<1x2x100x64xf32>, tensor<1x2x100xf32>
}

// -----

// D = 256: Q waits in shared memory, two warps per 16 rows each accumulate
// half of O's columns (256 threads), 32-key tiles; K, V (2 × 32 × 264) and Q
// (64 × 264) bf16 are 101376 bytes of dynamic shared memory, viewed at
// byte offsets 0, 33792 and 67584:
//   warp w: rows 16 ⌊w / 2⌋ .., columns 128 (w mod 2) ..;
//   Q's rows by cp.async (rows ≥ N zero-filled) in a group before K and V's;
//   S = Q Kᵀ: 16 steps of 16 dims in a loop, each an ldmatrix.x4 of Q and
//   2 of K, 4 mma.sync;
//   O += P V: 2 steps × 8 ldmatrix.x4.trans × 2 mma.sync over the warp's
//   128 columns.
// CHECK-LABEL: func.func @wide_heads(
// CHECK:         gpu.launch blocks({{.*}}) in ({{.*}} = %c2, {{.*}} = %c2, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c256, {{.*}} = %c1, {{.*}} = %c1) dynamic_shared_memory_size %{{.+}}
// CHECK:           %[[MEMORY:.+]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK-NEXT:      memref.view %[[MEMORY]][%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<2x32x264xbf16, #gpu.address_space<workgroup>>
// CHECK:           memref.view %[[MEMORY]][%c33792][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<2x32x264xbf16, #gpu.address_space<workgroup>>
// CHECK:           memref.view %[[MEMORY]][%c67584][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x264xbf16, #gpu.address_space<workgroup>>
// CHECK:           %[[WARP:.+]] = arith.divui %{{.+}}, %c32 : index
// CHECK-NEXT:      %[[ROWS:.+]] = arith.divui %[[WARP]], %c2 : index
// CHECK-NEXT:      %[[HALF:.+]] = arith.remui %[[WARP]], %c2 : index
// CHECK-NEXT:      %[[FIRST_COLUMN:.+]] = arith.muli %[[HALF]], %c128 : index
// CHECK:           scf.for %{{.+}} = %{{.+}} to %c2048 step %c256 {
// CHECK:             nvvm.cp.async.shared.global
// CHECK:           nvvm.cp.async.commit.group
// CHECK:           scf.for %{{.+}} = %{{.+}} to %c1024 step %c256 {
// CHECK-COUNT-2:     nvvm.cp.async.shared.global
// CHECK:           nvvm.cp.async.commit.group
// CHECK:           scf.for
// CHECK:             scf.for %{{.+}} = %c0 to %c16 step %c1 iter_args(
// CHECK:               nvvm.ldmatrix
// CHECK:               nvvm.ldmatrix
// CHECK:               nvvm.mma.sync
// CHECK:               nvvm.mma.sync
// CHECK:               nvvm.ldmatrix
// CHECK:               nvvm.mma.sync
// CHECK:               nvvm.mma.sync
// CHECK:               scf.yield
// CHECK-COUNT-16:    nvvm.ldmatrix %{{.+}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<col>, num = 4 : i32
// CHECK:             gpu.barrier
// CHECK:             scf.yield
// CHECK:           memref.store %{{.+}}, %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] : memref<1x2x100x256xf32>
func.func @wide_heads(%q: tensor<1x2x100x256xbf16>) -> tensor<1x2x100x256xf32> {
  %r = attn.term softmax (%q, %q, %q) mask causal : tensor<1x2x100x256xbf16>, tensor<1x2x100x256xbf16>, tensor<1x2x100x256xbf16> -> tensor<1x2x100x256xf32>
  return %r : tensor<1x2x100x256xf32>
}

// -----

// f32 inputs under precision=tf32: mma.sync m16n8k8 with every operand
// rounded by cvt.rna.tf32.f32; D = 64 takes 32-key tiles of 64 + 4 floats
// per row (2 × 2 × 32 × 68 × 4 = 34816 bytes);
//   Q's A registers (g, t), (g + 8, t), (g, t + 4), (g + 8, t + 4) of each
//   8 columns, loaded once (8 steps × 4);
//   S: B registers K[8j + g][8s + t], K[8j + g][8s + t + 4] from shared,
//   8 steps × 4 key tiles = 32 products;
//   P V: P's registers (g, 2t), (g, 2t + 1), (g + 8, 2t), (g + 8, 2t + 1)
//   as A's (g, t), (g, t + 4), (g + 8, t), (g + 8, t + 4), i.e. in the
//   order 0, 2, 1, 3, against V's keys 2t and 2t + 1: 4 × 8 = 32 products.
// TF32-LABEL: func.func @tf32_causal(
// TF32:         gpu.launch
// TF32-SAME:      workgroup(%{{.+}} : memref<2x32x68xf32, #gpu.address_space<workgroup>>, %{{.+}} : memref<2x32x68xf32, #gpu.address_space<workgroup>>)
// TF32-COUNT-32:   nvvm.convert.float.to.tf32 %{{.+}} {rnd = #nvvm.fp_rnd_mode<rna>}{{$}}
// TF32:            scf.for %{{.+}} = %{{.+}} to %c512 step %c128 {
// TF32-COUNT-2:      nvvm.cp.async.shared.global %{{.+}}, %{{.+}}, 16, cache = cg
// TF32:            scf.for
// TF32:              %[[K0:.+]] = memref.load %{{.+}} : memref<2x32x68xf32>
// TF32-NEXT:         %[[B0:.+]] = nvvm.convert.float.to.tf32 %[[K0]]
// TF32:              %[[K1:.+]] = memref.load %{{.+}} : memref<2x32x68xf32>
// TF32-NEXT:         %[[B1:.+]] = nvvm.convert.float.to.tf32 %[[K1]]
// TF32-NEXT:         nvvm.mma.sync A[{{.*}}] B[%[[B0]], %[[B1]]] C[{{.*}}multiplicandAPtxType = #nvvm.mma_type<tf32>, multiplicandBPtxType = #nvvm.mma_type<tf32>, shape = #nvvm.shape<m = 16, n = 8, k = 8>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// TF32-COUNT-18:     math.exp
// TF32:              %[[P0:.+]] = nvvm.convert.float.to.tf32 %{{.+}} {rnd
// TF32-NEXT:         %[[P1:.+]] = nvvm.convert.float.to.tf32 %{{.+}} {rnd
// TF32-NEXT:         %[[P2:.+]] = nvvm.convert.float.to.tf32 %{{.+}} {rnd
// TF32-NEXT:         %[[P3:.+]] = nvvm.convert.float.to.tf32 %{{.+}} {rnd
// TF32:              %[[V0:.+]] = memref.load %{{.+}} : memref<2x32x68xf32>
// TF32-NEXT:         %[[B0:.+]] = nvvm.convert.float.to.tf32 %[[V0]]
// TF32:              %[[V1:.+]] = memref.load %{{.+}} : memref<2x32x68xf32>
// TF32-NEXT:         %[[B1:.+]] = nvvm.convert.float.to.tf32 %[[V1]]
// TF32-NEXT:         nvvm.mma.sync A[%[[P0]], %[[P1]], %[[P2]], %[[P3]]]  B[%[[B0]], %[[B1]]]
// TF32:            scf.yield
// TF32-LABEL: func.func @left_alone(
// TF32:         gpu.launch
// TF32-COUNT-2: attn.term
func.func @tf32_causal(%q: tensor<1x2x100x64xf32>) -> tensor<1x2x100x64xf32> {
  %r = attn.term softmax (%q, %q, %q) mask causal : tensor<1x2x100x64xf32>, tensor<1x2x100x64xf32>, tensor<1x2x100x64xf32> -> tensor<1x2x100x64xf32>
  return %r : tensor<1x2x100x64xf32>
}

// -----

// Terms the kernel does not take stay for the general lowering: f32 inputs
// (by default; precision=tf32 takes them),
// kernel scores, a Linformer projection.
// CHECK-LABEL: func.func @left_alone(
// CHECK-NOT:     gpu.launch
// CHECK-COUNT-3: attn.term
func.func @left_alone(%q: tensor<1x2x16x64xf32>, %qb: tensor<1x2x16x64xbf16>, %e: tensor<8x16xf32>) -> (tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>) {
  %a = attn.term softmax (%q, %q, %q) : tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32> -> tensor<1x2x16x64xf32>
  %b = attn.term kernel elu1 (%qb, %qb, %qb) : tensor<1x2x16x64xbf16>, tensor<1x2x16x64xbf16>, tensor<1x2x16x64xbf16> -> tensor<1x2x16x64xf32>
  %c = attn.term softmax (%qb, %qb, %qb) project(%e, %e : tensor<8x16xf32>, tensor<8x16xf32>) : tensor<1x2x16x64xbf16>, tensor<1x2x16x64xbf16>, tensor<1x2x16x64xbf16> -> tensor<1x2x16x64xf32>
  return %a, %b, %c : tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>
}
