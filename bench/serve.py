"""Helpers for bench/serve.sh (stdlib only).

  python3 bench/serve.py gen BYTES SEED          JS-like text on stdout (deterministic)
  python3 bench/serve.py port                    a free loopback port
  python3 bench/serve.py wrk FILE                wrk --latency output: "rps p50_ms p99_ms"
  python3 bench/serve.py mem PID                 "rss / peak" of PID and its children
  python3 bench/serve.py rounds ROWS NOTES       markdown from ROWS (tab-separated:
                                                 round answer server rps p50 p99): medians
"""
import os
import random
import re
import socket
import statistics
import sys


def gen(size, seed):
    r = random.Random(seed)
    chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_$"
    # A vocabulary of 1500 identifiers gives brotli -q 11 about 1:3 on 300 KB.
    voc = ["".join(r.choice(chars) for _ in range(r.randint(3, 10))) for _ in range(1500)]
    words = ("const let var function return if else for while this new await async "
             "import export default class extends null undefined true false").split()
    i = lambda: r.choice(voc)
    lines = [
        lambda: f"function {i()}({i()}, {i()}) {{ return {i()}.{i()}({r.randint(0, 99999)}) + {r.random():.6f}; }}\n",
        lambda: f"const {i()} = {{ {i()}: \"{i()} {i()}\", {i()}: [{', '.join(str(r.randint(0, 9999)) for _ in range(r.randint(1, 6)))}] }};\n",
        lambda: f"if ({i()} {r.choice(['===', '!==', '<', '>='])} {r.randint(0, 999)}) {{ {i()}.{i()} = {r.choice(words)}; }}\n",
        lambda: f"export {r.choice(['const', 'let'])} {i()} = {i()} => {i()}?.{i()} ?? {r.randint(0, 1 << 20)};\n",
        lambda: f"  {r.choice(words)} {i()}.{i()}(\"{i()}\", {r.randint(0, 65535):#x});\n",
    ]
    out, n = [], 0
    while n < size:
        s = r.choice(lines)()
        out.append(s)
        n += len(s)
    sys.stdout.write("".join(out)[:size])


def port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        print(s.getsockname()[1])


def ms(v):
    m = re.fullmatch(r"([\d.]+)(us|ms|s|m)", v)
    return float(m[1]) * {"us": 1e-3, "ms": 1, "s": 1e3, "m": 6e4}[m[2]]


def wrk(path):
    text = open(path).read()
    for bad in ("Socket errors", "Non-2xx or 3xx"):
        if bad in text:
            sys.exit(f"wrk: {bad} in {path}:\n{text}")
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text)[1])
    p50 = ms(re.search(r"^\s+50%\s+(\S+)", text, re.M)[1])
    p99 = ms(re.search(r"^\s+99%\s+(\S+)", text, re.M)[1])
    print(f"{rps:.0f} {p50:.3f} {p99:.3f}")


def mem(pid):
    """VmRSS and VmHWM of PID and its children (nginx's master and worker), kB."""
    pids = [pid]
    for t in os.listdir(f"/proc/{pid}/task"):
        pids += open(f"/proc/{pid}/task/{t}/children").read().split()
    rss = hwm = 0
    for q in pids:
        for line in open(f"/proc/{q}/status"):
            k, _, v = line.partition(":")
            if k == "VmRSS":
                rss += int(v.split()[0])
            elif k == "VmHWM":
                hwm += int(v.split()[0])
    print(f"{rss} kB / {hwm} kB")


def rounds(rows_path, notes_path):
    rows = [l.rstrip("\n").split("\t") for l in open(rows_path) if l.strip()]
    print(open(notes_path).read().rstrip() + "\n")
    by = {}
    for r, case, server, rps, p50, p99 in rows:
        by.setdefault((case, server), []).append((float(rps), float(p50), float(p99)))
    servers = list(dict.fromkeys(s for _, _, s, *_ in rows))
    med = lambda xs: statistics.median(xs)
    # The ratio within each round too: a round's servers ran seconds apart,
    # so a neighbour's load on the shared machine moves them together.
    print("| answer | server | requests/s (median) | ratio to nginx | ratio to nginx, per round (median) | p99 ms (median) | p99 ratio to nginx | p99 ratio, per round (median) | p50 ms | requests/s per round |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for case in dict.fromkeys(c for _, c, *_ in rows):
        base = by[case, "nginx"]
        b_rps, b_p99 = med([x[0] for x in base]), med([x[2] for x in base])
        for s in servers:
            xs = by[case, s]
            rps, p50, p99 = med([x[0] for x in xs]), med([x[1] for x in xs]), med([x[2] for x in xs])
            paired = med([x[0] / b[0] for x, b in zip(xs, base)])
            paired99 = med([x[2] / b[2] for x, b in zip(xs, base)])
            each = " ".join(f"{x[0]:.0f}" for x in xs)
            print(f"| {case} | {s} | {rps:.0f} | {rps / b_rps:.2f} | {paired:.2f} | {p99:.3f} | {p99 / b_p99:.2f} | {paired99:.2f} | {p50:.3f} | {each} |")


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    {"gen": lambda: gen(int(args[0]), int(args[1])), "port": port,
     "wrk": lambda: wrk(args[0]), "mem": lambda: mem(args[0]),
     "rounds": lambda: rounds(args[0], args[1])}[cmd]()
