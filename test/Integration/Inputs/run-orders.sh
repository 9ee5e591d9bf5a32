#!/bin/sh
# usage: run-orders.sh ATTNC PYTHON DIR SPEC ORDERS [attnc run options...]
#
# Runs SPEC with the reference evaluator (`attnc run --reference --save
# DIR/ref`), then compiled once per order in ORDERS (comma-separated: auto,
# qk_first, kv_first; auto means no --force-order) on the same inputs
# (--inputs DIR/ref, and the same options) with --check and --save DIR/ORDER, and compares each
# DIR/ORDER/out.npy with the reference output using compare.py (global and
# row-wise tolerance $TOL, default 1e-4). Prints one line per order,
# `NAME ORDER: agree: ...` (NAME is the spec file's name without .attn);
# exits 1 at the first failure. $THREADS (default 2) is passed as --threads,
# $ATTN_TEST_CPU (default native) as --cpu.
set -e
attnc=$1 python=$2 dir=$3 spec=$4 orders=$5
shift 5
here=$(dirname "$0")
name=$(basename "$spec" .attn)
rm -rf "$dir"
"$attnc" run "$spec" "$@" --reference --save "$dir/ref" > /dev/null
for order in $(echo "$orders" | tr ',' ' '); do
  if [ "$order" = auto ]; then force=""; else force="--force-order=$order"; fi
  "$attnc" run "$spec" "$@" --inputs "$dir/ref" --threads "${THREADS:-2}" $force \
    --cpu="${ATTN_TEST_CPU:-native}" \
    --check --save "$dir/$order" > "$dir/$order.log"
  "$python" "$here/compare.py" "$dir/$order/out.npy" "$dir/ref/out.npy" \
    --tol "${TOL:-1e-4}" --label "$name $order"
done
