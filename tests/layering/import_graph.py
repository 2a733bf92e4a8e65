#!/usr/bin/env python3
"""The import graph of the web viewer's ES modules (lib/serve/viewer/*.js), read statically
from their text: module A -> module B when A has `import ... from './B.js'`,
`import './B.js'`, `export ... from './B.js'` or a dynamic `import('./B.js')`. Fails (exit 1)
when the graph has a cycle, naming the imports that close it, or when a module imports a
file that is not a module of the folder; otherwise prints the modules as layers, each above
everything it imports (the entry, main.js, composes them all).

Comments are left out before reading (an import in a comment is no edge); a string that
looks like an import is read as one (the viewer has none).

Usage: import_graph.py VIEWER_DIR"""
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


def main():
    graph, problems = import_graph(sys.argv[1])
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
