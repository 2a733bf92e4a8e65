#!/usr/bin/env python3
"""The import graph of the web viewer's ES modules (lib/serve/viewer/*.js), read statically
from their text: module A -> module B when A has `import ... from './B.js'`,
`import './B.js'`, `export ... from './B.js'` or a dynamic `import('./B.js')`. Fails (exit 1)
when the graph has a cycle, naming the imports that close it, or when a module imports a
file that is not a module of the folder; otherwise prints the modules as layers, each above
everything it imports (the entry, main.js, composes them all).

With --entry MODULE, a module that MODULE does not reach through imports is reported (exit 1):
nothing would load it. With --embedded CMAKELISTS, the files of TRACEPIPE_VIEWER_FILES there
(what trace-serve embeds and serves; --variable names another list, e.g. TRACEPIPE_LAB_FILES
for trace-lab's front page, lib/lab/pages) must be the folder's modules: one missing would be a
404 in the page, one extra a file that is not there.

Comments are left out before reading (an import in a comment is no edge); a string that
looks like an import is read as one (the viewer has none).

Usage: import_graph.py VIEWER_DIR [--entry MODULE] [--embedded CMAKELISTS [--variable NAME]]"""
import argparse
import os
import re
import sys

from include_graph import find_cycle, layers

SPECIFIER = r"""(['"`])(\.{1,2}/[^'"`]+)\1"""
IMPORTS = [
    re.compile(r"\b(?:import|export)\b[^;'\"`()]*?\bfrom\s*" + SPECIFIER),  # import/export ... from
    re.compile(r"\bimport\s*" + SPECIFIER),                                 # import './x.js'
    re.compile(r"\bimport\s*\(\s*" + SPECIFIER + r"\s*\)"),               # import('./x.js')
]
KEYWORD = re.compile(r"\b(?:import|export)\b")
BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.S)
LINE_COMMENT = re.compile(r"(^|\s)//[^\n]*")


def without_comments(text):
    """The text with its comments blanked, newlines kept (so line numbers stay true)."""
    text = BLOCK_COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    return LINE_COMMENT.sub(lambda m: m.group(1), text)


def imports_of(text):
    """(specifier, line number) of every import of a module's text, in order; the line is the
    one of the statement's `import` or `export` (an import can span lines)."""
    code = without_comments(text)
    found = set()
    for pattern in IMPORTS:
        for match in pattern.finditer(code):
            found.add((match.start(2), match.group(2)))
    lines = []
    for start, spec in sorted(found):
        statement = [k.start() for k in KEYWORD.finditer(code, 0, start)][-1]
        lines.append((spec, code.count("\n", 0, statement) + 1))
    return lines


def import_graph(viewer_dir):
    """(module -> {imported module: first 'file:line'}, [problems])"""
    graph, problems = {}, []
    modules = sorted(n for n in os.listdir(viewer_dir) if n.endswith(".js"))
    for name in modules:
        edges = graph.setdefault(name, {})
        with open(os.path.join(viewer_dir, name), encoding="utf-8") as f:
            text = f.read()
        for spec, line in imports_of(text):
            where = f"{viewer_dir}/{name}:{line}"
            target = os.path.normpath(spec)
            if target not in modules:
                problems.append(f"{where}: imports {spec}, which is not a module of {viewer_dir}")
            elif target != name:
                edges.setdefault(target, where)
            else:
                problems.append(f"{where}: imports itself")
    return graph, problems


def unreached(graph, entry):
    """The modules `entry` does not import, directly or through others."""
    seen, todo = {entry}, [entry]
    while todo:
        for used in graph.get(todo.pop(), {}):
            if used not in seen:
                seen.add(used)
                todo.append(used)
    return sorted(set(graph) - seen)


def embedded_modules(cmakelists, variable="TRACEPIPE_VIEWER_FILES"):
    """The .js files of the list `variable` (set(VARIABLE ...)) in a CMakeLists.txt."""
    with open(cmakelists, encoding="utf-8") as f:
        match = re.search(r"set\(" + re.escape(variable) + r"\s([^)]*)\)", f.read())
    return {name for name in match.group(1).split() if name.endswith(".js")} if match else set()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("viewer_dir")
    parser.add_argument("--entry")
    parser.add_argument("--embedded")
    parser.add_argument("--variable", default="TRACEPIPE_VIEWER_FILES")
    args = parser.parse_args()
    graph, problems = import_graph(args.viewer_dir)
    if args.entry:
        problems += [f"{args.viewer_dir}/{m}: not reached from {args.entry}" for m in unreached(graph, args.entry)]
    if args.embedded:
        listed = embedded_modules(args.embedded, args.variable)
        problems += [f"{args.viewer_dir}/{m}: not in {args.variable} ({args.embedded})" for m in sorted(set(graph) - listed)]
        problems += [f"{args.embedded}: {args.variable} has {m}, which is not a module of {args.viewer_dir}"
                     for m in sorted(listed - set(graph))]
    for problem in problems:
        print(problem)
    cycle = find_cycle(graph)
    if cycle:
        print("import cycle between modules: " + " -> ".join(cycle))
        for a, b in zip(cycle, cycle[1:]):
            print(f"  {a} -> {b}: {graph[a][b]}")
        return 1
    level = layers(graph)
    for n in range(max(level.values(), default=-1) + 1):
        row = sorted(m for m in level if level[m] == n)
        print(f"layer {n}: " + ", ".join(f"{m} (imports {', '.join(sorted(graph[m])) or 'nothing'})" for m in row))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
