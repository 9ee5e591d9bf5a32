//===- WarpRuntime.h - warp instructions on host threads --------*- C++ -*-===//
//
// attn-emulate-gpu runs a launch whose kernel uses warp instructions
// (nvvm.mma.sync, nvvm.ldmatrix, nvvm.shfl.sync, nvvm.cp.async) with one
// host thread per GPU thread (an OpenMP parallel region per block), and
// replaces each warp instruction by a call to the functions below. A
// collective call waits until the 32 lanes of its warp have made it, then
// applies the instruction's PTX definition (WarpInstructions.h) to all
// lanes' registers at once and hands each lane its result: the kernel's
// fragment layouts are checked against the ISA's, not against themselves.
//
// Blocks run one after the other, so one set of per-warp exchange slots
// serves every launch of the process (a mutex keeps concurrent callers of
// emulated kernels apart: attn_emu_block_begin / attn_emu_block_end).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_EMULATION_WARPRUNTIME_H
#define ATTN_EMULATION_WARPRUNTIME_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

extern "C" {

/// Before and after the threads of one block: \p threads must be a multiple
/// of 32 (at most 1024). attn_emu_block_end returns 0, or 1 when a warp
/// instruction failed (lanes that diverged, a block of another size); the
/// message is on stderr.
void attn_emu_block_begin(int32_t threads);
int32_t attn_emu_block_end(void);

/// mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32 for the
/// calling thread \p thread (its lane is thread % 32): \p bf16 selects the
/// input type; d receives this lane's 4 accumulator registers.
void attn_emu_mma_m16n8k16(int32_t thread, int32_t bf16, uint32_t a0,
                           uint32_t a1, uint32_t a2, uint32_t a3, uint32_t b0,
                           uint32_t b1, float c0, float c1, float c2, float c3,
                           float *d);
/// mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32.
void attn_emu_mma_m16n8k8_tf32(int32_t thread, uint32_t a0, uint32_t a1,
                               uint32_t a2, uint32_t a3, uint32_t b0,
                               uint32_t b1, float c0, float c1, float c2,
                               float c3, float *d);
/// cvt.rna.tf32.f32 (per thread).
uint32_t attn_emu_cvt_rna_tf32(float value);
/// ldmatrix.sync.aligned.m8n8.x{count}[.trans].shared.b16 from the row
/// address \p row of this lane; d receives \p count registers.
void attn_emu_ldmatrix(int32_t thread, int32_t count, int32_t transpose,
                       const void *row, uint32_t *d);
/// shfl.sync.{up=0,down=1,bfly=2,idx=3}.b32; *valid (when not null)
/// receives the predicate.
uint32_t attn_emu_shfl(int32_t thread, int32_t mode, uint32_t memberMask,
                       uint32_t value, uint32_t offset, uint32_t clampAndMask,
                       int32_t *valid);
/// cp.async.{ca,cg}.shared.global (one thread; complete at once).
void attn_emu_cp_async(void *shared, const void *global, int32_t cpSize,
                       int32_t srcSize);
}

namespace attn {
namespace emulation {
/// The functions above by name, for a JIT that links emulated kernels.
std::vector<std::pair<std::string, void *>> warpRuntimeSymbols();
} // namespace emulation
} // namespace attn

#endif // ATTN_EMULATION_WARPRUNTIME_H
