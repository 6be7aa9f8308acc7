#!/bin/sh
# layers.sh: the include graph keeps the layers of docs/architecture.md.
# A folder includes only folders of a lower layer (or itself); folders of one
# layer do not include each other; and no chain of includes among the
# project's headers comes back to where it started. And lengths (issue 18):
# no .c or .h file in those folders or tests/ over 900 lines, no function
# body in their .c files over 120. Prints ok/FAIL; exits 1 on a failure.
fail=0
python3 - <<'PY' || fail=1
import glob, re, sys
layer = {"base": 0, "models": 1, "scenarios": 2, "hw": 2, "sim": 3,
         "reports": 4, "tui": 4, "plan": 5, "cli": 6}
inc = {}
for d in layer:
    for f in sorted(glob.glob(d + "/*.[ch]")):
        inc[f] = re.findall(r'^#include "([a-z]+/[A-Za-z0-9_]+\.h)"', open(f).read(), re.M)
up = [(f, t) for f, ts in inc.items() for t in ts
      if t.split("/")[0] in layer and t.split("/")[0] != f.split("/")[0]
      and layer[t.split("/")[0]] >= layer[f.split("/")[0]]]
print(("ok  " if not up else "FAIL") + " layers: no include runs up or across a layer"
      + "".join("\n     %s includes %s" % u for u in up))
# Circles among headers (a .c file is a leaf: nothing includes it).
state, path, circle = {}, [], []
def visit(h):
    if circle: return
    state[h] = 1; path.append(h)
    for t in inc.get(h, []):
        if state.get(t) == 1: circle.extend(path[path.index(t):] + [t]); return
        if t not in state: visit(t)
        if circle: return
    state[h] = 2; path.pop()
for h in sorted(inc):
    if h.endswith(".h") and h not in state: visit(h)
print(("ok  " if not circle else "FAIL") + " layers: no circle of includes"
      + ("" if not circle else ": " + " -> ".join(circle)))
sys.exit(1 if up or circle else 0)
PY
# Lengths: a function's body is the lines between its opening and closing
# brace, found by counting braces in the code with comments, string and
# character literals and preprocessor lines blanked.
python3 - <<'PY' || fail=1
import glob, re, sys
FILE_MAX, FUNC_MAX = 900, 120
dirs = ["base", "models", "scenarios", "hw", "sim", "reports", "tui", "plan", "cli", "tests"]

def code_only(text):
    """The text with comments, string and character literals and
    preprocessor lines blanked (newlines kept), so braces left are code."""
    out, i, n, bol = [], 0, len(text), True
    while i < n:
        c = text[i]
        if bol and c in " \t":
            out.append(c); i += 1; continue
        if bol and c == "#":                      # a directive, with its continuations
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append(" \n"); i += 2; continue
                if text.startswith("/*", i):      # a comment may run past the line
                    j = text.find("*/", i + 2); j = n if j < 0 else j + 2
                    out.append(re.sub(r"[^\n]", " ", text[i:j])); i = j; continue
                out.append(" "); i += 1
            continue
        bol = False
        if text.startswith("//", i):
            j = text.find("\n", i); j = n if j < 0 else j
            out.append(" " * (j - i)); i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2); j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j])); i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(re.sub(r"[^\n]", " ", text[i:j])); i = j
        else:
            out.append(c); i += 1
            if c == "\n": bol = True
    return "".join(out)

def functions(code):
    """(name, first line, body lines) of each function definition: a '{'
    at file level (or inside extern "C") that follows a ')'."""
    line, depth, start, stack, found = 1, 0, 0, [], []
    for i, c in enumerate(code):
        if c == "\n": line += 1
        elif c == "{":
            before = code[start:i].rstrip()
            if depth == 0 and re.search(r"\bextern\s*$", before):
                stack.append(("extern", 0, 0)); start = i + 1; continue
            kind = "fn" if depth == 0 and before.endswith(")") else "block"
            if depth == 0:
                lead = len(code[start:i]) - len(code[start:i].lstrip())
                m = re.search(r"([A-Za-z_]\w*)\s*\(", before)
                stack.append((kind, line, code.count("\n", 0, start + lead) + 1, m.group(1) if m else "?"))
            else:
                stack.append(("block", line, 0, ""))
            depth += 1
        elif c == "}":
            if not stack: return found, line
            top = stack.pop()
            if top[0] == "extern": start = i + 1; continue
            depth -= 1
            if depth == 0:
                if top[0] == "fn": found.append((top[3], top[2], line - top[1] - 1))
                start = i + 1
        elif c == ";" and depth == 0:
            start = i + 1
    return found, (line if stack else 0)

# The counter first checks itself on a known sample: braces in strings,
# characters, comments and macros are not code; a struct, an initializer
# and extern "C" are not functions; bodies count the lines between braces.
sample = ('#define BLOCK { if (x) {\n'
          'extern "C" {\n'
          'struct s { int a; };\n'
          'static const int t[] = { 1, 2 };\n'
          '/* } { */ static int f(int a)\n'
          '{\n' + '    g("}", \'{\', a); // }\n' * 3 + '}\n'
          '}\n')
if functions(code_only(sample)) != ([("f", 5, 3)], 0):
    sys.exit("FAIL lengths: the brace counter miscounts its own sample: %r" % (functions(code_only(sample)),))

long_files, long_funcs, unbalanced = [], [], []
files = sorted(f for d in dirs for f in glob.glob(d + "/**/*.[ch]", recursive=True))
for f in files:
    text = open(f, encoding="utf-8", errors="replace").read()
    n = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    if n > FILE_MAX: long_files.append("%s: %d lines" % (f, n))
    if not f.endswith(".c"): continue
    found, bad = functions(code_only(text))
    if bad: unbalanced.append("%s:%d: braces do not balance" % (f, bad))
    long_funcs += ["%s:%d: %s has a body of %d lines" % (f, l, name, b) for name, l, b in found if b > FUNC_MAX]
print(("ok  " if not long_files else "FAIL") + " lengths: no source file over %d lines" % FILE_MAX
      + "".join("\n     " + x for x in long_files))
print(("ok  " if not long_funcs + unbalanced else "FAIL")
      + " lengths: no function body over %d lines" % FUNC_MAX
      + "".join("\n     " + x for x in unbalanced + long_funcs))
sys.exit(1 if long_files or long_funcs or unbalanced else 0)
PY
exit $fail
