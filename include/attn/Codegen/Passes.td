//===- Passes.td - attn code generation passes -------------*- tablegen -*-===//
//
// Passes of the code generation stages that follow the attn dialect (filed
// by stage, as IREE's Codegen/{Common,LLVMCPU,LLVMGPU}).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_PASSES_TD
#define ATTN_CODEGEN_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Common: host ABI, math and the contract check
//===----------------------------------------------------------------------===//

def AttnDestinationAbi : Pass<"attn-destination-abi", "::mlir::ModuleOp"> {
  let summary = "Give public functions the memref calling convention of attnc";
  let description = [{
    Rewrites every public `func.func` taking and returning ranked tensors into
    one taking memrefs of the same shapes, followed by one output memref per
    result, and returning nothing: arguments are read through
    `bufferization.to_tensor restrict` and results are written with
    `bufferization.materialize_in_destination`. The function gets
    `llvm.emit_c_interface`, so that `_mlir_ciface_<name>` takes pointers to
    memref descriptors (what attnc's JIT and C header call).
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect",
                           "::mlir::memref::MemRefDialect"];
}

def AttnSinkDestinationStores
    : Pass<"attn-sink-destination-stores", "::mlir::func::FuncOp"> {
  let summary = "Move a store into a destination buffer into the branches of "
                "the scf.if that computes the stored value";
  let description = [{
    Rewrites

      %r = scf.if %c -> T { A; scf.yield %a } else { B; scf.yield %b }
      bufferization.materialize_in_destination %r in %dest

    (where the store is the only use of %r) into

      scf.if %c { A; materialize_in_destination %a in %dest }
      else { B; materialize_in_destination %b in %dest }

    A run-time crossover between two association orders is such an scf.if.
    Empty-tensor elimination, which lets a kernel compute its output in the
    destination, replaces the tensor.empty of one branch only when the store
    is outside the if, and the store is then a copy of the whole output
    after the kernel (7% of a linear-attention call at N = 4096). With the
    store in each branch, each branch writes its output into the destination
    in place. Applied to nested ifs too; other stores are left alone.
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect",
                           "::mlir::scf::SCFDialect"];
}

def AttnCheckForwardedAttributes
    : Pass<"attn-check-forwarded-attributes", "::mlir::ModuleOp"> {
  let summary = "Fail on attributes the LLVM lowering would misread";
  let description = [{
    The first pass of `attn-lower-to-llvm` and `attn-lower-to-nvvm`. The
    lowering of `func.func` and `gpu.func` to `llvm.func`, and of
    `func.call` and `func.call_indirect` to `llvm.call`, hands each op's
    discardable attributes to the builder of the LLVM op, which reads those
    named like one of its properties (`CConv`, `linkage`, `fastmathFlags`,
    `operandSegmentSizes`, ...) as that property; one of another kind (say
    `{CConv = 1 : i64}`) crashed the process there. This pass reads them
    the same way first and fails with an error at the op instead. (Such an
    attribute of the right kind, e.g. `passthrough = ["noinline"]` on a
    function, is kept and lowered as before.)
  }];
}

def AttnApproximateMath : Pass<"attn-approximate-math"> {
  let summary = "Replace exp (and friends) by polynomial approximations";
  let description = [{
    Rewrites `math.exp`, `math.sin`, `math.cos` and other transcendental ops
    into polynomial approximations (plain arith, f32-accurate to a few
    ulp). A libm call per element keeps LLVM from vectorizing the softmax
    and feature-map loops; the arithmetic form vectorizes. f32 exp, the
    hot one (once per score of a softmax), is our own 14-op form (x clamped
    to [−87.5, 89], range reduction by the 1.5 * 2^23 rounding trick, a
    degree-6 polynomial, relative error < 1e-7); the others are MLIR's. An
    f32 exp whose result would be subnormal (x < −86.99, masked scores at
    −inf) gives 0: subnormal arithmetic is ~100× slower on x86 without
    flush-to-zero, and those values are below 2.4e-38; above ln(FLT_MAX) it
    gives +inf, and NaN stays NaN. In GPU kernels it
    replaces libdevice's `__nv_expf` and friends, so that the PTX needs no
    CUDA toolkit at compile time. Runs on any op (a function, a
    `gpu.module`).

    With `arith-only`, the helpers the polynomials use are expanded too:
    `math.fma` into a multiply and an add (which the backend contracts
    again), `math.floor` and `math.absf` of f32 into exact integer and bit
    arithmetic, `arith.maxnumf` into a compare and select.
    convert-gpu-to-nvvm would otherwise call libdevice for them.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::vector::VectorDialect"];
  let options = [
    Option<"arithOnly", "arith-only", "bool", /*default=*/"false",
           "Also expand fma, floor, absf and maxnumf into arith">,
  ];
}

def AttnCheckLowered : Pass<"attn-check-lowered", "::mlir::ModuleOp"> {
  let summary = "Fail unless only the LLVM (and OpenMP) dialects are left";
  let description = [{
    The last pass of `attn-lower-to-llvm` and `attn-lower-to-nvvm`: every
    operation must belong to the `llvm` or `omp` dialect, or be a serialised
    `gpu.binary` or a `gpu.launch_func` of one (or be the module itself). Anything else, above all an
    `attn` op, is reported with its location and fails the pipeline.
  }];
}

def AttnDescribeCEntry : Pass<"attn-describe-c-entry", "::mlir::ModuleOp"> {
  let summary = "Derive the C entry point of a spec's function from its ops";
  let description = [{
    Describes `int attn_<name>(const float *in..., float *out, int64_t
    size...)`, the C entry point of the module's public function `<name>`
    (its arguments are the spec's inputs, its result the output O), and
    records it as the module attribute `attn.c_entry` that
    `attn-emit-c-entry` turns into code after the lowering:

    - one pointer per argument (named by its `attn.input` attribute, else
      `arg<i>`) and one for the output, `out`;
    - one `int64_t` per dynamic size. Without a naming from the spec (the
      compiler library gives one: dims of one name are one size) every
      dynamic dimension is a size of its own, `<input>_d<dim>`;
    - the checks at entry, derived from the verified ops: every size >= 1;
      the equalities attn.term's constraints imply between sizes, at least
      one of them dynamic (C1: B and H of q, k, v; D of q and k; M of k and
      v. C2 and attn.combine's C2: every term's B, H, N is the output's.
      C4: ω's D is q's. C6: N = M under causal masks. C7: E and F are
      [k, M]) and the gate's [B, H, N, E]; and that no array, no term's
      N x M scores, no feature array (N x m, M x m) and no projected score
      (N x k) exceeds 2^62 bytes.
  }];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"\"",
           "The spec's function (default: the module's only public one)">,
  ];
}

def AttnCheckAllocations : Pass<"attn-check-allocations", "::mlir::ModuleOp"> {
  let summary = "Test every heap allocation of the lowered code for NULL";
  let description = [{
    On the LLVM dialect: after each call of `malloc` (or `aligned_alloc`,
    `calloc`), a NULL result

    1. adds 1 to the module's internal i64 global
       `__attn_allocation_failures` (an atomic add: the allocation may be in
       any OpenMP thread), and
    2. leaves the work the allocation belongs to, without touching the
       pointer: the function (`llvm.return`) or the current iteration of an
       `omp.loop_nest` (`omp.yield`).

    `attn-emit-c-entry` compares the counter before and after the call and
    returns 4 (ATTN_OUT_OF_MEMORY), so that an allocation the machine cannot
    satisfy is an error code, not a crash. What was allocated before the
    failure is not freed (the failure path leaks it).

    An allocation in any other region (e.g. an `omp.parallel` body outside
    its loops, where leaving early would skip a barrier) is an error.
  }];
  let dependentDialects = ["::mlir::omp::OpenMPDialect"];
}

def AttnCacheWorkspaces : Pass<"attn-cache-workspaces", "::mlir::ModuleOp"> {
  let summary = "Keep each workspace of a function's body for its next call";
  let description = [{
    On the LLVM dialect, after `attn-check-allocations`: a `malloc` in the
    body of a function (not in an OpenMP region) whose pointer is only
    freed by `free` calls this pass can trace, and does not escape, gets a
    slot of its own, an internal pointer global `__attn_workspace_slot_<i>`:

    1. `malloc(n)` becomes `__attn_workspace_acquire(slot, n)`: it takes the
       block the slot holds (an atomic exchange with NULL) and returns it
       when its capacity is at least n; otherwise it frees that block and
       allocates one of n bytes (NULL when malloc fails, which the test of
       `attn-check-allocations` still sees).
    2. each `free(p)` of it becomes `__attn_workspace_release(slot, p)`:
       the block goes back to the slot (an atomic exchange); a block the
       slot held, left by a concurrent call, is freed, as is a block over
       256 MiB.
    3. `llvm.mlir.global_dtors` gets `__attn_workspace_free_all`, which
       frees what the slots hold (when the object is unloaded, a JIT
       kernel destroyed or the program ends); `attn-emit-c-entry` exports
       it as `attn_<name>_free_workspaces`.

    Why: the qk-first form packs K and V once per call into buffers of
    the inputs' size; fresh pages from the C library cost a page fault
    each (~1.7 us on a 2-core VM), 5-13% of a softmax call at N = 512-2048.
    A block starts with a 64-byte header holding its capacity; the pointer
    returned is past it (16-byte aligned as malloc's, so the lowering's
    own alignment arithmetic still applies).

    Traced: the allocated pointer may be compared, offset (`getelementptr`,
    `ptrtoint`), loaded from or stored to, passed to the memory intrinsics,
    and inserted as field 0 of memref descriptors whose field 0 is only
    extracted for the uses above; any other use (a branch or call operand,
    a store of the pointer itself) leaves the allocation as it was.
  }];
}

def AttnEmitCEntry : Pass<"attn-emit-c-entry", "::mlir::ModuleOp"> {
  let summary = "Emit the C entry point recorded in attn.c_entry";
  let description = [{
    After the lowering to the LLVM dialect, defines the entry point that
    `attn-describe-c-entry` recorded:

    ```
    llvm.func @attn_<name>(%q: !llvm.ptr, ..., %out: !llvm.ptr, %N: i64) -> i32
    ```

    It returns 1 (ATTN_BAD_SIZE) when a size is below 1, two sizes that must
    be equal differ or a byte size would exceed 2^62 (computed with
    `llvm.intr.umul.with.overflow`), 2 (ATTN_NULL_POINTER) when a pointer is
    null, and otherwise builds a dense row-major memref descriptor per array
    (offset 0, strides the suffix products of the sizes), calls the spec
    function's C interface (`_mlir_ciface_...`) and returns 0, or 4
    (ATTN_OUT_OF_MEMORY) when `attn-check-allocations`' counter of failed
    allocations grew during the call. Every other
    function and global becomes internal, so that the object exports the
    entry point alone. The `attn.c_entry` attribute is removed.

    It also defines `void @attn_<name>_free_workspaces()`, which calls
    `__attn_workspace_free_all` of `attn-cache-workspaces` when the module
    has it (and does nothing otherwise).

    With `packed`, it also defines `i32 @attn_<name>_packed(ptr arrays,
    ptr sizes)`, which loads the array pointers and the sizes from two
    arrays and calls the entry: one signature for every spec, which the
    compiler library's JIT calls.
  }];
  let options = [
    Option<"packed", "packed", "bool", /*default=*/"false",
           "Also define attn_<name>_packed(void **arrays, int64_t *sizes)">,
    Option<"internalize", "internalize", "bool", /*default=*/"true",
           "Give every other function and global internal linkage">,
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

//===----------------------------------------------------------------------===//
// CPU: register tiles and vector loops
//===----------------------------------------------------------------------===//

def AttnTileAndVectorize : Pass<"attn-tile-and-vectorize", "::mlir::func::FuncOp"> {
  let summary = "Register-tile and vectorize the static linalg tiles of attn";
  let description = [{
    Runs on the tensor IR of convert-attn-to-linalg. Contractions with
    static loop ranges (two parallel loops and one reduction: the per-tile
    products) are tiled to `rows`×`cols` register tiles, and a reduction
    longer than `reduction-tile` into a rolled loop of steps (the largest
    power of two up to it that divides the reduction; by default 4:
    CpuTarget::reductionSteps); each tile or step is
    vectorized to one vector.contract, which lowers to outer-product FMAs
    held in registers. Code size and compile time then do not grow with the
    tile (a key tile of 1000 is 250 steps of 4, not 1000 unrolled outer
    products).

    The register tile comes from the CPU description of `cpu` and
    `cpu-features` (attn/Codegen/CPU/CpuTarget.h): the tile whose
    accumulators, right-operand vectors and broadcast fit in its vector
    registers and whose FMAs outlast its loads and the FMA latency by a
    margin (6×16 with AVX2's 16 registers of 8 floats, 8×32 with
    AVX-512's 32 of 16). `rows`/`cols` override it. Contractions are
    C += A B and C += A^T B (kv-first's state phi(K)^T V, read without a
    transpose; its tiles' rows are a power of two, 4×16 on AVX2, since a
    tile reads A's rows as one vector). Rows that are not a whole number of
    register tiles (64 rows in 6-row tiles) are split off and computed as
    one shorter tile (ten 6-row tiles, then one of 4).

    Two more kinds of static op get the register tile: elementwise maps
    computing exp, sin or cos (a register tile's worth of elements per step,
    in rows of one machine vector: independent chains, where one vector per
    loop iteration is bound by their latency), and
    column sums y[c] += A[r, c] (a register width of columns over all rows,
    the sums held in registers). Other elementwise steps and reductions are
    left to LLVM's loop vectorizer, which sees the target's vector width
    through the target machine.
  }];
  let options = [
    Option<"cpu", "cpu", "std::string", /*default=*/"\"native\"",
           "CPU to tile for: native, x86-64-v3, x86-64-v4 or an LLVM CPU "
           "name">,
    Option<"cpuFeatures", "cpu-features", "std::string", /*default=*/"\"\"",
           "Extra CPU features, as llc -mattr takes them (+avx2,-avx512f)">,
    Option<"rows", "rows", "int64_t", /*default=*/"0",
           "Rows of a contraction's register tile (0: from the CPU)">,
    Option<"cols", "cols", "int64_t", /*default=*/"0",
           "Columns of a contraction's register tile (0: from the CPU)">,
    Option<"reductionTile", "reduction-tile", "int64_t", /*default=*/"-1",
           "Reductions longer than this are split into steps of at most this "
           "many (-1: from the CPU, 0: never)">,
  ];
  let dependentDialects = ["::mlir::vector::VectorDialect",
                           "::mlir::scf::SCFDialect"];
}

def AttnStridedCopiesToLinalg
    : Pass<"attn-strided-copies-to-linalg", "::mlir::func::FuncOp"> {
  let summary = "Turn memref.copy between strided buffers into linalg.copy";
  let description = [{
    MLIR lowers a `memref.copy` whose operands are not both known to be
    contiguous to a call of the runtime's `memrefCopy`, which copies element
    by element with index arithmetic: the padding of Q, K and V to whole
    tiles (a copy into a subview) then costs more than the attention itself
    at small N. As `linalg.copy` it becomes a loop nest whose innermost
    stride is known, which LLVM vectorizes. Copies between contiguous
    buffers (a memcpy) are left alone.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def AttnPrefetchNextTiles
    : Pass<"attn-prefetch-next-tiles", "::mlir::func::FuncOp"> {
  let summary = "Prefetch the next iteration's tile of a caller's array";
  let description = [{
    A loop that reads a tile of a function argument (the caller's Q, K or
    V, in DRAM) per iteration, copying it or mapping it in place, and then
    computes on it waits for memory and computes in turn: at N = 4096,
    kv-first linear attention spent ~40% of its state pass in those copies.
    This pass prefetches the tile the next iteration will read (the same
    subview with the loop's induction variable advanced by one step) into
    the L2 cache, one `memref.prefetch` per 64-byte line, spread over the
    iterations of the iteration's largest tile product (the `scf.for` nest,
    constant bounds, around a `vector.contract`), row-major, so that the
    memory works while the cores compute. (A burst of all the lines before
    the copy waits for memory as the copy does.) The prefetches go into the
    outermost loop of that nest whose iterations leave at most 8 lines each:
    not one per step of a register tile's reduction loop, where their index
    arithmetic is more instructions than the lines need.

    The output's tiles are prefetched the same way, for writing: a store
    to a line that is not in cache waits for the line to be read first
    (kv-first's query pass waited ~7% of its time on O's lines). And the
    tiles of a workspace the function allocated with the sequence's length
    (qk-first's packed K^T panels: 2 MiB per head at N = 4096, D = 128,
    beyond L2) that the loop only reads, for reading; a fixed-size buffer
    is a tile that stays in cache and gets none.

    Matched: a `memref.subview` of a function argument (or of such a
    workspace: a `memref.alloc` with a dynamic size, outside the loop, that
    the loop only reads) with unit strides,
    sizes that are constants or the `min` of a constant (a tile the end of
    the sequence cuts, counted as the constant) and at most one outer
    dimension longer than 1 that is only read (copied from, read by vector
    transfers or linalg inputs, or cut into subviews that are) or only
    written (a copy's target, written by vector transfers, stores or as a
    linalg init, or cut into subviews that are; a subview yielded by an
    `scf.if` is accessed as the if's result is: qk-first's V tile, in place
    or the padded last one), inside an `scf.for` (or
    the innermost dimension of an `scf.parallel`) on whose induction
    variable the subview's offsets depend through pure arithmetic, and
    whose iteration holds such a tile product (directly, or in the branch
    of an `scf.if` that also holds the subview: the whole tiles' branch of
    a loop whose last tile is padded). The prefetches are guarded
    by the next tile lying inside the argument (the last tile prefetches
    nothing). Prefetches do not change what the code computes.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def AttnPromoteTilesToStack
    : Pass<"attn-promote-tiles-to-stack", "::mlir::func::FuncOp"> {
  let summary = "Tile buffers of a loop iteration on the stack, not the heap";
  let description = [{
    Bufferization allocates the tiles of every loop iteration (a copied Q,
    K or V tile, the scores, the features) with `memref.alloc`, i.e. a
    malloc and a free per tile: ~800 per call of kv-first elu1 at
    N = 1024, and in a process whose heap is fragmented (Python) they cost
    ~6% of the call. This pass, run after bufferization and before the
    deallocations are placed, turns an allocation of static shape inside
    an `scf.for` or `scf.forall` body into a `memref.alloca` when the
    buffer does not leave the iteration: its uses, through views, casts and
    `scf.if` results, neither are yielded by the loop nor escape into a
    store, a call or a return. At most `max-bytes` of a loop body go to
    the stack (OpenMP worker threads have 4 MiB stacks by default); the
    rest stays on the heap. attn-hoist-allocas-from-loops then keeps the
    stack from growing with the iterations.
  }];
  let options = [
    Option<"maxBytes", "max-bytes", "int64_t", /*default=*/"262144",
           "Bytes of one loop body's tiles that may go to the stack">,
  ];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def AttnHoistAllocasFromLoops
    : Pass<"attn-hoist-allocas-from-loops", "::mlir::func::FuncOp"> {
  let summary = "Static allocas out of sequential loops";
  let description = [{
    An alloca inside a loop takes new stack in every iteration until the
    function returns. A `memref.alloca` of static shape inside `scf.for`
    loops moves before the outermost of them (not across an
    `scf.parallel`, whose iterations need their own buffers and whose
    OpenMP lowering gives each iteration a scope): every iteration then
    reuses one buffer. This is sound for the tiles attn-promote-tiles-to-
    stack makes, whose contents do not outlive an iteration.
  }];
}

def AttnLowerAllocaScopes
    : Pass<"attn-lower-alloca-scopes", "::mlir::func::FuncOp"> {
  let summary = "memref.alloca_scope as a stack save and restore around its body";
  let description = [{
    Replaces every `memref.alloca_scope` by its body between
    `llvm.intr.stacksave` and `llvm.intr.stackrestore` (its results by the
    values its terminator returns). convert-scf-to-openmp puts each
    parallel iteration in a scope, which the canonicalizer removes only when
    it holds no alloca; with the tiles of attn-promote-tiles-to-stack it
    does, and the scope's region must stay a single block, which the
    lowering of the loops inside it (convert-scf-to-cf) breaks. MemRefToLLVM
    lowers scopes the same way, but only after that. Runs before the loops
    are lowered.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def AttnExpandBF16Conversions
    : Pass<"attn-expand-bf16-conversions", "::mlir::func::FuncOp"> {
  let summary = "Rewrite f32 <-> bf16 conversions as integer arithmetic";
  let description = [{
    x86 has no f32 -> bf16 instruction before AVX512-BF16, so LLVM calls
    `__truncsfbf2`, which neither the JIT of `attnc run` nor every C
    toolchain provides (GCC 12's libgcc does not). This pass rewrites
    `arith.truncf` f32 -> bf16 (round to nearest even, NaN kept a NaN) and
    `arith.extf` bf16 -> f32 (a 16-bit shift) on scalars and vectors into
    integer operations, which vectorise like any other. f16 conversions are
    left alone: F16C (in every target x86-64-v3 and up) converts them.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def AttnBalanceParallelLoops
    : Pass<"attn-balance-parallel-loops", "::mlir::ModuleOp"> {
  let summary = "Hand out the iterations of attn's parallel loops one at a "
                "time (OpenMP schedule(dynamic, 1))";
  let description = [{
    Every parallel loop convert-attn-to-linalg emits has iterations of
    unequal work: a causal query tile t sees t + 1 key tiles, a padded batch
    element of length L does L^2 of the work, the first and last key splits
    of a window see fewer keys. OpenMP's default static schedule gives each
    thread one contiguous block of them: a padded batch of lengths N, 3N/4,
    N/2, N/4 over 2 threads then runs 1.56 : 0.31 (2 threads no faster than
    one). Each iteration is a whole query tile, chunk or key split (tens of
    microseconds at least), so handing them out one at a time costs one
    atomic increment each and balances the threads. Sets schedule(dynamic,
    1) on every omp.wsloop that has no schedule.
  }];
  let dependentDialects = ["::mlir::omp::OpenMPDialect",
                           "::mlir::arith::ArithDialect"];
}

//===----------------------------------------------------------------------===//
// GPU: thread blocks, kernels and their emulation
//===----------------------------------------------------------------------===//

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
    * with `precision=tf32`, or in a function with a bf16 or f16 argument,
      and `threads` a multiple of 32, a block's contractions C(m, n) +=
      Σ_k A(m, k) B(k, n) (the tile products of kernel terms) run on the
      tensor cores instead: each warp computes 16 × 8 fragments of C on
      `nvvm.mma.sync` m16n8k8 with operands rounded to tf32;
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
    "::mlir::linalg::LinalgDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::scf::SCFDialect", "::mlir::affine::AffineDialect"
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
    Option<"precision", "precision", "::mlir::attn::GpuPrecision",
           /*default=*/"::mlir::attn::GpuPrecision::F32",
           "tf32: the blocks' tile products on the tensor cores (also "
           "done when a function argument is bf16 or f16)",
           "::mlir::attn::gpuPrecisionValues()">,
  ];
}

def AttnMergeGPUModules : Pass<"attn-merge-gpu-modules", "::mlir::ModuleOp"> {
  let summary = "Move every outlined kernel into one gpu.module";
  let description = [{
    gpu-kernel-outlining makes one `gpu.module` per kernel. This pass moves
    all kernels of the module into the first one (renaming clashes) and
    points every `gpu.launch_func` at it, so that a spec compiles to a
    single PTX module (one `--emit=ptx` file, one module load at run time).
    Kernels that use `nvvm.mma.sync` get `nvvm.maxnreg = 255`: with
    `.maxntid 128` alone ptxas aims at three blocks per SM (168 registers)
    and spills the tensor-core kernels' fragments.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect", "::mlir::NVVM::NVVMDialect"];
}

def AttnMmaAttention : Pass<"attn-mma-attention", "::mlir::func::FuncOp"> {
  let summary = "Softmax terms over bf16/f16 (or f32 in tf32) inputs as "
                "tensor-core kernels";
  let description = [{
    Replaces each `attn.term softmax` whose query, key and value are bf16 or
    f16, or f32 under `precision=tf32`, by one `gpu.launch` in the
    FlashAttention-2 form, written with warp instructions. Constraints:
    (1) static head counts and head dims, B, N and M static or dynamic;
    (2) D = E, a multiple of 16 up to 256 (bf16/f16) or of 8 up to 128
    (tf32); (3) mask `none`, `causal` or `window`; (4) normaliser `rows`
    with ε = 0; (5) no projection, decay or state (softcap, ALiBi, sinks,
    key/query lengths and lse allowed). Other terms are left to the general
    lowering.

    ```
    grid (⌈N/64⌉, B·H), 4 warps × 16 query rows per block
    per key tile of 64, or 32 for D > 64 (causal and window: only the
    tiles the block's rows see; a sink σ_h starts every row at m = σ_h,
    l = 1):
      K, V tiles → shared (16-byte nvvm.cp.async, rows ≥ M zero-filled;
                   two buffers: tile kt + 1 is copied while tile kt is used)
      S = Q Kᵀ         nvvm.mma.sync m16n8k16, f32 accumulators
                       (Q fragments in registers, K by nvvm.ldmatrix x4)
      s = scale·S, softcap c: s ← c·tanh(s/c), ALiBi: s ← s − a_h·|p_i − j|;
                   masked (j ≥ M, j ≥ L_b, or outside p_i − l ≤ j ≤ p_i + r,
                   p_i = i + M − N) → −inf
      m' = max(m, rowmax s)   per thread, then nvvm.shfl.sync xor 1, 2
      P = exp(s − m'), α = exp(m − m'), l = α l + Σ P, O = α O
      O += P V         P rounded to the input type, in registers as the
                       A operand; V by nvvm.ldmatrix x4 .trans
    O / l (0 for a row without a visible key or i ≥ L_b); rows < N stored;
    lse = m + log l (−inf for those rows)
    ```

    D > 128: Q is staged in shared memory (cp.async) and loaded per 16-dim
    step by ldmatrix in a rolled loop; two warps per 16 rows each
    accumulate half of O's columns (256 threads); the tiles are dynamic
    shared memory. tf32: nvvm.mma.sync m16n8k8 with every operand rounded
    by nvvm.convert.float.to.tf32 (rna); K and V read by loads from shared
    rows of D + 4 floats; key tiles of 32 (16 for D > 64); P's accumulator
    registers are the A operand with the keys of P V permuted (lane (g, t)'s
    keys 2t, 2t + 1 as A's columns t, t + 4, V's rows read to match).

    The result buffer is allocated on the host side of the launch
    (attn-map-to-gpu moves it to the device). attn-emulate-gpu runs the
    kernels on the host.
  }];
  let options = [
    Option<"precision", "precision", "::mlir::attn::GpuPrecision",
           /*default=*/"::mlir::attn::GpuPrecision::F32",
           "How terms over f32 inputs multiply",
           "::mlir::attn::gpuPrecisionValues()">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::gpu::GPUDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::NVVM::NVVMDialect", "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def AttnEmulateGPU : Pass<"attn-emulate-gpu", "::mlir::ModuleOp"> {
  let summary = "Run the output of attn-map-to-gpu on the host, for testing";
  let description = [{
    Turns every `gpu.launch` into host code that computes what the GPU
    would, so that GPU kernels are tested on machines without a GPU
    (`attnc run --target=nvptx --emulate-gpu`). Workgroup memory becomes a
    host allocation per launch and `gpu.alloc`/`gpu.dealloc` become
    `memref.alloc`/`memref.dealloc`; the blocks run one after the other.

    1. A launch made by attn-map-to-gpu (no warp instructions) becomes a
       loop over the blocks and, inside it, a loop over the threads around
       each barrier-free piece of work (each loop that attn-map-to-gpu
       strided by the thread id). Barriers then hold by construction, so the
       result is exact for race-free kernels. Any other use of the thread id
       is an error.
    2. A launch that uses warp instructions (`nvvm.mma.sync` m16n8k16
       f16/bf16 and m16n8k8 tf32 with f32 accumulators, `nvvm.ldmatrix`
       m8n8 b16, `nvvm.shfl.sync`, `nvvm.cp.async.shared.global` and its
       commit/wait) runs each block as an OpenMP parallel region of one host
       thread per GPU thread: `gpu.barrier` becomes `omp.barrier` and each
       warp instruction a call into attn's warp runtime
       (attn/Emulation/WarpRuntime.h), which waits for the warp's 32 lanes
       and applies the instruction's PTX definition to all their registers.
       Blocks must be whole warps; any other NVVM op is an error.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect", "::mlir::func::FuncDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::omp::OpenMPDialect"
  ];
}

#endif // ATTN_CODEGEN_PASSES_TD
