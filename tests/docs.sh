#!/bin/sh
# The documentation says what the program does. Usage: tests/docs.sh BINARY
# (from the project root). Checks README.md and docs/*.md for: relative
# links (and images) to files that do not exist, or to a #heading the target
# does not have; named Markdown files that do not exist; a table broken by a
# blank line. README.md: under 250 lines, its commands table names exactly
# the commands of `clustertwin --help`. Every statement of the results
# schema version matches reports/store_names.h. The man page docs/clustertwin.1
# has every command and every option of `clustertwin CMD --help` and renders
# without warnings (mandoc -T lint, else groff -mdoc -ww). Then the bash
# completion (tests/cli_completion.sh). Prints ok/FAIL per check; exits 1 on
# failure.
set -u
bin=${1:?usage: tests/docs.sh BINARY}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" --help >"$tmp/help" 2>&1
for c in $(sed -n 's/^  \([a-z][a-z-]*\)  .*/\1/p' "$tmp/help"); do
  "$bin" "$c" --help >"$tmp/help-$c" 2>&1
done

# The man page renders without a warning: mandoc's linter where it is
# installed, else groff (Debian's groff-base, which man-db needs) with every
# warning on.
if command -v mandoc >/dev/null 2>&1; then
  mandoc -T lint -W warning docs/clustertwin.1 >"$tmp/lint" 2>&1 && [ ! -s "$tmp/lint" ]
  echo "mandoc -T lint $?" >"$tmp/render"
elif command -v groff >/dev/null 2>&1; then
  groff -mdoc -Tutf8 -ww -z docs/clustertwin.1 >"$tmp/lint" 2>&1 && [ ! -s "$tmp/lint" ]
  echo "groff -mdoc -ww $?" >"$tmp/render"
else
  echo "none 0" >"$tmp/render"
fi

python3 - "$tmp" <<'PY'
import os, re, sys
tmp = sys.argv[1]
fails = 0
def check(ok, what):
    global fails
    print(("ok   docs: " if ok else "FAIL docs: ") + what)
    fails += not ok

help_text = open(os.path.join(tmp, "help")).read()
commands = re.findall(r"^  ([a-z][a-z-]*)\s{2,}", help_text, re.M)
check(len(commands) >= 8, "clustertwin --help lists the commands (%d)" % len(commands))

def anchors(path):
    """GitHub's anchors of a Markdown file's headings (outside code)."""
    seen, out = {}, set()
    text = re.sub(r"^```.*?^```", "", open(path).read(), flags=re.S | re.M)
    for h in re.findall(r"^#{1,6} +(.+?) *#* *$", text, re.M):
        slug = re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else "%s-%d" % (slug, n))
    return out

docs = ["README.md"] + sorted("docs/" + f for f in os.listdir("docs") if f.endswith(".md"))
for path in docs:
    text = open(path).read()
    lines = text.split("\n")
    base = os.path.dirname(path)
    body = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    # Relative links and images: the file exists, and so does the #anchor.
    missing, bad_anchor = [], []
    for target, anchor in re.findall(r"\]\(([^)#\s]*)(?:#([^)\s]*))?\)", body):
        if re.match(r"[a-z]+:", target): continue
        dest = os.path.normpath(os.path.join(base, target)) if target else path
        if not os.path.exists(dest):
            missing.append(target)
        elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
            bad_anchor.append((target or "") + "#" + anchor)
    # Named documents: README-style capitals (CONTRACT.md) or docs/x.md;
    # output files such as report.md are the program's, not documents.
    # A link to another site names that site's document, not one of ours.
    local = re.sub(r"\[[^\]]*\]\([a-z]+:[^)]*\)", "", body)
    for name in re.findall(r"\b([A-Z][A-Z0-9_-]*\.md|docs/[a-z0-9_-]+\.md)\b", local):
        if not any(os.path.exists(os.path.join(d, name)) for d in (".", "docs", base)): missing.append(name)
    check(not missing, "%s names only files that exist%s" % (path, (": missing " + ", ".join(sorted(set(missing)))) if missing else ""))
    check(not bad_anchor, "%s links only to headings that exist%s" % (path, (": no such heading: " + ", ".join(sorted(set(bad_anchor)))) if bad_anchor else ""))
    # A table row after a blank line that follows a table, not starting a
    # new table (no |---| under it), is a table cut in two.
    broken = [i + 1 for i in range(1, len(lines) - 1)
              if lines[i] == "" and lines[i - 1].startswith("|") and lines[i + 1].startswith("|")
              and not (i + 2 < len(lines) and lines[i + 2].startswith("|-"))]
    check(not broken, "%s: no table is broken by a blank line%s" % (path, (" (line %s)" % broken) if broken else ""))

readme = open("README.md").read()
n_lines = readme.count("\n")
check(n_lines < 250, "README.md is under 250 lines (%d): the rest lives in docs/" % n_lines)
# The commands table names every command of --help, and nothing else.
m = re.search(r"^\| command \| \|\n\|---\|---\|\n((?:\|.*\n)+)", readme, re.M)
check(m is not None, "README has the commands table")
if m:
    rows = [row.split("|")[1].strip().strip("`").split()[0].strip("`,") for row in m.group(1).splitlines()]
    bad = [r for r in rows if r not in commands and r != "--version"]
    check(not bad, "every row of the commands table is a command%s" % (": not commands: " + ", ".join(bad) if bad else ""))
    absent = [c for c in commands if c not in rows]
    check(not absent, "every command of --help has a row in the commands table%s" % (": missing " + ", ".join(absent) if absent else ""))

# The results schema version, wherever the documentation states it.
ver = re.search(r"#define STORE_SCHEMA_VERSION (\d+)", open("reports/store_names.h").read()).group(1)
said = []
for path in docs:
    t = open(path).read()
    said += [(path, v) for v in re.findall(r"schema version, now (\d+)", t) + re.findall(r"reads versions up\s+to (\d+)", t)]
wrong = ["%s says %s" % p for p in said if p[1] != ver]
check(not wrong, "the documentation states the results schema version %s where it states one (%d places)%s"
      % (ver, len(said), (": " + "; ".join(wrong)) if wrong else ""))

# The man page: every command and every option of its --help.
man = open("docs/clustertwin.1").read()
man_cmds = set(re.findall(r"^\.Ss (\S+)", man, re.M))
absent = [c for c in commands if c not in man_cmds]
check(not absent, "the man page has a section for every command%s" % (": missing " + ", ".join(absent) if absent else ""))
man_opts = set("-" + o.replace("\\-", "-") for o in re.findall(r"\bFl (\\-(?:[a-z]|\\-)+)", man))
missing = []
for c in commands:
    h = open(os.path.join(tmp, "help-" + c)).read()
    for o in re.findall(r"^  (--[a-z][a-z-]*)", h, re.M):
        if o not in man_opts: missing.append(c + " " + o)
check(not missing, "the man page has every option of every command's --help%s" % (": missing " + ", ".join(missing) if missing else ""))
how, rc = open(os.path.join(tmp, "render")).read().rsplit(" ", 1)
lint = open(os.path.join(tmp, "lint")).read().strip() if os.path.exists(os.path.join(tmp, "lint")) else ""
if how == "none":
    print("skip docs: neither mandoc nor groff is installed: the man page's rendering was not checked")
else:
    check(int(rc) == 0, "the man page renders without warnings (%s)%s" % (how, (": " + lint[:300]) if lint else ""))
sys.exit(1 if fails else 0)
PY
rc=$?
tests/cli_completion.sh "$bin" || rc=1
exit $rc
