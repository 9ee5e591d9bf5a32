"""Each kernel runs with its own `threads`, also in a process where another
OpenMP runtime (GNU libgomp, as PyTorch loads it) was loaded first and
globally: the kernels must set the thread count of the libomp they run on,
not whichever omp_set_num_threads the process finds first. Reads libomp's
count after each call (nothing is timed)."""
import ctypes
import os
import sys

gomp = sys.argv[1]
libomp = sys.argv[2]
examples = sys.argv[3]
if gomp != "none":
    ctypes.CDLL(gomp, mode=ctypes.RTLD_GLOBAL)

import numpy as np  # noqa: E402

import attn  # noqa: E402

spec = open(os.path.join(examples, "softmax.attn")).read()
kernels = {t: attn.compile(spec, threads=t, cache_dir=False) for t in (1, 2, 3)}
omp = ctypes.CDLL(libomp)
inputs = attn.random_inputs(kernels[1], sizes={"N": 70}, seed=1)
for t in (2, 1, 3, 1):
    kernels[t](**inputs)
    print("threads=%d: libomp runs %d" % (t, omp.omp_get_max_threads()))
