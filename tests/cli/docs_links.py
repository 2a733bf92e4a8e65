#!/usr/bin/env python3
"""The documents a newcomer reads hold together (docs/development.md "The documents"):
  - README.md is at most 300 lines;
  - its table of tools names every tool of tools/, each with its man page;
  - every relative link of README.md and docs/ (pages, man pages, images) reaches a file, and a
    link's #anchor a heading of the page it names (GitHub's anchors);
  - every bench command docs/performance.md names is a script of scripts/bench/.
Usage: docs_links.py PROJECT_ROOT"""
import os
import re
import sys

root = sys.argv[1]
failures = []
passed = 0


def check(condition, what):
    global passed
    if condition:
        passed += 1
    else:
        failures.append(what)
        print(f"FAIL {what}")


def read(path):
    with open(os.path.join(root, path), encoding="utf-8") as f:
        return f.read()


def documents():
    yield "README.md"
    for folder, _, names in os.walk(os.path.join(root, "docs")):
        for name in sorted(names):
            if name.endswith(".md"):
                yield os.path.relpath(os.path.join(folder, name), root)


def anchors(path):
    """GitHub's anchors of a page's headings: lower case, punctuation dropped, spaces to dashes."""
    text = re.sub(r"```.*?```", "", read(path), flags=re.S)
    result = set()
    for heading in re.findall(r"^#+ (.+)$", text, re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        result.add(slug)
    return result


def without_code(text):
    """The text outside fenced blocks and inline code, where links are links."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    return re.sub(r"`[^`\n]*`", "", text)


readme = read("README.md")
lines = readme.count("\n")
check(lines <= 300, f"README.md has {lines} lines: at most 300")

tools = sorted(name for name in os.listdir(os.path.join(root, "tools"))
               if os.path.isdir(os.path.join(root, "tools", name)))
check(len(tools) >= 16, f"tools/ has the tools ({len(tools)})")
for tool in tools:
    row = re.search(rf"^\| `{re.escape(tool)}` \|.*\(man/{re.escape(tool)}\.1\)", readme, re.M)
    check(row is not None, f"README.md's table of tools has {tool} with its man page man/{tool}.1")

for document in documents():
    base = os.path.dirname(document)
    for target in re.findall(r"\]\(([^)\s]+)\)", without_code(read(document))):
        if re.match(r"[a-z]+:", target):
            continue  # http(s), mailto: not checked here
        path, _, anchor = target.partition("#")
        resolved = os.path.normpath(os.path.join(base, path)) if path else document
        exists = os.path.exists(os.path.join(root, resolved))
        check(exists, f"{document}: the link {target} reaches {resolved}")
        if exists and anchor and resolved.endswith(".md"):
            check(anchor in anchors(resolved), f"{document}: the link {target}: {resolved} has a heading for #{anchor}")

performance = read("docs/performance.md")
named = set(re.findall(r"scripts/bench/([\w.-]+)", performance))
check(len(named) >= 10, f"docs/performance.md names its bench commands ({len(named)})")
for script in sorted(named):
    check(os.path.isfile(os.path.join(root, "scripts", "bench", script)),
          f"docs/performance.md names scripts/bench/{script}, which exists")

print(f"{passed} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
