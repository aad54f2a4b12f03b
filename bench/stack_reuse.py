#!/usr/bin/env python3
"""bench/stack_reuse.py - how much of a sample's stack an earlier stack
of the same thread already holds: the evidence a learned copy gives the
samples after it (docs/benchmarks.md, issue 53, what the next step
needs).

Reads `perf script -F tid,ip,sym --no-inline` of a perf record with
--call-graph dwarf; keeps, per thread, the stack of every Nth sample
(N = 1: the sample just before; N = 40 at 1 kHz: what a 25 Hz learner
copies) and, for every later sample, counts its frames from the leaf
that the kept stack does not share from the root (by return address).
Prints the share of samples with at most U such frames, and the share
of samples at most U deep, for U = 0..25.

Usage: perf script -i perf.data -F tid,ip,sym --no-inline > s.txt
       python3 bench/stack_reuse.py s.txt N
"""
import collections
import sys

samples, cur = [], None
for line in open(sys.argv[1], errors='replace'):
    if not line.strip():
        if cur:
            samples.append(cur)
        cur = None
    elif not line.startswith('\t'):
        cur = (line.split()[0], [])
    elif cur is not None:
        cur[1].append(line.split()[0])
if cur:
    samples.append(cur)
every = int(sys.argv[2])
kept, seen = {}, collections.Counter()
n, uncovered, depth = 0, collections.Counter(), collections.Counter()
for tid, frames in samples:
    seen[tid] += 1
    prev = kept.get(tid)
    if seen[tid] % every == 0:
        kept[tid] = frames
    if prev is None or len(frames) < 4:
        continue
    n += 1
    root, proot = frames[::-1], prev[::-1]
    c = 0
    while c < len(root) and c < len(proot) and root[c] == proot[c]:
        c += 1
    uncovered[min(len(root) - c, 25)] += 1
    depth[min(len(root), 25)] += 1
print('samples', n)
a = d = 0
for u in range(26):
    a += uncovered[u]
    d += depth[u]
    print(u, 'uncovered<=%.3f' % (a / max(n, 1)), 'depth<=%.3f' % (d / max(n, 1)))
