#!/usr/bin/env python3
"""Keeps two rules of the suite from eroding (run as the `test_rules` test):

1. Waits are on events. A fixed sleep or timer in tests/ (Python `time.sleep(`, shell
   `sleep N`, C/C++ `sleep_for`, `sleep_until`, `usleep`, `nanosleep`, `sleep(`, JavaScript
   `setTimeout`, `setInterval`, Playwright's `waitForTimeout`) must say why on its own line,
   or on the line above when that line is only a comment (so that one annotation cannot cover
   unrelated code): `must-not-happen` (a window in which something must NOT occur), `pace:`
   (a rate that is part of the scenario, or the polling interval of a wait with a deadline) or
   `deadline:` (a timer that fails the wait when it expires).
2. Only ../shared may make a test skip. A skip code (`exit 77`, `return 77`, `exit(77)`) must
   follow, within five lines, a line that names the shared material; in tests/CMakeLists.txt,
   `SKIP_RETURN_CODE 77` only for tests whose command is given TRACEPIPE_SHARED_DIR.
3. A hang fails instead of stalling CI: every test added in a tests/**/CMakeLists.txt is
   given a TIMEOUT (set_tests_properties, or a function of that file that sets it).

It first checks itself on planted violations, then the files git tracks in tests/.
Usage: test_rules.py PROJECT_ROOT [BUILD_DIR]   (with BUILD_DIR, ctest's own list of the
configured tests is checked for TIMEOUT too)"""
import json
import os
import re
import subprocess
import sys
import tempfile

SLEEP = re.compile(r"sleep\s*\(|\bsleep\s+[-0-9.$\"']|sleep_for|sleep_until|usleep|nanosleep|"
                   r"setTimeout|setInterval|waitForTimeout")
COMMENT_ONLY = re.compile(r"^\s*(#|//|/\*|\*)")
WHY = re.compile(r"must-not-happen|pace:|deadline:")
SKIP = re.compile(r"\bexit 77\b|\breturn 77\b|exit\(77\)")
SHARED = re.compile(r"shared|SHARED")
SOURCES = (".py", ".sh", ".mjs", ".js", ".cpp", ".hpp", ".txt", ".cmake")


def problems_in(path, text):
    found = []
    lines = text.split("\n")
    for number, line in enumerate(lines, 1):
        above = lines[number - 2] if number >= 2 else ""
        said_above = COMMENT_ONLY.match(above) and WHY.search(above)
        if SLEEP.search(line) and not (WHY.search(line) or said_above):
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
        for name in tests_without_timeout(text):
            found.append(f"{path}: test {name} has no TIMEOUT (a hang would stall CI instead of failing)")
    return found


FUNCTION = re.compile(r"^\s*function\((\w+)([^)]*)\)(.*?)^\s*endfunction\(\)", re.S | re.M)


def tests_without_timeout(text):
    """The names of add_test(NAME ...) that no set_tests_properties(... TIMEOUT) names, nor a
    function of the file that sets TIMEOUT on the test it is given. A name is compared as
    written (fuzz_corpus_${target} is given its TIMEOUT in the loop that adds it)."""
    text = "\n".join(line for line in text.split("\n") if not line.lstrip().startswith("#"))
    timed = set()
    for function in FUNCTION.finditer(text):
        name, params, body = function.group(1), function.group(2).split(), function.group(3)
        for index, param in enumerate(params):
            if not re.search(r"set_tests_properties\(\$\{%s\}\s+PROPERTIES[^)]*\bTIMEOUT\b" % param, body):
                continue
            for call in re.finditer(r"^\s*%s\(([^)]*)\)" % name, text, re.M):
                arguments = call.group(1).split()
                if len(arguments) > index:
                    timed.add(arguments[index])
    outside = FUNCTION.sub("", text)
    for match in re.finditer(r"set_tests_properties\(([^)]*?)\s+PROPERTIES\b([^)]*)\)", outside):
        if re.search(r"\bTIMEOUT\b", match.group(2)):
            timed.update(match.group(1).split())
    return [name for name in re.findall(r"add_test\(\s*NAME\s+(\S+)", outside) if name not in timed]


