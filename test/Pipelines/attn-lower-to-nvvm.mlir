// RUN: attn-opt %s --attn-lower-to-nvvm=serialize=false | FileCheck %s --check-prefix=KERNELS
// RUN: attn-opt %s --attn-lower-to-nvvm=serialize=false | grep -c 'gpu.module @' | FileCheck %s --check-prefix=ONEMODULE
// RUN: attn-opt %s --attn-lower-to-nvvm="serialize=false threads=64" | FileCheck %s --check-prefix=THREADS
// RUN: attn-opt %s --attn-lower-to-nvvm=chip=sm_80 | FileCheck %s --check-prefix=BINARY
// RUN: attn-opt %s --attn-lower-to-nvvm=chip=sm_80 | grep -oE '^ *([^ ]+ = )?[a-z_]+\.[a-z_.]+' | grep -oE '[a-z_]+\.[a-z_.]+$' | sort -u | not grep -vE '^(llvm\..*|gpu\.binary|gpu\.launch_func)$'
// RUN: attn-opt %s --attn-lower-to-nvvm=emulate=true | FileCheck %s --check-prefix=EMULATE
// RUN: attn-opt %s --attn-lower-to-nvvm=emulate=true | grep -oE '^ *([^ ]+ = )?[a-z_]+\.[a-z_.]+' | grep -oE '[a-z_]+\.[a-z_.]+$' | sort -u | not grep -vE '^llvm\.'

!t = tensor<1x2x64x16xf32>

// Without serialisation the pipeline stops at the gpu dialect: the host
// functions take device buffers, allocate their temporaries with gpu.alloc
// and launch kernels that all live in one gpu.module. The qk-first forall
// (2 heads x 2 query tiles of 32) is a kernel of 4 blocks whose running max,
// sum and accumulator are workgroup memory; the causal kv-first term's state
// pass (2 heads) is a kernel of 2 blocks holding the 16x16 state.
// KERNELS:       func.func @softmax(
// KERNELS-DAG:     %[[C1:.+]] = arith.constant 1 : index
// KERNELS-DAG:     %[[C4:.+]] = arith.constant 4 : index
// KERNELS-DAG:     %[[C128:.+]] = arith.constant 128 : index
// KERNELS:         %[[BUF:.+]] = gpu.alloc () : memref<1x2x64x16xf32>
// KERNELS:         gpu.launch_func @[[MOD:[a-z_0-9]+]]::@{{[a-z_0-9]+}} blocks in
// KERNELS:         gpu.launch_func @[[MOD]]::@[[QK:[a-z_0-9]+]] blocks in (%[[C4]], %[[C1]], %[[C1]]) threads in (%[[C128]], %[[C1]], %[[C1]])
// KERNELS:         gpu.launch_func @[[MOD]]::@{{[a-z_0-9]+}} blocks in
// KERNELS:         gpu.dealloc %[[BUF]] : memref<1x2x64x16xf32>
// KERNELS:         return
// KERNELS:       gpu.module @[[MOD]] {
// KERNELS-NOT:   gpu.launch blocks
// KERNELS:         gpu.func @[[QK]]({{.*}}) workgroup({{.*}}memref<32xf32, #gpu.address_space<workgroup>>{{.*}}memref<32x16xf32, #gpu.address_space<workgroup>>{{.*}}) kernel attributes {known_block_size = array<i32: 128, 1, 1>
// KERNELS:           gpu.barrier
// KERNELS:         gpu.func @[[STATE:[a-z_0-9]+]]({{.*}}) workgroup({{.*}}memref<16x16xf32, #gpu.address_space<workgroup>>{{.*}}) kernel
// KERNELS:           gpu.barrier
// KERNELS-NOT:   gpu.module
// KERNELS:       func.func @linear_elu1_causal(
// KERNELS-DAG:     %[[LC1:.+]] = arith.constant 1 : index
// KERNELS-DAG:     %[[LC2:.+]] = arith.constant 2 : index
// KERNELS:         gpu.launch_func @[[MOD]]::@[[STATE]] blocks in (%[[LC2]], %[[LC1]], %[[LC1]])
// KERNELS:         return
// KERNELS-NOT:   gpu.module
// KERNELS-NOT:   gpu.launch blocks
// ONEMODULE:     {{^1$}}

// THREADS:       func.func @softmax(
// THREADS:         %[[C64:.+]] = arith.constant 64 : index
// THREADS:         gpu.launch_func {{.*}} threads in (%[[C64]],
// THREADS:       gpu.func {{.*}} kernel attributes {known_block_size = array<i32: 64, 1, 1>

// The whole pipeline: the kernels are PTX for sm_80 inside a gpu.binary;
// the host code is LLVM dialect launching them (the second RUN line checks
// that nothing but llvm.*, gpu.binary and gpu.launch_func is left).
// BINARY:       llvm.func @softmax(
// BINARY:         gpu.launch_func <%{{.+}} : !llvm.ptr> @[[MOD:[a-z_0-9]+]]::@{{[a-z_0-9]+}} blocks in
// BINARY:       llvm.func @_mlir_ciface_softmax(
// BINARY:       gpu.binary @[[MOD]] [#gpu.object<#nvvm.target<O = 3, chip = "sm_80", features = "+ptx80">, {{.*}}assembly = "{{.*}}.target sm_80{{.*}}.entry [[MOD]]({{.*}}.shared .align {{.*}}bar.sync
// BINARY:       llvm.func @linear_elu1_causal(
// BINARY:         gpu.launch_func <%{{.+}} : !llvm.ptr> @[[MOD]]::@{{[a-z_0-9]+}} blocks in
// BINARY:       llvm.func @mgpuMemAlloc(
// BINARY-NOT:   gpu.binary

// With emulate=true the launches run on the host: LLVM dialect only (the
// second RUN line), device buffers from malloc.
// EMULATE:       llvm.func @malloc(
// EMULATE:       llvm.func @softmax(
// EMULATE:         llvm.call @malloc
// EMULATE:         llvm.cond_br
// EMULATE:         llvm.call @free
// EMULATE:       llvm.func @_mlir_ciface_softmax(
// EMULATE:       llvm.func @linear_elu1_causal(
// EMULATE-NOT:   gpu.
func.func @softmax(%q: !t, %k: !t, %v: !t) -> !t {
  %0 = attn.term softmax (%q, %k, %v) mask causal : !t, !t, !t -> !t
  return %0 : !t
}

func.func @linear_elu1_causal(%q: !t, %k: !t, %v: !t) -> !t {
  %0 = attn.term kernel elu1 (%q, %k, %v) mask causal order kv_first : !t, !t, !t -> !t
  return %0 : !t
}
