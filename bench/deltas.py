#!/usr/bin/env python3
"""Helpers for bench/deltas.sh.

  deltas.py layout CACHE WORK "NAME OLD NEW FILE..."...
      -> WORK/old/assets, WORK/new/assets (files read from CACHE/NAME-VER.tgz) and
         WORK/pairs.json
  deltas.py table WORK VERSION
      -> the markdown table from WORK/{plain,delta}/precompress-manifest.json,
         WORK/{plain,delta}.report.json (--json) and WORK/{plain,delta}.measure.json
         (bench/measure.py); the delta run is optional (its columns are then '-')

Layout: each file becomes assets/<stem>-<hash8>.<ext> (stem: the base name up to its
last dot), as a bundler names its output. hash8 is the first 8 letters or digits of
the base64url sha256 of the content ('-' and '_' dropped, so the stem ends at the
last '-'); if none of the 8 is a digit, the last becomes sha256[0] % 10.
"""
import base64, hashlib, json, os, sys, tarfile

CODINGS = ("br", "zstd", "gzip", "dcb", "dcz")


def hash8(data):
    d = hashlib.sha256(data).digest()
    h = "".join(c for c in base64.urlsafe_b64encode(d).decode() if c.isalnum())[:8]
    return h if any(c.isdigit() for c in h) else h[:7] + str(d[0] % 10)


def kind(old, new):
    o, n = old.split("."), new.split(".")
    return "major" if o[0] != n[0] else "minor" if o[1] != n[1] else "patch"


def layout(cache, work, specs):
    pairs, seen = [], set()
    for spec in specs:
        name, old, new, *files = spec.split()
        row = {f: {"pkg": name, "old": old, "new": new, "kind": kind(old, new), "file": f} for f in files}
        for side, ver in (("old", old), ("new", new)):
            with tarfile.open(os.path.join(cache, f"{name}-{ver}.tgz")) as t:
                for f in files:
                    data = t.extractfile("package/" + f).read()
                    stem, ext = os.path.basename(f).rsplit(".", 1)
                    rel = f"assets/{stem}-{hash8(data)}.{ext}"
                    if side == "new":
                        if (stem, ext) in seen:
                            sys.exit(f"deltas.py: two files would be named {stem}-*.{ext}")
                        seen.add((stem, ext))
                    os.makedirs(os.path.join(work, side, "assets"), exist_ok=True)
                    with open(os.path.join(work, side, rel), "wb") as o:
                        o.write(data)
                    row[f][side + "_asset"] = rel
        pairs += row.values()
    json.dump(pairs, open(os.path.join(work, "pairs.json"), "w"), indent=1)


def load(work, run):
    """(manifest files, report, measure) of one run, or None if it did not happen."""
    rep = os.path.join(work, run + ".report.json")
    if not os.path.exists(rep) or os.path.getsize(rep) == 0:
        return None
    man = json.load(open(os.path.join(work, run, "precompress-manifest.json")))["files"]
    return man, json.load(open(rep)), json.load(open(os.path.join(work, run + ".measure.json")))


def cpu(report, path, codings):
    """CPU seconds per coding of one asset's jobs."""
    out = {}
    for j in report["jobs"]:
        if j["path"] == path and j["coding"] in codings:
            out[j["coding"]] = out.get(j["coding"], 0) + j["cpu_micros"] / 1e6
    return out


def table(work, version):
    pairs = json.load(open(os.path.join(work, "pairs.json")))
    plain, delta = load(work, "plain"), load(work, "delta")
    rows = []
    for p in pairs:
        a = p["new_asset"]
        f = plain[0][a]
        enc = {v["coding"]: v["size"] for v in f["encodings"]}
        r = {"src": f["size"], "br": enc.get("br", f["size"]), "zstd": enc.get("zstd", f["size"])}
        r["cpu"] = cpu(plain[1], a, ("br", "zstd", "gzip"))
        if delta:
            for d in delta[0][a].get("deltas", []):
                r[d["coding"]] = d["size"]
            r["cpu"].update(cpu(delta[1], a, ("dcb", "dcz")))
        ds = [r[c] for c in ("dcb", "dcz") if c in r]
        r["best"] = min(ds) if ds else None
        rows.append((p, r))

    dash = lambda v, f=lambda v: f"{v:,}": "-" if v is None else f(v)
    pct = lambda a, b: f"{100 * a / b:.1f}%"
    sec = lambda v: f"{v:.2f}"

    def line(label, release, r):
        cols = [label, release, f"{r['src']:,}", f"{r['br']:,}", f"{r['zstd']:,}",
                dash(r.get("dcb")), dash(r.get("dcz")),
                dash(r["best"], lambda v: pct(v, r["br"]))]
        cols += [sec(r["cpu"][c]) if c in r["cpu"] else "-" for c in CODINGS]
        return "| " + " | ".join(cols) + " |"

    print(f"precompress {version}, {os.cpu_count()} cores, -j 2, bytes from the manifests, CPU s = sum of the jobs' cpu_micros")
    print()
    print("| file | release | source | br | zstd | dcb | dcz | best delta / br | CPU br | CPU zstd | CPU gzip | CPU dcb | CPU dcz |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for p, r in rows:
        print(line(p["file"], f"{p['pkg']} {p['old']}→{p['new']} ({p['kind']})", r))
    tot = {k: sum(r[k] for _, r in rows) for k in ("src", "br", "zstd")}
    # Delta totals are what a returning visitor downloads: an asset without that delta counts its br.
    for c in ("dcb", "dcz", "best"):
        tot[c] = sum(r.get(c) or r["br"] for _, r in rows) if delta else None
    tot["cpu"] = {c: sum(r["cpu"].get(c, 0) for _, r in rows) for c in CODINGS if any(c in r["cpu"] for _, r in rows)}
    print(line("**total**", f"{len(rows)} files", tot))
    print()
    print("Totals of dcb, dcz and best delta count an asset's br where it has no such delta.  ")

    for k in ("patch", "minor"):
        sel = [r for p, r in rows if p["kind"] == k]
        br = sum(r["br"] for r in sel)
        if not sel:
            continue
        if delta:
            got = sum(r["best"] or r["br"] for r in sel)
            print(f"{k} releases: a returning visitor downloads {pct(got, br)} of the br bytes ({got:,} of {br:,}, {len(sel)} files)  ")
        else:
            print(f"{k} releases: - (no run with --dictionary-from; br bytes {br:,}, {len(sel)} files)  ")
    pm = plain[2]
    if delta:
        dm = delta[2]
        print(f"CPU with --dictionary-from / without = {dm['cpu'] / pm['cpu']:.2f} "
              f"({dm['cpu']:.2f} s / {pm['cpu']:.2f} s whole run; wall {dm['wall']:.2f} s / {pm['wall']:.2f} s)")
    else:
        print(f"CPU with --dictionary-from / without = - (without: {pm['cpu']:.2f} s whole run, wall {pm['wall']:.2f} s)")


if __name__ == "__main__":
    cmd, *args = sys.argv[1:]
    {"layout": lambda: layout(args[0], args[1], args[2:]), "table": lambda: table(*args)}[cmd]()
