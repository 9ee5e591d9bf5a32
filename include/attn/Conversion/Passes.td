//===- Passes.td - attn conversion passes ------------------*- tablegen -*-===//

#ifndef ATTN_CONVERSION_PASSES_TD
#define ATTN_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertAttnToLinalg : Pass<"convert-attn-to-linalg"> {
  let summary = "Lower attn.term and attn.combine to tiled linalg on tensors";
  let description = [{
    Each term becomes its feature rows (computed once per row, padded to
    whole tiles), then the order it carries: qk-first as a scf.forall over
    (batch, head, query tile) with an online normaliser over the visible key
    tiles (no N×M matrix), kv-first as a state pass and a query pass, or,
    with a causal or block mask, a loop over chunks carrying a w×E state.
    `order auto` with `crossover N` emits both behind `scf.if`; `auto`
    without it lowers qk-first (run attn-select-order first to choose).
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect", "::mlir::affine::AffineDialect"
  ];
  let options = [
    Option<"tileSize", "tile-size", "int64_t", /*default=*/"64",
           "Query/key tile of qk-first and default chunk of kv-first">,
  ];
}

def AttnMapToGPU : Pass<"attn-map-to-gpu", "::mlir::func::FuncOp"> {
  let summary = "Map bufferized attn loops and linalg ops onto gpu.launch";
  let description = [{
    Runs on the bufferized output of convert-attn-to-linalg and turns it into
    host code that only launches kernels, allocates device memory and
    branches on sizes:

    * every outermost `scf.forall` (one iteration per batch, head and query
      tile, or per batch and head for the kv-first state pass) becomes a
      `gpu.launch` with one block per iteration (the iteration space is
      linearised onto the x dimension of the grid) and `threads` threads per
      block. Inside, every linalg op becomes a block-strided loop over its
      parallel iterations (reductions stay sequential per thread), followed
      by `gpu.barrier`; the tiles the body allocates (the running max, sum
      and accumulator of the online softmax, the chunk state) live in
      workgroup (shared) memory, and with `stage-inputs` so do copies of
      the tiles of device buffers it only reads (the query tile, and the
      key and value tiles of each step of the key loop), as far as
      `shared-memory-limit` allows; up to 48 KiB as workgroup attributions,
      beyond that as views of the block's dynamic shared memory;
    * every other linalg op (feature maps, padding, transposes, copies)
      becomes its own grid-strided `gpu.launch`;
    * the remaining host allocations become `gpu.alloc`, freed with
      `gpu.dealloc` at the end of their block, and `memref.copy` becomes a
      copy kernel, so that every buffer the kernels touch is device memory.

    Function arguments are device pointers. Tiles beyond
    `shared-memory-limit` bytes of shared memory per block (largest last),
    and tiles whose size is dynamic, live in a device scratch buffer with
    one slice per block. The pass fails with a message where the host would
    touch device memory (a scalar load or store outside a kernel), where a
    tile's size is computed inside the block, where a buffer escapes other
    than through an `scf.if` whose every branch yields its own allocation,
    where a writing op in a block yields values, and on linalg ops without
    loops.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::gpu::GPUDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
    "::mlir::affine::AffineDialect"
  ];
  let options = [
    Option<"threads", "threads", "int64_t", /*default=*/"128",
           "Threads per block">,
    Option<"sharedMemoryLimit", "shared-memory-limit", "int64_t",
           /*default=*/"98304",
           "Most bytes of shared memory one block may use (beyond 48 KiB "
           "it is dynamic shared memory; sm_80 allows 163 KiB, sm_90 "
           "227 KiB)">,
    Option<"stageInputs", "stage-inputs", "bool", /*default=*/"true",
           "Copy the tiles a block only reads (Q, K, V) into shared "
           "memory">,
  ];
}

def AttnMergeGPUModules : Pass<"attn-merge-gpu-modules", "::mlir::ModuleOp"> {
  let summary = "Move every outlined kernel into one gpu.module";
  let description = [{
    gpu-kernel-outlining makes one `gpu.module` per kernel. This pass moves
    all kernels of the module into the first one (renaming clashes) and
    points every `gpu.launch_func` at it, so that a spec compiles to a
    single PTX module (one `--emit=ptx` file, one module load at run time).
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def AttnEmulateGPU : Pass<"attn-emulate-gpu", "::mlir::func::FuncOp"> {
  let summary = "Run the output of attn-map-to-gpu on the host, for testing";
  let description = [{
    Turns every `gpu.launch` made by attn-map-to-gpu into host loops that
    compute what the GPU would: a loop over the blocks, and inside it a loop
    over the threads around each barrier-free piece of work (each loop that
    attn-map-to-gpu strided by the thread id). Workgroup memory becomes a
    host allocation per launch and `gpu.alloc`/`gpu.dealloc` become
    `memref.alloc`/`memref.dealloc`. Barriers then hold by construction, so
    the result is exact for race-free kernels: this is how the GPU mapping
    is tested on machines without a GPU (`attnc run --target=nvptx
    --emulate-gpu`). It fails on any other use of the thread id.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect"
  ];
}

#endif // ATTN_CONVERSION_PASSES_TD
