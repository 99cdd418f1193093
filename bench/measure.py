#!/usr/bin/env python3
"""Runs a command and prints one JSON line: wall seconds, CPU seconds (user+sys
of the command and its children, and each apart) and peak RSS in MiB. Used by the bench scripts.
With MEASURE_STDOUT=FILE the command's stdout goes to FILE."""
import json, resource, subprocess, sys, time

t = time.perf_counter()
import os
out = open(os.environ["MEASURE_STDOUT"], "wb") if os.environ.get("MEASURE_STDOUT") else subprocess.DEVNULL
proc = subprocess.run(sys.argv[1:], stdout=out, stderr=subprocess.PIPE)
wall = time.perf_counter() - t
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
if proc.returncode != 0:
    sys.stderr.write(proc.stderr.decode(errors="replace"))
    sys.exit(f"measure: {sys.argv[1:]} exited {proc.returncode}")
print(json.dumps({"wall": round(wall, 3), "cpu": round(ru.ru_utime + ru.ru_stime, 3), "user": round(ru.ru_utime, 3), "sys": round(ru.ru_stime, 3), "rss_mib": round(ru.ru_maxrss / 1024, 1)}))
