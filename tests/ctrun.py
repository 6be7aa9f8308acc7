"""ctrun: run a scenario given as text through `clustertwin run`, for the
Python that the CLI test scripts embed (they run from the repository root
and put tests/ on sys.path)."""
import json
import os
import subprocess
import tempfile


def run_text(binp, text, timeout=300):
    """Write text to a temporary scenario file, run it with --json - --no-db,
    remove the file; returns the subprocess.CompletedProcess."""
    fd, name = tempfile.mkstemp(suffix=".xml")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    try:
        return subprocess.run([binp, "run", name, "--json", "-", "--no-db"], capture_output=True, text=True,
                              timeout=timeout)
    finally:
        os.unlink(name)


def service(path, i=0):
    """services[i] of the results JSON at path (`clustertwin run ... --json path`)."""
    with open(path) as f:
        return json.load(f)["services"][i]


def jobs_by_id(path):
    """The results JSON at path and its jobs by id (`clustertwin run ... --json path`)."""
    with open(path) as f:
        d = json.load(f)
    return d, {j["id"]: j for j in d["jobs"]}


class Checks:
    """check(ok, what) prints an ok or FAIL line as the shell suites do and
    counts the failures in bad."""

    def __init__(self):
        self.bad = 0

    def __call__(self, ok, what):
        print(("ok   " if ok else "FAIL ") + what)
        self.bad += not ok
