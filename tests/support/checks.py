"""Pass/fail counting for the Python integration tests: `check(ok, what, detail)` prints
"ok   what" (unless quiet) or "FAIL what: detail"; `check.summary()` prints ctest's
"N passed, N failed" line and returns the exit status."""
import sys


class Checks:
    def __init__(self, show_passes=True):
        self.passed = 0
        self.failed = 0
        self.show_passes = show_passes

    def __call__(self, ok, what, detail=""):
        if ok:
            self.passed += 1
            if self.show_passes:
                print(f"ok   {what}")
        else:
            self.failed += 1
            print(f"FAIL {what}: {detail}"[:3000] if detail != "" else f"FAIL {what}")
        sys.stdout.flush()
        return ok

    def summary(self):
        print(f"{self.passed} passed, {self.failed} failed")
        return 1 if self.failed else 0