def configured_without_timeout(build):
    """The tests ctest knows in a configured build tree that have no TIMEOUT property."""
    listing = subprocess.run(["ctest", "--show-only=json-v1", "--test-dir", build], capture_output=True, text=True)
    if listing.returncode != 0:
        return [f"ctest --show-only in {build}: {listing.stderr.strip()[:300]}"]
    tests = json.loads(listing.stdout).get("tests", [])
    if not tests:
        return [f"ctest lists no tests in {build}"]
    return [f"{build}: test {test['name']} has no TIMEOUT" for test in tests
            if not any(p.get("name") == "TIMEOUT" for p in test.get("properties", []))]


def self_check():
    """The rules catch planted violations and pass their annotated forms."""
    planted = {
        "wait.sh": ("sleep 0.5\n", 1),
        "wait.py": ("time.sleep(0.3)\n", 1),
        "wait.mjs": ("await new Promise((r) => setTimeout(r, 100));\n", 1),
        "skip.sh": ('command -v lintian || { echo "no lintian"; exit 77; }\n', 1),
        "ok.sh": ("sleep 0.5  # must-not-happen: a redraw would show it\n# pace: the peer's rate\nsleep 1\n", 0),
        "ok_skip.sh": ('[ -d "$SHARED/reference" ] || exit 77\n', 0),
        "CMakeLists.txt": ("add_test(NAME a COMMAND x)\nset_tests_properties(a PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 9)\n"
                           "add_test(NAME b COMMAND x ${TRACEPIPE_SHARED_DIR})\n"
                           "set_tests_properties(b PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 9)\n", 1),
        # Every form of a fixed wait, unannotated.
        "forms.cpp": ("std::this_thread::sleep_for(std::chrono::milliseconds(1));\n"
                      "std::this_thread::sleep_until(t);\n::usleep(300);\n::nanosleep(&t, nullptr);\nsleep(1);\n", 5),
        "forms.mjs": ("const t = setInterval(() => {}, 200);\nawait page.waitForTimeout(100);\n"
                      "await setTimeout(5);\nawait sleep(300);\n", 4),
        "forms.py": ("await asyncio.sleep(1)\ntime.sleep (2)\n", 2),
        "forms.sh": ('sleep "$delay"\nsleep .5\nsleep $n\n', 3),
        # An annotation covers its own line, or the next one only from a comment-only line.
        "cover.py": ("x = 1  # pace: of x\ntime.sleep(1)\n", 1),
        "cover.mjs": ("  // deadline: fails when it expires\nconst t = setTimeout(fail, 9);\n", 0),
        "cover.cpp": ("  /* must-not-happen: a wake-up */\nstd::this_thread::sleep_for(1s);\n"
                      "// pace: two lines up\n\nusleep(1);\n", 1),
        # Words that are not waits.
        "words.py": ('data = {"sleep": True}\nkey = "[sleep]"\nexport const sleep = (ms) => ms\n', 0),
        # Every test gets a TIMEOUT: set directly, in a loop, or by a function of the file.
        "timeouts/CMakeLists.txt": (
            "function(props name timeout)\n  set_tests_properties(${name} PROPERTIES TIMEOUT ${timeout})\nendfunction()\n"
            "add_test(NAME t1 COMMAND x)\nset_tests_properties(t1 t2 PROPERTIES\n  ENVIRONMENT A=1 TIMEOUT 60)\n"
            "add_test(NAME t2 COMMAND x)\nadd_test(NAME t3 COMMAND x)\nprops(t3 300)\n"
            "foreach(n a b)\n  add_test(NAME f_${n} COMMAND x)\n  set_tests_properties(f_${n} PROPERTIES TIMEOUT 9)\n"
            "endforeach()\n"
            "add_test(NAME untimed COMMAND x)\nset_tests_properties(untimed PROPERTIES SKIP_RETURN_CODE 77)\n"
            "# add_test(NAME commented COMMAND x)\n"
            "add_test(NAME ${name} COMMAND x)\n", 2),
    }
    ok = True
    with tempfile.TemporaryDirectory() as work:
        for name, (text, expected) in planted.items():
            found = problems_in(os.path.join(work, name), text)
            if name == "timeouts/CMakeLists.txt":
                found = [f for f in found if "TIMEOUT" in f]
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
    if len(sys.argv) > 2:
        problems += configured_without_timeout(sys.argv[2])
    for problem in problems:
        print(problem)
    print(f"{len(files)} test sources read: {len(problems)} problems")
    return 1 if problems else status


if __name__ == "__main__":
    sys.exit(main())
