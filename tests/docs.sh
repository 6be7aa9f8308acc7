#!/bin/sh
# The documentation says what the program does. Usage: tests/docs.sh BINARY
# (from the project root). Checks README.md and docs/*.md for: links and
# named Markdown files that do not exist; a table broken by a blank line;
# rows of the commands table that are not commands; the results schema
# version against reports/store.h; folders the map calls "later work" that
# hold code. Prints ok/FAIL per check; exits 1 on failure.
set -u
bin=${1:?usage: tests/docs.sh BINARY}
"$bin" --help >/tmp/ct-docs-help.$$ 2>&1
python3 - "/tmp/ct-docs-help.$$" <<'PY'
import os, re, sys
fails = 0
def check(ok, what):
    global fails
    print(("ok   docs: " if ok else "FAIL docs: ") + what)
    fails += not ok

help_text = open(sys.argv[1]).read()
commands = set(re.findall(r"^  ([a-z]+)\s{2,}", help_text, re.M))
check(len(commands) >= 8, "clustertwin --help lists the commands (%d)" % len(commands))
docs = ["README.md"] + sorted("docs/" + f for f in os.listdir("docs") if f.endswith(".md"))
for path in docs:
    text = open(path).read()
    lines = text.split("\n")
    base = os.path.dirname(path)
    # Links and named .md files exist (outside code blocks).
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    missing = []
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", prose):
        if re.match(r"[a-z]+:", target): continue
        if not os.path.exists(os.path.normpath(os.path.join(base, target))): missing.append(target)
    # Named documents: README-style capitals (CONTRACT.md) or docs/x.md;
    # output files such as report.md are the program's, not documents.
    for name in re.findall(r"\b([A-Z][A-Z0-9_-]*\.md|docs/[a-z0-9_-]+\.md)\b", prose):
        if not any(os.path.exists(os.path.join(d, name)) for d in (".", "docs", base)): missing.append(name)
    check(not missing, "%s names only files that exist%s" % (path, (": missing " + ", ".join(sorted(set(missing)))) if missing else ""))
    # A table row after a blank line that follows a table, not starting a
    # new table (no |---| under it), is a table cut in two.
    broken = [i + 1 for i in range(1, len(lines) - 1)
              if lines[i] == "" and lines[i - 1].startswith("|") and lines[i + 1].startswith("|")
              and not (i + 2 < len(lines) and lines[i + 2].startswith("|-"))]
    check(not broken, "%s: no table is broken by a blank line%s" % (path, (" (line %s)" % broken) if broken else ""))

readme = open("README.md").read()
# The commands table: every row is a command (or --version/--help).
m = re.search(r"^\| command \| \|\n\|---\|---\|\n((?:\|.*\n)+)", readme, re.M)
check(m is not None, "README has the commands table")
if m:
    bad = []
    for row in m.group(1).splitlines():
        first = row.split("|")[1].strip().strip("`").split()[0].strip("`,")
        if first not in commands and first != "--version": bad.append(first)
    check(not bad, "every row of the commands table is a command%s" % (": not commands: " + ", ".join(bad) if bad else ""))
ver = re.search(r"#define STORE_SCHEMA_VERSION (\d+)", open("reports/store.h").read()).group(1)
said = re.findall(r"schema version, now (\d+)", readme) + re.findall(r"reads versions up\s+to (\d+)", readme)
check(said == [ver, ver], "README states the results schema version %s (says %s)" % (ver, said))
later = [f for f in re.findall(r"^\| `([a-z]+)/`[^|]*\|[^\n]*later work", readme, re.M)]
later += [f for row in re.findall(r"^\|([^|]*)\|[^\n]*later work", readme, re.M) for f in re.findall(r"`([a-z]+)/`", row)]
coded = [f for f in set(later) if os.path.isdir(f) and any(x.endswith(".c") for x in os.listdir(f))]
check(not coded, "the map calls no folder with code 'later work'%s" % (": " + ", ".join(coded) if coded else ""))
sys.exit(1 if fails else 0)
PY
rc=$?
rm -f /tmp/ct-docs-help.$$
exit $rc
