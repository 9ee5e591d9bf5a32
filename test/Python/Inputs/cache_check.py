"""The compile cache, seen from Python: every compile runs in a process of
its own (the cache is meant to survive processes), which prints whether the
kernel came from the cache, the compile time and a digest of its output on
fixed inputs.

usage: cache_check.py EXAMPLES_DIR WORK_DIR SLOW_EXAMPLE
"""

import hashlib
import json
import os
import subprocess
import sys
import time


def child(argv):
    """--child SPEC_OR_@TEXTFILE CACHE [JSON options]: one compile."""
    import numpy as np

    import attn

    spec, cache = argv[0], argv[1]
    options = json.loads(argv[2]) if len(argv) > 2 else {}
    if spec.startswith("@"):  # spec text read from a file
        with open(spec[1:]) as f:
            spec = f.read()
    if cache == "-":
        cache = None
    elif cache == "off":
        cache = False
    start = time.perf_counter()
    kernel = attn.compile(spec, cache_dir=cache, **options)
    seconds = time.perf_counter() - start
    sizes = {name: 7 for name in kernel.sizes}
    out = kernel(**attn.random_inputs(kernel, sizes, seed=0))
    print(
        json.dumps(
            {
                "from_cache": kernel.from_cache,
                "seconds": seconds,
                "digest": hashlib.sha256(np.ascontiguousarray(out).tobytes()).hexdigest(),
            }
        )
    )


def command(spec, cache, **options):
    return [sys.executable, os.path.abspath(__file__), "--child", spec, cache, json.dumps(options)]


def run(spec, cache, env=None, **options):
    result = subprocess.run(
        command(spec, cache, **options),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        universal_newlines=True,
        env=env,
    )
    if result.returncode != 0:
        raise SystemExit(
            "child failed (%d): %s\n%s"
            % (result.returncode, " ".join(command(spec, cache, **options)), result.stderr)
        )
    return json.loads(result.stdout.splitlines()[-1])


def entries(directory):
    count = 0
    for _, _, files in os.walk(directory):
        count += len(files)
    return count


def main():
    examples, work, slow = sys.argv[1], sys.argv[2], sys.argv[3]
    softmax = os.path.join(examples, "softmax.attn")
    cache = os.path.join(work, "cache")

    first = run(softmax, cache)
    print("first: from_cache=%s" % first["from_cache"])
    print("cache entries after the first compile: %s" % ("some" if entries(cache) else "none"))
    second = run(softmax, cache)
    print("second: from_cache=%s" % second["from_cache"])
    print("second: same output bit for bit %s" % (first["digest"] == second["digest"]))
    print("time softmax: first %.2f s, cached %.3f s" % (first["seconds"], second["seconds"]))

    # What must miss: other sizes, another forced order, other spec text.
    sized = run(softmax, cache, sizes={"N": 7})
    print("sizes N=7: from_cache=%s" % sized["from_cache"])
    print("sizes N=7 again: from_cache=%s" % run(softmax, cache, sizes={"N": 7})["from_cache"])
    print("info: sizes N=7: same output as dynamic N %s" % (sized["digest"] == first["digest"]))
    print("force_order=qk_first: from_cache=%s" % run(softmax, cache, force_order="qk_first")["from_cache"])
    with open(softmax) as f:
        text = f.read()
    text_file = os.path.join(work, "softmax-text.attn")
    with open(text_file, "w") as f:
        f.write(text + "# changed\n")
    changed = run("@" + text_file, cache)
    print("changed text: from_cache=%s" % changed["from_cache"])
    print("changed text again: from_cache=%s" % run("@" + text_file, cache)["from_cache"])
    # Not asserted: the same text given as a string, other thread counts.
    with open(text_file, "w") as f:
        f.write(text)
    print("info: same text as a string: from_cache=%s" % run("@" + text_file, cache)["from_cache"])
    print("info: threads=1: from_cache=%s" % run(softmax, cache, threads=1)["from_cache"])

    # cache_dir=False: never from the cache, nothing written.
    off = [run(softmax, "off") for _ in range(2)]
    print("cache off: from_cache=%s,%s" % (off[0]["from_cache"], off[1]["from_cache"]))

    # cache_dir=None: the C library's default, which $ATTN_CACHE_DIR overrides.
    env_cache = os.path.join(work, "env-cache")
    env = dict(os.environ, ATTN_CACHE_DIR=env_cache)
    a, b = run(softmax, "-", env=env), run(softmax, "-", env=env)
    print("ATTN_CACHE_DIR: from_cache=%s,%s, entries %s" % (a["from_cache"], b["from_cache"], "some" if entries(env_cache) else "none"))

    # The slowest example: first and cached compile times.
    slow_spec = os.path.join(examples, slow + ".attn")
    slow_first = run(slow_spec, cache)
    slow_second = run(slow_spec, cache)
    print("%s: from_cache=%s,%s, same output %s" % (slow, slow_first["from_cache"], slow_second["from_cache"], slow_first["digest"] == slow_second["digest"]))
    print("time %s: first %.2f s, cached %.3f s" % (slow, slow_first["seconds"], slow_second["seconds"]))

    # Two processes compiling the same spec at once into an empty cache.
    fresh = os.path.join(work, "cache-concurrent")
    procs = [
        subprocess.Popen(
            command(softmax, fresh),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            universal_newlines=True,
        )
        for _ in range(2)
    ]
    results = []
    for p in procs:
        text, errors = p.communicate()
        if p.returncode != 0:
            sys.stderr.write("concurrent child failed (%d):\n%s\n" % (p.returncode, errors))
        results.append((p.returncode, json.loads(text.splitlines()[-1]) if p.returncode == 0 and text.strip() else None))
    ok = all(rc == 0 and r is not None for rc, r in results)
    print("concurrent: both succeeded %s" % ok)
    if ok:
        print("concurrent: same output %s, as the first process %s" % (results[0][1]["digest"] == results[1][1]["digest"], results[0][1]["digest"] == first["digest"]))
        print("info: concurrent from_cache=%s,%s" % (results[0][1]["from_cache"], results[1][1]["from_cache"]))
    after = run(softmax, fresh)
    print("after concurrent: from_cache=%s, same output %s" % (after["from_cache"], after["digest"] == first["digest"]))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2:])
    else:
        main()
