#!/usr/bin/env python3
"""Helpers for bench/compare.sh.

  sizes.py ours DIR MEASURE_JSON RUN REPORT     -> one JSON line for precompress (REPORT: its --json)
  sizes.py inputs DIR                           -> the files precompress compressed or tried (one per line)
  sizes.py cli|zopfli|peer DIR MEASURE RUN LIST [MEASURE...] -> one JSON line for another tool
      on LIST (cli: one MEASURE per codec pass, br zstd gzip, summed)
  sizes.py table JSONL SET                      -> the markdown table (medians over runs)

Bytes per codec are what a client that accepts only that coding downloads for
the compared files: the variant where one exists and is smaller, else the source.
"""
import json, os, statistics, sys

SUFFIX = {"br": "br", "zstd": "zst", "gzip": "gz"}

def manifest(d):
    return json.load(open(os.path.join(d, "precompress-manifest.json")))

def inputs(d):
    m = manifest(d)
    out = []
    for rel, a in m["files"].items():
        reasons = set(a["skipped"].values())
        if a["encodings"] or reasons == {"not_smaller"}:
            out.append(rel)
    return sorted(out)

def tool_bytes(d, files):
    per = {}
    for c, suf in SUFFIX.items():
        total = 0
        for rel in files:
            src = os.path.getsize(os.path.join(d, rel))
            p = os.path.join(d, rel + "." + suf)
            total += min(os.path.getsize(p), src) if os.path.exists(p) else src
        per[c] = total
    return per

def main():
    cmd = sys.argv[1]
    if cmd == "inputs":
        print("\n".join(inputs(sys.argv[2])))
    elif cmd in ("ours", "cli", "zopfli", "peer"):
        d, meas, run = sys.argv[2], json.loads(sys.argv[3]), int(sys.argv[4])
        files = inputs(d) if cmd == "ours" else open(sys.argv[5]).read().split("\n")
        files = [f for f in files if f]
        cpu_by_codec = None
        if cmd == "ours":
            rep = json.load(open(sys.argv[5]))
            cpu_by_codec = {c: sum(j["cpu_micros"] for j in rep["jobs"] if j["coding"] == c) / 1e6 for c in SUFFIX}
            meas["schedule"] = rep["schedule"]
        elif cmd == "cli":
            passes = [meas] + [json.loads(m) for m in sys.argv[6:]]
            cpu_by_codec = {c: p["cpu"] for c, p in zip(SUFFIX, passes)}
            meas = {"wall": sum(p["wall"] for p in passes), "cpu": sum(p["cpu"] for p in passes),
                    "rss_mib": max(p["rss_mib"] for p in passes)}
        row = {"tool": cmd, "run": run, **meas, "bytes": tool_bytes(d, files), "cpu_by_codec": cpu_by_codec,
               "source_bytes": sum(os.path.getsize(os.path.join(d, f)) for f in files), "files": len(files)}
        print(json.dumps(row))
    elif cmd == "table":
        rows = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
        name = sys.argv[3]
        tools = ["ours", "cli", "zopfli", "peer"]
        label = {"ours": "precompress (br+zstd+gz)", "cli": f"brotli/zstd/gzip CLIs, xargs -P{os.cpu_count()}",
                 "zopfli": "zopfli (gz only)", "peer": "npm precompress 12.0.7 (br+gz)"}
        med = {}
        for t in tools:
            rs = [r for r in rows if r["tool"] == t]
            if not rs:
                continue
            med[t] = {k: statistics.median(r[k] for r in rs) for k in ("wall", "cpu", "rss_mib")}
            med[t]["bytes"] = rs[0]["bytes"]
            if rs[0].get("cpu_by_codec"):
                med[t]["cpu_by_codec"] = {c: statistics.median(r["cpu_by_codec"][c] for r in rs) for c in SUFFIX}
            if rs[0].get("schedule"):
                med[t]["schedule"] = sorted((r["schedule"] for r in rs), key=lambda x: x["ratio_to_floor"])[len(rs) // 2]
            med[t]["runs"] = len(rs)
            med[t]["files"] = rs[0]["files"]
            med[t]["source"] = rs[0]["source_bytes"]
        mib = lambda b: f"{b / 2**20:.2f}"
        print(f"### {name}: {med['ours']['files']} files, {mib(med['ours']['source'])} MiB compressed, medians of {med['ours']['runs']} runs\n")
        print("| tool | wall s | CPU s | peak RSS MiB | br MiB | zstd MiB | gzip MiB |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for t, m in med.items():
            b = m["bytes"]
            show = lambda c: mib(b[c]) if (t, c) not in {("zopfli", "br"), ("zopfli", "zstd"), ("peer", "zstd")} else "-"
            print(f"| {label[t]} | {m['wall']:.1f} | {m['cpu']:.1f} | {m['rss_mib']:.0f} | {show('br')} | {show('zstd')} | {show('gzip')} |")
        o = med["ours"]
        print("\nRatios ours/theirs (below 1 is better for us):\n")
        for t, m in med.items():
            if t == "ours":
                continue
            parts = [f"wall {o['wall'] / m['wall']:.2f}", f"CPU {o['cpu'] / m['cpu']:.2f}"]
            for c in ("br", "zstd", "gzip"):
                if (t, c) not in {("zopfli", "br"), ("zopfli", "zstd"), ("peer", "zstd")}:
                    parts.append(f"{c} bytes {o['bytes'][c] / m['bytes'][c]:.4f}")
            print(f"- vs {label[t]}: " + ", ".join(parts))
        if "cpu_by_codec" in med.get("cli", {}):
            oc, cc = o["cpu_by_codec"], med["cli"]["cpu_by_codec"]
            print("\nCPU per codec, ours (sum of per-job thread CPU) vs the CLI pass (user+sys):\n")
            print("| codec | ours CPU s | CLI CPU s | ratio | ours MiB | CLI MiB | bytes ratio |")
            print("|---|---:|---:|---:|---:|---:|---:|")
            for c in SUFFIX:
                print(f"| {c} | {oc[c]:.1f} | {cc[c]:.1f} | {oc[c] / cc[c]:.2f} | {mib(o['bytes'][c])} | {mib(med['cli']['bytes'][c])} | {o['bytes'][c] / med['cli']['bytes'][c]:.4f} |")
        if "schedule" in o:
            sc = o["schedule"]
            print(f"\nScheduling (ours, median run): job phase {sc['jobs_wall_ms'] / 1000:.1f} s wall vs floor "
                  f"max(job CPU / threads, longest job) = {sc['floor_ms'] / 1000:.1f} s "
                  f"(job time {sc['jobs_cpu_ms'] / 1000:.1f} s, longest {sc['longest_job_ms'] / 1000:.1f} s): ratio {sc['ratio_to_floor']:.3f}")

main()
