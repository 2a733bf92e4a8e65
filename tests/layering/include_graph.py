#!/usr/bin/env python3
"""The include graph of lib/, derived from the sources alone (not from the build's layer
declarations): folder A -> folder B when a file of A has `#include "B/..."`. Fails (exit 1)
when the graph has a cycle, naming the includes that close it; otherwise prints the
folders as layers, each above everything it includes.

Inside each folder, the graph of its units (a .hpp and its .cpp are one unit) must have no
cycle either: unit A -> unit B when a file of A includes B's header. A cycle there is
reported the same way (exit 1).

With --readme FILE, the architecture table of FILE (docs/architecture.md) (lines "    layer N  folder  text", a
folder's further lines indented past it) must give every folder the layer printed here:
each difference is reported (exit 1).

Usage: include_graph.py LIB_DIR [--readme docs/architecture.md]"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*"([A-Za-z0-9_]+)/[^"]+"')
UNIT_INCLUDE = re.compile(r'^\s*#\s*include\s*"([A-Za-z0-9_]+)/([A-Za-z0-9_]+)\.hpp"')
README_ROW = re.compile(r'^    (?:layer (\d+))?\s+([a-z]+)\s{2,}\S')


def source_lines(lib_dir):
    """(folder, file name, line number, line) of every .hpp and .cpp of lib/, folder by folder;
    a folder without sources still gives one (folder, None, 0, "")."""
    for folder in sorted(os.listdir(lib_dir)):
        path = os.path.join(lib_dir, folder)
        if not os.path.isdir(path):
            continue
        yield folder, None, 0, ""
        for name in sorted(os.listdir(path)):
            if not name.endswith((".hpp", ".cpp")):
                continue
            yield folder, name, 0, ""
            with open(os.path.join(path, name), encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    yield folder, name, number, line


def include_graph(lib_dir):
    """folder -> {used folder: first 'file:line' that includes it}"""
    graph = {}
    for folder, name, number, line in source_lines(lib_dir):
        edges = graph.setdefault(folder, {})
        match = INCLUDE.match(line)
        if match and match.group(1) != folder:
            edges.setdefault(match.group(1), f"lib/{folder}/{name}:{number}")
    return graph


def unit_graphs(lib_dir):
    """folder -> {unit: {unit it includes: first 'file:line'}}, inside each folder; a unit is a
    .hpp and its .cpp."""
    graphs = {}
    for folder, name, number, line in source_lines(lib_dir):
        graph = graphs.setdefault(folder, {})
        if name is None:
            continue
        unit = name.rsplit(".", 1)[0]
        edges = graph.setdefault(unit, {})
        match = UNIT_INCLUDE.match(line)
        if match and match.group(1) == folder and match.group(2) != unit:
            edges.setdefault(match.group(2), f"lib/{folder}/{name}:{number}")
    return graphs


def readme_layers(path):
    """folder -> layer, from the architecture table of a document (docs/architecture.md)."""
    table, layer = {}, None
    with open(path, encoding="utf-8") as f:
        for line in f:
            if layer is not None and not line.startswith("    "):
                break  # the table ends at its first line that is not indented
            match = README_ROW.match(line)
            if not match:
                continue
            if match.group(1) is not None:
                layer = int(match.group(1))
            if layer is not None:
                table[match.group(2)] = layer
    return table


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
    status = 1 if unknown else 0
    for folder, units in sorted(unit_graphs(sys.argv[1]).items()):
        cycle = find_cycle(units)
        if cycle:
            print(f"include cycle between the files of lib/{folder}: " + " -> ".join(cycle))
            for a, b in zip(cycle, cycle[1:]):
                print(f"  {a} -> {b}: {units[a][b]}")
            status = 1
    level = layers(graph)
    for n in range(max(level.values()) + 1):
        row = sorted(f for f in level if level[f] == n)
        print(f"layer {n}: " + ", ".join(f"{f} (uses {', '.join(sorted(graph[f])) or 'nothing'})" for f in row))
    if len(sys.argv) == 4 and sys.argv[2] == "--readme":
        table = readme_layers(sys.argv[3])
        for folder in sorted(set(level) | set(table)):
            if folder not in table:
                print(f"{sys.argv[3]}: the architecture table lacks {folder} (layer {level[folder]})")
                status = 1
            elif folder not in level:
                print(f"{sys.argv[3]}: the architecture table has {folder}, which is not a folder of lib/")
                status = 1
            elif table[folder] != level[folder]:
                print(f"{sys.argv[3]}: the architecture table puts {folder} in layer {table[folder]}; "
                      f"its includes put it in layer {level[folder]}")
                status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
