"""Benchmark one grading command: CPU seconds, wall seconds and peak memory of its whole process tree.

    python benchmarks/grade_benchmark.py [-- COMMAND ...]     (default: python -m autograder grade solutions)

CPU seconds come from the kernel's accounting of the command and every descendant it waited for
(RUSAGE_CHILDREN). Peak memory is sampled from /proc every 20 ms over the whole tree, two ways: the sum of
proportional set sizes (PSS: a page shared by k processes counts 1/k to each, so the sum is the physical
memory the tree uses, what a container's memory limit counts) and the sum of resident set sizes (RSS:
shared pages such as torch's libraries counted once per process, an upper bound).
Gradescope's default container: 1/2 vCPU, 768 MB, 10 minutes.
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        tree.setdefault(ppid, []).append(int(entry))
    return tree


def _process_memory(pid: int) -> tuple[int, int]:
    """(Pss, Rss) of one process in bytes; (0, 0) once it is gone."""
    pss = rss = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    pss = int(line.split()[1]) * 1024
                elif line.startswith("Rss:"):
                    rss = int(line.split()[1]) * 1024
    except OSError:
        pass
    return pss, rss


def _name(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            words = f.read().split(b"\0")
        return " ".join(w.decode(errors="replace") for w in words if w)[-60:] or "?"
    except OSError:
        return "?"


def tree_memory(root: int, per_process: list | None = None) -> tuple[int, int]:
    """(sum of Pss, sum of Rss) in bytes over `root` and all its descendants; with `per_process`, append
    (pid, Pss, command) of each process to it."""
    tree, pss, rss, stack = _children(), 0, 0, [root]
    while stack:
        pid = stack.pop()
        stack.extend(tree.get(pid, []))
        p, r = _process_memory(pid)
        pss, rss = pss + p, rss + r
        if per_process is not None and p:
            per_process.append((pid, p, _name(pid)))
    return pss, rss


def measure(command: list[str]) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    peak_pss = peak_rss = 0
    at_peak: list = []
    while proc.poll() is None:
        now: list = []
        pss, rss = tree_memory(proc.pid, now)
        if pss > peak_pss:
            at_peak = now
        peak_pss, peak_rss = max(peak_pss, pss), max(peak_rss, rss)
        time.sleep(0.02)
    output = proc.stdout.read()
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return dict(command=" ".join(command), returncode=proc.returncode, cpu_seconds=cpu, wall_seconds=wall,
                peak_tree_pss_mb=peak_pss / 2 ** 20, peak_tree_rss_mb=peak_rss / 2 ** 20, output=output,
                at_peak=[(pid, p / 2 ** 20, name) for pid, p, name in at_peak])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", nargs="*", help="the command to measure")
    args = parser.parse_args()
    root = Path(__file__).resolve().parents[1]
    command = args.command or [sys.executable, "-m", "autograder", "grade", str(root / "solutions")]
    result = measure(command)
    print(result["output"][-3000:])
    print(f"command:        {result['command']}")
    print(f"exit status:    {result['returncode']}")
    print(f"CPU seconds:    {result['cpu_seconds']:.1f} (target <= 120)")
    print(f"wall seconds:   {result['wall_seconds']:.1f}")
    print(f"peak tree PSS:  {result['peak_tree_pss_mb']:.0f} MB (physical memory; target <= 700)")
    print(f"peak tree RSS:  {result['peak_tree_rss_mb']:.0f} MB (shared pages counted per process)")
    print("at the peak:    " + "\n                ".join(f"{mb:5.0f} MB PSS  pid {pid}  {name}"
                                                         for pid, mb, name in result["at_peak"]))
    return result["returncode"]


if __name__ == "__main__":
    raise SystemExit(main())
