#!/bin/sh
# bench/all.sh - the path from samples to reports in one run, on the
# big workloads and the test programs (make, g++, dispatch, collide;
# record cost and call paths also on the Go and coroutine programs):
# what recording costs against perf record (bench/record.sh), the first
# and every later report against perf script and perf report
# (bench/exports.sh), and the k = 3 overlap with perf --call-graph
# dwarf as a ratio to two perf runs' (bench/accuracy.sh).
#
# Usage: bench/all.sh [BUILDDIR]   (default: build, made by ./demo.sh)
# Environment: REPS (default 3), passed to each.
set -eu
dir=$(dirname "$0")
export REPS=${REPS:-3}
echo "== recording (bench/record.sh)"
WORKLOADS="make g++ clang++ go coro dispatch collide" sh "$dir/record.sh" "$@"
echo
echo "== reports and exports (bench/exports.sh)"
WORKLOADS="make g++ dispatch collide" sh "$dir/exports.sh" "$@"
echo
echo "== call paths against perf --call-graph dwarf (bench/accuracy.sh)"
WORKLOADS="make g++ clang++ go go-pprof coro dispatch collide" sh "$dir/accuracy.sh" "$@"
