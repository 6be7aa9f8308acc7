#!/bin/sh
# layers.sh: the include graph keeps the layers of docs/architecture.md.
# A folder includes only folders of a lower layer (or itself); folders of one
# layer do not include each other; and no chain of includes among the
# project's headers comes back to where it started. Prints ok/FAIL; exits 1
# on a failure.
python3 - <<'PY'
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
