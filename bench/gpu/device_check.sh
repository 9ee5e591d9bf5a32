#!/usr/bin/env bash
#===- bench/gpu/device_check.sh - attn on an NVIDIA GPU, checked and timed ===#
#
# Run on the GPU machine, from the repository root, after
# bench/gpu/prepare.sh has made bench/gpu/artifacts/ (where attnc is built)
# and that folder was carried over:
#
#   bash bench/gpu/device_check.sh [--results DIR] [--skip-check]
#        [--skip-bench] [--dims "64 128"] [--sizes "1024 4096 16384"]
#        [--no-flex] [--budget SECONDS]
#
# Needs CMake, a C++ compiler and the NVIDIA driver; PyTorch (with Triton
# for FlexAttention) for the peers; no LLVM. Steps, each under `timeout`,
# all within --budget seconds (default 460, under 8 minutes):
#
#   1. preflight: the artifacts, nvidia-smi, cmake, a compiler, PyTorch;
#   2. build build-gpu/attn-gpu-runner (cmake -S bench/gpu, Ninja or make);
#   3. check: every compiled spec on the GPU against the reference
#      evaluator, examples at N = 1, 7, 100, 1024 (every dynamic dim; a
#      static spec at its own sizes), benchmark specs at 1, 7, 100;
#   4. bench: softmax, causal softmax, elu1 linear and causal elu1 linear at
#      f32, softmax over bf16 and f16 (tensor cores) and over f32 in tf32
#      (--gpu-precision=tf32), at
#      B = 1, H = 16, D in --dims, N in --sizes (checked against the
#      reference at N <= 1024), then bench/gpu/peers.py times PyTorch on the
#      same inputs and compares attn's outputs with the peers';
#   5. bench/gpu/table.py prints the tables.
#
# Exit status 0 when every check passed and every benchmark output agrees
# with its peer; 1 otherwise, or at once when something is missing. JSON
# lines, logs and the tables are in $ATTN_GPU_WORK (default
# /tmp/attn-gpu-check) and copied to --results DIR.
#
#===----------------------------------------------------------------------===#

set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
ROOT=$PWD
ARTIFACTS=bench/gpu/artifacts
BUILD=${ATTN_GPU_BUILD_DIR:-build-gpu}
WORK=${ATTN_GPU_WORK:-/tmp/attn-gpu-check}
RUNNER=$BUILD/attn-gpu-runner
BUDGET=460
RESULTS=
DO_CHECK=1
DO_BENCH=1
DIMS="64 128"
SIZES="1024 4096 16384"
CHECK_SWEEP=1,7,100,1024
BENCH_CHECK_SWEEP=1,7,100
REPEAT=10
FLEX_FLAG=

usage() { sed -n '3,31p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
while (($#)); do
  case $1 in
  --results) RESULTS=$2; shift 2 ;;
  --skip-check) DO_CHECK=0; shift ;;
  --skip-bench) DO_BENCH=0; shift ;;
  --dims) DIMS=$2; shift 2 ;;
  --sizes) SIZES=$2; shift 2 ;;
  --no-flex) FLEX_FLAG=--no-flex; shift ;;
  --budget) BUDGET=$2; shift 2 ;;
  -h | --help) usage; exit 0 ;;
  *) echo "device_check: error: unknown argument '$1' (see --help)" >&2; exit 1 ;;
  esac
done

START=$SECONDS
say() { printf '[%3ds] %s\n' $((SECONDS - START)) "$*"; }
die() { echo "device_check: error: $*" >&2; exit 1; }
remaining() { echo $((BUDGET - (SECONDS - START))); }
# limit WANT: WANT seconds, or what is left of the budget if less (at least
# 1: `timeout 0` would mean no limit at all).
limit() {
  local left
  left=$(remaining)
  ((left < 1)) && left=1
  ((left < $1)) && echo "$left" || echo "$1"
}

#--- 1. Preflight: say everything that is missing at once ---------------------

problems=()
if [[ ! -f $ARTIFACTS/registry.cpp ]] || ! compgen -G "$ARTIFACTS/obj/*.o" >/dev/null; then
  problems+=("$ARTIFACTS/ is missing or incomplete (no registry.cpp or obj/*.o): run 'bash bench/gpu/prepare.sh' where attnc is built and carry bench/gpu/artifacts to this machine (it is git-ignored)")
fi
GPU_INFO=
if command -v nvidia-smi >/dev/null; then
  if ! GPU_INFO=$(timeout 30 nvidia-smi --query-gpu=name,driver_version,memory.total \
                   --format=csv,noheader 2>&1) || [[ -z $GPU_INFO ]]; then
    problems+=("nvidia-smi sees no usable GPU: ${GPU_INFO:-no output}")
  fi
