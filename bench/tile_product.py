#!/usr/bin/env python3
"""Tile-product microbenchmark: GFLOP/s of the code attn-tile-and-vectorize
generates for one tile product, against the probed FMA peak of one core.

Lowers a linalg tile product C += A B (qk-first's S = Q_t K_t^T and
acc += P V_t, the chunked and kv-first query products) and C += A^T B
(kv-first's state phi(K_t)^T V_t) through attn-opt --attn-lower-to-llvm
for each --cpu, compiles it with clang-22 and times it in a C loop (the
tiles stay in L1, as they do in the attention loops). Needs a build
(build/bin/attn-opt) and the LLVM 22 tools; installs nothing.

  /usr/bin/python3 bench/tile_product.py [--cpu x86-64-v3,x86-64-v4] [--size 64] [--rows 96]
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cpu_vs_torch as common  # noqa: E402  (probe, CPU model and flags)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LLVM_BIN = "/usr/lib/llvm-22/bin"

PRODUCT = """
#a = affine_map<(i, j, k) -> ({a})>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>
// reps products into one accumulator: the result's one copy and allocation
// (the function returns a new tensor) are paid once, not per product.
func.func @product(%A: tensor<{ashape}xf32>, %B: tensor<{n}x{n}xf32>, %C: tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32> {{
  %reps = arith.constant {reps} : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %out = scf.for %i = %c0 to %reps step %c1 iter_args(%acc = %C) -> tensor<{m}x{n}xf32> {{
    %r = linalg.generic {{indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}}
        ins(%A, %B : tensor<{ashape}xf32>, tensor<{n}x{n}xf32>) outs(%acc : tensor<{m}x{n}xf32>) {{
    ^bb0(%x: f32, %y: f32, %z: f32):
      %m = arith.mulf %x, %y : f32
      %s = arith.addf %z, %m : f32
      linalg.yield %s : f32
    }} -> tensor<{m}x{n}xf32>
    scf.yield %r : tensor<{m}x{n}xf32>
  }}
  return %out : tensor<{m}x{n}xf32>
}}
"""

HARNESS = r"""
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
typedef struct { float *a, *al; long off, s0, s1, st0, st1; } D2;
void _mlir_ciface_product(D2 *, D2 *, D2 *, D2 *);
static D2 make(long rows, long cols) {
  D2 d; d.a = d.al = aligned_alloc(64, rows * cols * 4);
  for (long i = 0; i < rows * cols; i++) d.a[i] = (i % 7) * 0.1f;
  d.off = 0; d.s0 = rows; d.s1 = cols; d.st0 = cols; d.st1 = 1; return d;
}
static double now(void) {
  struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}
/* argv: m n reps transposed (A is n x m for A^T B) */
int main(int argc, char **argv) {
  long m = atol(argv[1]), n = atol(argv[2]), reps = atol(argv[3]);
  int transposed = atoi(argv[4]);
  D2 a = transposed ? make(n, m) : make(m, n), b = make(n, n), c = make(m, n),
     o = make(m, n);
  double best = 1e30;
  for (int round = 0; round < 7; round++) {
    double s = now();
    _mlir_ciface_product(&a, &b, &c, &o);
    double t = now() - s;
    if (t < best) best = t;
  }
  printf("%.2f\n", 2.0 * m * n * n * reps / best / 1e9);
  return 0;
}
"""


def run(cmd, **kw):
    result = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if result.returncode:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), result.stderr))
    return result.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tile-options", default="",
                        help="attn-tile-and-vectorize options to try, e.g. 'rows=8 cols=32 reduction-tile=4'")
    parser.add_argument("--cpu", default="", help="CPUs (default: x86-64-v3, and x86-64-v4 on AVX-512 hosts)")
    parser.add_argument("--size", type=int, default=64, help="tile size n of the m x n x n product")
    parser.add_argument("--rows", type=int, default=0,
                        help="rows m of A and C (default: n); e.g. 60 or 96 to see a register tile "
                             "of 6 rows without (or with) a remainder")
    args = parser.parse_args()
    flags = common.cpu_flags()
    has512 = common.has_avx512(flags)
    cpus = common.cpu_targets(args.cpu, flags)
    attn_opt = os.path.join(REPO, "build", "bin", "attn-opt")
    clang = shutil.which("clang-22") or os.path.join(LLVM_BIN, "clang")
    rows = args.rows or args.size
    print("# tile product C += A B / A^T B, %dx%dx%d f32, one core; cpu: %s, %d cores"
          % (rows, args.size, args.size, common.cpu_model(), os.cpu_count()))
    peaks = {256: common.probe_fma_peak(256)}
    if has512:
        peaks[512] = common.probe_fma_peak(512)
    for width, peak in peaks.items():
        print("# FMA peak (probe, %d-bit, one core): %.1f GFLOP/s" % (width, peak or 0))
    print("| cpu | product | GF/s | % of peak |")
    print("|---|---|---|---|")
    reps = max(1, int(2e9 / (2.0 * rows * args.size ** 2)))
    with tempfile.TemporaryDirectory() as tmp:
        harness = os.path.join(tmp, "h.c")
        with open(harness, "w") as f:
            f.write(HARNESS)
        for cpu in cpus:
            width = 512 if cpu == "x86-64-v4" else 256
            for name, amap in (("A B", "i, k"), ("A^T B", "k, i")):
                mlir = os.path.join(tmp, "p.mlir")
                with open(mlir, "w") as f:
                    transposed = amap == "k, i"
                    ashape = ("%dx%d" % (args.size, rows)) if transposed else ("%dx%d" % (rows, args.size))
                    f.write(PRODUCT.format(a=amap, ashape=ashape, m=rows, n=args.size, reps=reps))
                # --tile-options tiles and vectorizes first; the pipeline's own pass
                # then finds nothing left to tile.
                first = ("func.func(attn-tile-and-vectorize{cpu=%s %s})," % (cpu, args.tile_options)
                         if args.tile_options else "")
                llvm_dialect = run([attn_opt, mlir, "--pass-pipeline=builtin.module(%sattn-lower-to-llvm{parallel=false vectorize cpu=%s})" % (first, cpu)])
                ll = os.path.join(tmp, "p.ll")
                run([os.path.join(LLVM_BIN, "mlir-translate"), "--mlir-to-llvmir", "-o", ll], input=llvm_dialect)
                obj, exe = os.path.join(tmp, "p.o"), os.path.join(tmp, "h")
                # attnc puts the CPU on every function; here clang needs it.
                run([clang, "-O3", "-march=" + cpu, "-Wno-override-module", "-c", ll, "-o", obj])
                run([clang, "-O2", harness, obj, "-o", exe])
                gf = float(run([exe, str(rows), str(args.size), str(reps), str(int(transposed))]))
                peak = peaks.get(width)
                print("| %s | %s | %.1f | %s |" % (cpu, name, gf, "%.0f" % (100 * gf / peak) if peak else "?"),
                      flush=True)


if __name__ == "__main__":
    main()
