#!/usr/bin/env python3
"""No import circles between a crate's modules: lists, for each top-level module of a crate's
src/ (a file `x.rs` or a folder `x/`), the sibling modules it names (`crate::x`), and fails
(exit 1) naming the modules of any cycle in that graph.

Usage: python3 ops/module_cycles.py [--list] actors/src   (--list: print the graph too)"""
import os, re, sys
args = [a for a in sys.argv[1:] if a != "--list"]
src = args[0] if args else "actors/src"
mods = {}
for entry in sorted(os.listdir(src)):
    p = os.path.join(src, entry)
    if entry in ("lib.rs", "main.rs"):
        continue
    if entry.endswith(".rs"):
        mods.setdefault(entry[:-3], []).append(p)
    elif os.path.isdir(p):
        for root, _, files in os.walk(p):
            mods.setdefault(entry, []).extend(os.path.join(root, f) for f in files if f.endswith(".rs"))
pat = re.compile(r"crate::(\w+)")
graph = {}
for m, files in mods.items():
    deps = set()
    for f in files:
        text = open(f).read()
        # `use crate::{a, b::c}` groups
        for g in re.finditer(r"crate::\{([^}]*)\}", text):
            deps.update(re.findall(r"(?:^|,)\s*(\w+)", g.group(1)))
        deps.update(pat.findall(text))
    graph[m] = sorted(d for d in deps if d in mods and d != m)
if "--list" in sys.argv:
    for m in sorted(graph):
        print(f"{m}: {', '.join(graph[m]) or '-'}")
# cycles: Tarjan SCC
index, low, stack, on, sccs, i = {}, {}, [], set(), [], [0]
def strong(v):
    index[v] = low[v] = i[0]; i[0] += 1; stack.append(v); on.add(v)
    for w in graph[v]:
        if w not in index:
            strong(w); low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        c = []
        while True:
            w = stack.pop(); on.discard(w); c.append(w)
            if w == v: break
        if len(c) > 1: sccs.append(sorted(c))
for v in sorted(graph):
    if v not in index: strong(v)
if sccs:
    for c in sccs: print("CYCLE among:", " ".join(c))
    sys.exit(1)
print(f"no import cycle between the modules of {src}")
