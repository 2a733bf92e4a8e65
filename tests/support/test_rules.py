#!/usr/bin/env python3
"""Keeps two rules of the suite from eroding (run as the `test_rules` test):

1. Waits are on events. A fixed sleep or timer in tests/ (`sleep(`, `sleep N`, `setTimeout`)
   must say why on its line or the line above it: `must-not-happen` (a window in which
   something must NOT occur), `pace:` (a rate that is part of the scenario, or the polling
   interval of a wait with a deadline) or `deadline:` (a timer that fails the wait when it
   expires).
2. Only ../shared may make a test skip. A skip code (`exit 77`, `return 77`, `exit(77)`) must
   follow, within five lines, a line that names the shared material; in tests/CMakeLists.txt,
   `SKIP_RETURN_CODE 77` only for tests whose command is given TRACEPIPE_SHARED_DIR.

It first checks itself on planted violations, then the files git tracks in tests/.
Usage: test_rules.py PROJECT_ROOT"""
import os
import re
import subprocess
import sys
import tempfile

SLEEP = re.compile(r"sleep\(|sleep [0-9]|setTimeout")
WHY = re.compile(r"must-not-happen|pace:|deadline:")
SKIP = re.compile(r"\bexit 77\b|\breturn 77\b|exit\(77\)")
SHARED = re.compile(r"shared|SHARED")
SOURCES = (".py", ".sh", ".mjs", ".js", ".cpp", ".hpp", ".txt", ".cmake")


def problems_in(path, text):
    found = []
    lines = text.split("\n")
    for number, line in enumerate(lines, 1):
        above = lines[number - 2] if number >= 2 else ""
        if SLEEP.search(line) and not (WHY.search(line) or WHY.search(above)):
            found.append(f"{path}:{number}: a fixed wait without must-not-happen, pace: or deadline: ({line.strip()})")
        if SKIP.search(line) and not any(SHARED.search(l) for l in lines[max(0, number - 6):number]):
            found.append(f"{path}:{number}: a skip that is not about ../shared ({line.strip()})")
    if os.path.basename(path) == "CMakeLists.txt":
        commands = {}
        for match in re.finditer(r"add_test\(NAME ([\w${}]+)(.*?)\)\n", text, re.S):
            commands[match.group(1)] = match.group(2)
        for match in re.finditer(r"set_tests_properties\(([^)]*?) PROPERTIES[^)]*SKIP_RETURN_CODE 77", text):
            for name in match.group(1).split():
                # A test named by a loop variable (add_test(NAME ${name} ...)) is judged by that command.
                command = commands.get(name, "".join(c for n, c in commands.items() if n.startswith("$")))
                if "SHARED" not in command:
                    found.append(f"{path}: test {name} may skip (SKIP_RETURN_CODE 77) but is not given ../shared")
    return found


def self_check():
    """The rules catch planted violations and pass their annotated forms."""
    planted = {
        "wait.sh": ("sleep 0.5\n", 1),
        "wait.py": ("time.sleep(0.3)\n", 1),
        "wait.mjs": ("await new Promise((r) => setTimeout(r, 100));\n", 1),
        "skip.sh": ('command -v lintian || { echo "no lintian"; exit 77; }\n', 1),
        "ok.sh": ("sleep 0.5  # must-not-happen: a redraw would show it\n# pace: the peer's rate\nsleep 1\n", 0),
        "ok_skip.sh": ('[ -d "$SHARED/reference" ] || exit 77\n', 0),
        "CMakeLists.txt": ("add_test(NAME a COMMAND x)\nset_tests_properties(a PROPERTIES SKIP_RETURN_CODE 77)\n"
                           "add_test(NAME b COMMAND x ${TRACEPIPE_SHARED_DIR})\n"
                           "set_tests_properties(b PROPERTIES SKIP_RETURN_CODE 77)\n", 1),
    }
    ok = True
    with tempfile.TemporaryDirectory() as work:
        for name, (text, expected) in planted.items():
            found = problems_in(os.path.join(work, name), text)
            if len(found) != expected:
                print(f"FAIL the rules find {len(found)} problems in a planted {name}, not {expected}: {found}")
                ok = False
    return ok


def main():
    root = sys.argv[1]
    status = 0 if self_check() else 1
    files = subprocess.run(["git", "-C", root, "ls-files", "tests"], capture_output=True, text=True,
                           check=True).stdout.split()
    files = [f for f in files if f.endswith(SOURCES) and "/corpus/" not in f and f != "tests/support/test_rules.py"]
    if not files:
        print("FAIL git lists no test sources under tests/")
        return 1
    problems = []
    for path in files:
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            problems += problems_in(path, f.read())
    for problem in problems:
        print(problem)
    print(f"{len(files)} test sources read: {len(problems)} problems")
    return 1 if problems else status


if __name__ == "__main__":
    sys.exit(main())