elif ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'; then
  # A container may have the driver library without the tool; the runner's
  # `device` step after the build is the real test.
  GPU_INFO="unknown (no nvidia-smi, but libcuda.so.1 is installed)"
else
  problems+=("no NVIDIA driver on this machine (neither nvidia-smi nor libcuda.so.1): the device check needs an NVIDIA GPU")
fi
command -v cmake >/dev/null || problems+=("no cmake")
command -v c++ >/dev/null || command -v g++ >/dev/null ||
  problems+=("no C++ compiler (c++ or g++)")
if ((${#problems[@]})); then
  for problem in "${problems[@]}"; do
    echo "device_check: error: $problem" >&2
  done
  exit 1
fi

PYTHON=
TORCH_INFO="no python imports torch"
for candidate in python3 python /usr/bin/python3; do
  command -v "$candidate" >/dev/null || continue
  if info=$(timeout 60 "$candidate" -c 'import sys, torch
print(torch.__version__, "CUDA", torch.version.cuda)
sys.exit(0 if torch.cuda.is_available() else 3)' 2>/dev/null); then
    PYTHON=$candidate
    TORCH_INFO=$info
    break
  elif [[ -n $info ]]; then
    TORCH_INFO="PyTorch $info in $candidate sees no GPU"
  fi
done
TABLE_PYTHON=$PYTHON
[[ -n $TABLE_PYTHON ]] || TABLE_PYTHON=$(command -v python3 || command -v python || true)

say "GPU: $GPU_INFO"
sed -n 's/^\(date\|commit\|chip\) /artifacts: \1 /p' $ARTIFACTS/MANIFEST 2>/dev/null
if grep -q '^failed ' $ARTIFACTS/MANIFEST 2>/dev/null; then
  say "not compiled by prepare.sh (not checked): $(sed -n 's/^failed //p' $ARTIFACTS/MANIFEST | tr '\n' ' ')"
fi
if [[ -f $ARTIFACTS/PTXAS ]]; then
  say "ptxas -v of every kernel (made by prepare.sh for the chip above):"
  cat $ARTIFACTS/PTXAS
fi
if [[ -n $PYTHON ]]; then
  say "PyTorch: $TORCH_INFO ($PYTHON)"
else
  say "warning: $TORCH_INFO: attn is timed without the PyTorch peers"
fi

rm -rf "$WORK"
mkdir -p "$WORK/check" "$WORK/bench"

#--- 2. Build -----------------------------------------------------------------

if command -v ninja >/dev/null; then GENERATOR=Ninja; else GENERATOR="Unix Makefiles"; fi
say "building $RUNNER ($GENERATOR)"
if [[ -f $BUILD/CMakeCache.txt ]] && ! grep -q "CMAKE_GENERATOR:INTERNAL=$GENERATOR" "$BUILD/CMakeCache.txt"; then
  rm -rf "$BUILD"
fi
if ! timeout "$(limit 120)" cmake -S bench/gpu -B "$BUILD" -G "$GENERATOR" \
      -DCMAKE_BUILD_TYPE=Release >"$WORK/build.log" 2>&1 ||
   ! timeout "$(limit 300)" cmake --build "$BUILD" -j "$(nproc)" >>"$WORK/build.log" 2>&1; then
  tail -n 30 "$WORK/build.log" >&2
  die "the build failed (log: $WORK/build.log)"
fi
say "built in $((SECONDS - START))s"

if ! DEVICE=$(timeout "$(limit 60)" "$RUNNER" device 2>&1); then
  echo "$DEVICE" >&2
  die "attn-gpu-runner cannot use the GPU"
fi
say "$DEVICE"

#--- 3. Check against the reference evaluator ---------------------------------

status=0
if ((DO_CHECK)); then
  say "checking every compiled spec against the reference evaluator"
  # Four at a time: the reference evaluator is single-threaded CPU work.
  check_one() {
    local spec=$1 sweep=$2 name
    name=$(basename "$spec" .attn)
    local precision=()
    [[ $name == *_tf32_* ]] && precision=(--gpu-precision tf32)
    timeout 150 "$RUNNER" check "$spec" --sweep "$sweep" "${precision[@]}" \
      >"$WORK/check/$name.jsonl" 2>"$WORK/check/$name.err"
    echo $? >"$WORK/check/$name.rc"
  }
  export -f check_one
  export RUNNER WORK
  {
    for spec in $ARTIFACTS/specs/examples/*.attn; do echo "$spec $CHECK_SWEEP"; done
    for spec in $ARTIFACTS/specs/bench/*.attn; do echo "$spec $BENCH_CHECK_SWEEP"; done
  } | timeout "$(limit 200)" xargs -P 4 -L 1 bash -c 'check_one "$0" "$1"'
  for rc_file in "$WORK"/check/*.rc; do
    name=$(basename "$rc_file" .rc)
    if [[ $(cat "$rc_file") != 0 ]]; then
      status=1
      if ! grep -q '"pass"' "$WORK/check/$name.jsonl"; then
        # No JSON line says why: show what the runner said.
        echo "device_check: $name: attn-gpu-runner failed:" >&2
        sed 's/^/  /' "$WORK/check/$name.err" | head -n 20 >&2
      fi
    fi
  done
  cat "$WORK"/check/*.jsonl >"$WORK/check.jsonl" 2>/dev/null
  checked=$(ls "$WORK"/check/*.rc 2>/dev/null | wc -l)
  specs=$(ls $ARTIFACTS/specs/*/*.attn 2>/dev/null | wc -l)
  if ((checked < specs)); then
    status=1
    say "warning: only $checked of $specs specs were checked (out of time)"
  fi
fi

#--- 4. Bench -----------------------------------------------------------------

if ((DO_BENCH)); then
  say "timing attn (B=1, H=16, D in {$DIMS}, N in {$SIZES})"
  for d in $DIMS; do
    for n in $SIZES; do
      dir=$WORK/bench/d${d}_n$n
      mkdir -p "$dir"
      echo "{\"D\": $d, \"N\": $n, \"B\": 1, \"H\": 16}" >"$dir/meta.json"
      inputs=(--save-inputs "$dir")
      for variant in softmax softmax_causal elu1 elu1_causal softmax_bf16 softmax_f16 softmax_tf32; do
        spec=$ARTIFACTS/specs/bench/bench_${variant}_d$d.attn
        if [[ ! -f $spec ]]; then
          say "  skipped $variant D=$d N=$n: not compiled"
          continue
        fi
        if (($(remaining) < 60)); then
          say "  skipped $variant D=$d N=$n: out of time"
          continue
        fi
        extra=()
        ((n <= 1024)) && extra=(--check)
        [[ $variant == *_tf32 ]] && extra+=(--gpu-precision tf32)
        line=$(timeout "$(limit 90)" "$RUNNER" bench "$spec" --set "N=$n" \
          --repeat $REPEAT --max-seconds 3 "${inputs[@]}" "${extra[@]}" \
          --save-output "$dir/attn_$variant.npy" 2>>"$WORK/bench.err")
        rc=$?
        [[ -n $line ]] && echo "$line" >>"$WORK/bench.jsonl"
        if ((rc != 0)); then
          status=1
          say "  $variant D=$d N=$n: attn-gpu-runner failed (status $rc):"
          tail -n 3 "$WORK/bench.err" | sed 's/^/    /'
        else
          say "  $variant D=$d N=$n: $(sed -n 's/.*"ms": \([^,]*\),.*"runs": \([0-9]*\).*/\1 ms (median of \2)/p' <<<"$line")"
        fi
        # The first variant wrote the inputs; the others read them.
        [[ -f $dir/q.npy ]] && inputs=(--inputs "$dir")
      done
    done
  done

  if [[ -n $PYTHON ]]; then
    left=$(remaining)
    if ((left > 30)); then
      say "timing the PyTorch peers (${left}s left)"
      timeout -k 10 $((left - 10)) "$PYTHON" bench/gpu/peers.py "$WORK/bench" \
        --repeat $REPEAT --deadline $((left - 25)) $FLEX_FLAG \
        >"$WORK/peers.jsonl" 2> >(tee "$WORK/peers.err" >&2)
      rc=$?
      ((rc == 124 || rc == 137)) && say "warning: peers.py ran out of time"
    else
      say "skipped the PyTorch peers: out of time"
    fi
  fi
fi

#--- 5. Tables ----------------------------------------------------------------

echo
if [[ -n $TABLE_PYTHON ]]; then
  "$TABLE_PYTHON" bench/gpu/table.py --checks "$WORK/check.jsonl" \
    --bench "$WORK/bench.jsonl" --peers "$WORK/peers.jsonl" --repeat $REPEAT |
    tee "$WORK/table.txt"
  ((PIPESTATUS[0] == 0)) || status=1
else
  echo "device_check: no python3 for bench/gpu/table.py; the JSON lines are in $WORK"
  cat "$WORK"/*.jsonl
  grep -q '"pass": false' "$WORK"/*.jsonl && status=1
fi

if [[ -n $RESULTS ]]; then
  mkdir -p "$RESULTS"
  cp "$WORK"/*.jsonl "$WORK"/*.txt "$WORK"/*.log "$WORK"/*.err "$RESULTS"/ 2>/dev/null
  cp -r "$WORK/check" "$RESULTS/" 2>/dev/null
fi
echo
say "device check $( ((status == 0)) && echo PASSED || echo FAILED) in $((SECONDS - START))s"
exit $status
