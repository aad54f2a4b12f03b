#!/usr/bin/env python3
"""synth.py DB PATHS SAMPLES [SEED] - a synthetic profile for bench/report.sh.

Adds to DB (created by icppd, so the schema is icppd's own) a program
whose training path map holds PATHS paths (a random tree over 2000
functions, frames of 16..320 bytes), and a measurement run of SAMPLES
samples spread over the CIDs of those paths with Zipf-like weights, plus
1 % on CIDs training never saw (searched or unknown).  Prints the run id.
"""
import random
import sqlite3
import sys


def main():
    db, paths, samples = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rnd = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 1)
    con = sqlite3.connect(db)
    cur = con.cursor()
    cur.execute("INSERT INTO modules (path, build_id) VALUES ('/bench/synthetic', 'synthetic')")
    mod = cur.lastrowid
    fbase = cur.execute("SELECT COALESCE(MAX(id), 0) FROM functions").fetchone()[0]
    cur.executemany("INSERT INTO functions VALUES (?, ?, ?, ?, ?)",
                    [(fbase + i, mod, 0x1000 + 16 * i, "f%d" % i, "f%d" % i)
                     for i in range(1, 2001)])
    cur.execute("INSERT INTO path_maps (program_id, run_id) VALUES (?, 0)", (mod,))
    pmap = cur.lastrowid
    cbase = cur.execute("SELECT COALESCE(MAX(id), 0) FROM contexts").fetchone()[0]
    nbase = cur.execute("SELECT COALESCE(MAX(id), 0) FROM path_nodes").fetchone()[0]
    ctx_of = {}
    contexts, nodes = [], []
    height, depth, ctx = [0] * paths, [0] * paths, [0] * paths
    for i in range(paths):
        parent = rnd.randrange(i) if i else -1
        func = fbase + 1 + rnd.randrange(2000)
        pctx = ctx[parent] if parent >= 0 else 0
        key = (pctx, func)
        if key not in ctx_of:
            ctx_of[key] = cbase + len(contexts) + 1
            contexts.append((ctx_of[key], pctx, func))
        ctx[i] = ctx_of[key]
        height[i] = (height[parent] if parent >= 0 else 0) + 16 * rnd.randint(1, 20)
        depth[i] = (depth[parent] if parent >= 0 else 0) + 1
        self = rnd.randint(0, 50)
        nodes.append((nbase + i + 1, pmap, nbase + parent + 1 if parent >= 0 else 0,
                      func, ctx[i], 0x1000 + i, height[i], depth[i], self, self))
    cur.executemany("INSERT INTO contexts VALUES (?, ?, ?)", contexts)
    cur.executemany("INSERT INTO path_nodes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", nodes)
    cur.execute("INSERT INTO runs (kind, command, event, event_canonical, precise,"
                " frequency, started_ns, status, samples) VALUES ('record',"
                " 'synthetic', 'cpu-clock', 'perf::cpu-clock', 0, 1000, 0,"
                " 'finished', ?)", (samples,))
    run = cur.lastrowid
    # Zipf-like: the node of rank r gets weight 1 / (r + 10)
    order = list(range(paths))
    rnd.shuffle(order)
    weights = [1.0 / (r + 10) for r in range(paths)]
    total = sum(weights)
    cids = {}
    left = samples - samples // 100
    for r, i in enumerate(order):
        n = int(left * weights[r] / total)
        key = (nodes[i][3], height[i])
        cids[key] = cids.get(key, 0) + n
    given = sum(cids.values())
    cids[(nodes[order[0]][3], height[order[0]])] += left - given
    for _ in range(1000):           # the 1 %: never-seen heights
        i = rnd.randrange(paths)
        key = (nodes[i][3], height[i] + 8)
        cids[key] = cids.get(key, 0) + samples // 100 // 1000
    extra = samples - sum(cids.values())
    cids[(nodes[order[0]][3], height[order[0]])] += extra
    cur.executemany("INSERT INTO cid_samples (run_id, pid, tid, program_id,"
                    " function_id, height, samples) VALUES (?, 1, 1, ?, ?, ?, ?)",
                    [(run, mod, f, h, n) for (f, h), n in cids.items() if n > 0])
    con.commit()
    print(run)


main()
