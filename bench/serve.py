"""Helpers for bench/serve.sh (stdlib only).

  python3 bench/serve.py gen BYTES SEED          JS-like text on stdout (deterministic)
  python3 bench/serve.py port                    a free loopback port
  python3 bench/serve.py seq PORT PATH [N]       N sequential GETs on one keep-alive
                                                 connection: "median_ms p99_ms"
  python3 bench/serve.py wrk FILE                wrk --latency output: "rps p50_ms p99_ms"
  python3 bench/serve.py table ROWS NOTES        markdown from ROWS (tab-separated:
                                                 server file rps p50 p99 seq_med seq_p99)
"""
import http.client
import math
import random
import re
import socket
import sys
import time


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


def pct(xs, p):  # nearest rank
    xs = sorted(xs)
    return xs[max(0, math.ceil(p / 100 * len(xs)) - 1)]


def seq(port, path, n=200, warmup=20):
    c = http.client.HTTPConnection("127.0.0.1", int(port), timeout=10)
    c.connect()
    c.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    times = []
    for k in range(warmup + n):
        t = time.perf_counter()
        c.request("GET", path, headers={"Accept-Encoding": "br"})
        resp = c.getresponse()
        resp.read()
        dt = (time.perf_counter() - t) * 1000
        if resp.status != 200 or resp.getheader("Content-Encoding") != "br" or resp.will_close:
            sys.exit(f"seq: {path} on :{port}: status {resp.status}, "
                     f"Content-Encoding {resp.getheader('Content-Encoding')}, will_close {resp.will_close}")
        if k >= warmup:
            times.append(dt)
    c.close()
    print(f"{pct(times, 50):.3f} {pct(times, 99):.3f}")


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


def table(rows_path, notes_path):
    rows = [l.rstrip("\n").split("\t") for l in open(rows_path) if l.strip()]
    print(open(notes_path).read().rstrip() + "\n")
    print("| server | file | requests/s | p50 ms | p99 ms | keep-alive seq median ms | keep-alive seq p99 ms |")
    print("|---|---|---:|---:|---:|---:|---:|")
    by = {}
    for server, file, rps, p50, p99, sm, s99 in rows:
        by[server, file] = (float(rps), float(p99), float(sm), float(s99))
        print(f"| {server} | {file} | {float(rps):.0f} | {p50} | {p99} | {sm} | {s99} |")
    print("\n| file | req/s precompress/nginx | p99 precompress/nginx | seq median precompress/nginx | seq p99 precompress/nginx |")
    print("|---|---:|---:|---:|---:|")
    for file in dict.fromkeys(f for _, f, *_ in rows):
        a, b = by.get(("precompress serve", file)), by.get(("nginx", file))
        if a and b:
            print(f"| {file} | {a[0] / b[0]:.2f} | {a[1] / b[1]:.2f} | {a[2] / b[2]:.2f} | {a[3] / b[3]:.2f} |")


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    {"gen": lambda: gen(int(args[0]), int(args[1])), "port": port,
     "seq": lambda: seq(args[0], args[1], int(args[2]) if len(args) > 2 else 200),
     "wrk": lambda: wrk(args[0]), "table": lambda: table(args[0], args[1])}[cmd]()
