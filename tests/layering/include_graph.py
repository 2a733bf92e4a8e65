#!/usr/bin/env python3
"""The include graph of lib/, derived from the sources alone (not from the build's layer
declarations): folder A -> folder B when a file of A has `#include "B/..."`. Fails (exit 1)
when the graph has a cycle, naming the includes that close it; otherwise prints the
folders as layers, each above everything it includes.

Usage: include_graph.py LIB_DIR"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*"([A-Za-z0-9_]+)/[^"]+"')


def include_graph(lib_dir):
    """folder -> {used folder: first 'file:line' that includes it}"""
    graph = {}
    for folder in sorted(os.listdir(lib_dir)):
        path = os.path.join(lib_dir, folder)
        if not os.path.isdir(path):
            continue
        edges = graph.setdefault(folder, {})
        for name in sorted(os.listdir(path)):
            if not name.endswith((".hpp", ".cpp")):
                continue
            with open(os.path.join(path, name), encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    match = INCLUDE.match(line)
                    if match and match.group(1) != folder:
                        edges.setdefault(match.group(1), f"lib/{folder}/{name}:{number}")
    return graph


def find_cycle(graph):
    """A list of folders [a, b, ..., a] forming a cycle, or None (depth-first search)."""
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for used in sorted(graph.get(node, {})):
            if state.get(used) == "open":
                return stack[stack.index(used):] + [used]
            if used not in state:
                cycle = visit(used)
                if cycle:
                    return cycle
        stack.pop()
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def layers(graph):
    """Levels: 0 for folders that include no other folder, else 1 + the highest level used."""
    level = {}

    def depth(node):
        if node not in level:
            level[node] = 1 + max((depth(u) for u in graph.get(node, {}) if u in graph), default=-1)
        return level[node]

    for node in graph:
        depth(node)
    return level


def main():
    graph = include_graph(sys.argv[1])
    unknown = sorted({(u, where) for edges in graph.values() for u, where in edges.items() if u not in graph})
    for used, where in unknown:
        print(f"{where}: includes {used}/, which is not a folder of lib/")
    cycle = find_cycle(graph)
    if cycle:
        print("include cycle between folders: " + " -> ".join(cycle))
        for a, b in zip(cycle, cycle[1:]):
            print(f"  {a} -> {b}: {graph[a][b]}")
        return 1
    level = layers(graph)
    for n in range(max(level.values()) + 1):
        row = sorted(f for f in level if level[f] == n)
        print(f"layer {n}: " + ", ".join(f"{f} (uses {', '.join(sorted(graph[f])) or 'nothing'})" for f in row))
    return 1 if unknown else 0


if __name__ == "__main__":
    sys.exit(main())
