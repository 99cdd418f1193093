#!/usr/bin/env python3
"""How long the code is: each .rs file under DIR (default src) without its
#[cfg(test)] module, and each fn from its `fn` line to the `}` at the same
indent (as rustfmt writes them). Prints the files over FILE_LIMIT lines
(default 700) and the functions over FN_LIMIT (default 100).

    python3 .ci/sizes.py [DIR [FILE_LIMIT [FN_LIMIT]]]
"""
import re, sys, pathlib
root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else 'src')
fn_re = re.compile(r'^(\s*)(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?(extern\s+"C"\s+)?fn\s+(\w+)')
files, fns = [], []
for p in sorted(root.rglob('*.rs')):
    lines = p.read_text().split('\n')
    n = len(lines)
    # the test module: `#[cfg(test)]` then `mod x {` at indent 0, to its `}`
    cut = n
    for i, l in enumerate(lines):
        if l.startswith('#[cfg(test)]') and i + 1 < n and re.match(r'(pub(\(crate\))? )?mod \w+ \{', lines[i+1]):
            cut = i; break
    files.append((cut, n, str(p)))
    for i, l in enumerate(lines[:cut]):
        m = fn_re.match(l)
        if not m or l.rstrip().endswith(';'): continue
        ind = m.group(1)
        decl = False
        for j in range(i, cut):
            t = lines[j].rstrip()
            if t.endswith('{') or t.endswith('}'): break
            if t.endswith(';'): decl = True; break
        if decl: continue
        for j in range(i, cut):
            if lines[j] == ind + '}' or (j == i and l.rstrip().endswith('}')):
                fns.append((j - i + 1, f'{p}:{i+1} {m.group(8)}')); break
limit_f = int(sys.argv[2]) if len(sys.argv) > 2 else 700
limit_fn = int(sys.argv[3]) if len(sys.argv) > 3 else 100
print('files over', limit_f, 'lines without tests:')
for c, n, p in sorted(files, reverse=True):
    if c > limit_f: print(f'  {c:5} ({n} with tests) {p}')
print('functions over', limit_fn, 'lines:')
for c, p in sorted(fns, reverse=True):
    if c > limit_fn: print(f'  {c:5} {p}')
print('largest files:', ', '.join(f'{p} {c}' for c, n, p in sorted(files, reverse=True)[:5]))
print('largest fns:', ', '.join(f'{p} {c}' for c, p in sorted(fns, reverse=True)[:5]))
