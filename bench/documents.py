#!/usr/bin/env python3
"""Would a site-wide dictionary pay for HTML pages? Not a test: the measurement
that chose run::documents' bounds (64 KiB; bench/documents.sh measures what
precompress itself makes).

For a folder of real multi-page HTML (Debian's python3.11-doc and
postgresql-doc-15 are two), the pages in path order are split in two: every
other page goes into a dictionary (raw bytes, concatenated up to --max
bytes: what dcb/dcz take), and each page of the other half (--pages of them)
is compressed with brotli -q 11 and, against the dictionary, with
zstd -19 --patch-from (the payload of a dcz, whose 40-byte header is added).
Prints per site: pages, the median and total delta/br, the dictionary's own
brotli size (what a first visit would fetch at idle) and after how many pages
a visitor has paid it back.

    python3 bench/documents.py DIR [DIR...] [--max BYTES] [--pages N]
"""

import argparse
import os
import statistics
import subprocess
import tempfile


def run(cmd, data):
    return subprocess.run(cmd, input=data, capture_output=True, check=True).stdout


def pages_of(root):
    out = []
    for d, _, files in os.walk(root):
        for f in files:
            if f.endswith((".html", ".htm")):
                out.append(os.path.join(d, f))
    return sorted(out)


def measure(root, max_bytes, n_pages):
    pages = pages_of(root)
    train, test = pages[0::2], pages[1::2]
    dictionary = bytearray()
    for p in train:
        b = open(p, "rb").read()
        if len(dictionary) + len(b) > max_bytes:
            continue
        dictionary += b
    step = max(1, len(test) // n_pages)
    test = test[::step][:n_pages]
    with tempfile.NamedTemporaryFile() as dict_file:
        dict_file.write(dictionary)
        dict_file.flush()
        rows = []
        for p in test:
            body = open(p, "rb").read()
            br = len(run(["brotli", "-q", "11", "-c"], body))
            # --patch-from wants a file, not a pipe (it sizes the window by it).
            dcz = 40 + len(
                subprocess.run(
                    ["zstd", "-q", "-19", "--single-thread", f"--patch-from={dict_file.name}", "-c", p],
                    capture_output=True,
                    check=True,
                ).stdout
            )
            rows.append((br, dcz))
        dict_br = len(run(["brotli", "-q", "11", "-c"], bytes(dictionary)))
    ratios = [d / b for b, d in rows]
    saved = statistics.mean(b - d for b, d in rows)
    return {
        "site": root,
        "pages": len(pages),
        "measured": len(rows),
        "dictionary": len(dictionary),
        "dictionary_br": dict_br,
        "median": statistics.median(ratios),
        "total": sum(d for _, d in rows) / sum(b for b, _ in rows),
        "payback": dict_br / saved if saved > 0 else float("inf"),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--max", type=int, default=1 << 20)
    ap.add_argument("--pages", type=int, default=80)
    a = ap.parse_args()
    print("| site | pages | dictionary (br) | dcz / br, median | dcz / br, all | pays back after |")
    print("|---|---:|---:|---:|---:|---:|")
    for d in a.dirs:
        r = measure(d, a.max, a.pages)
        print(
            f"| {r['site']} | {r['pages']} ({r['measured']} measured) | {r['dictionary']:,} B ({r['dictionary_br']:,} B) "
            f"| {r['median']:.2f} | {r['total']:.2f} | {r['payback']:.0f} pages |"
        )


if __name__ == "__main__":
    main()
