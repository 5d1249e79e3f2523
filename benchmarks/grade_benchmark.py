"""Benchmark one grading command: CPU seconds, wall seconds and peak memory of its whole process tree, on a quiet
machine and while another process keeps one core busy.

    python benchmarks/grade_benchmark.py [--mode quiet|loaded|both] [--runs N] [--baseline REF] [-- COMMAND ...]
                (default: both modes of a full grade of the reference, `engine.grade(solutions)`, which also
                prints where its seconds went: each part's checks, its training checks, the rest; --baseline: the
                same grade in a worktree of REF too, alternating, and the ratio of the two trees' medians)

"loaded" starts a process that spins on one core for as long as the command runs (what another grading job or a
student's notebook does to a shared machine); "quiet" adds nothing, so the machine must be idle otherwise: the
benchmark prints the load average before each run. Targets: at most 60 CPU seconds and 550 MB peak PSS.

CPU seconds: the sum over every process of the tree of the user and system time the kernel reports for it
(/proc/<pid>/stat), read at each sample, so that a process counts although nobody waits for it (the sandboxed
workers: their exit status goes to the worker's own init, and their time never reaches RUSAGE_CHILDREN, which
saw 56 of about 160 CPU seconds of a full grade). It misses what a process spends after the last sample
(under 20 ms each). RUSAGE_CHILDREN (the command and the descendants it waited for) is printed beside it, and
where the seconds went: the command's own process (a grade's grading process), its five busiest descendants (in
a full grade of the reference, the workers that train Parts 1, 4, 5, 6 and 7) and all the others.
Peak memory is sampled from /proc every 20 ms over the whole tree, two ways: the sum of proportional set sizes
(PSS: a page shared by k processes counts 1/k to each, so the sum is the physical memory the tree uses, what a
container's memory limit counts) and the sum of resident set sizes (RSS: shared pages such as torch's libraries
counted once per process, an upper bound).
A run that finds no cached encoder outputs (shared/encoder.py) pretrains the encoder first, as a machine's first grade
does (86 CPU s and 1.1 GB peak instead of about 65 s and 620 MB, measured 2026-12-03): the benchmark warns when the
run it measured was one of those.
--runs N measures each mode N times, alternating the modes, and ends with each mode's median and range: one run of the
same grade moves by 15 CPU s and 100 MB from the next on a 2-core machine (benchmarks/RESULTS.md), so a change smaller than
that needs several runs of each side.
Beside each run: the CPU seconds of `import torch` in a fresh interpreter just before it (the machine's speed at
that moment), the CPU steal during it (seconds the hypervisor ran other guests on this machine's CPUs: a shared
virtual machine's slow hours show in one or both) and the grade's CPU seconds in units of that import (a figure that
moves with the kit, not with the hour).
Gradescope's default container: 1/2 vCPU, 768 MB, 10 minutes.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path


def _children(pid: int) -> list[int]:
    """The children of `pid` (each listed under the thread that started it)."""
    found = []
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in threads:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                found.extend(int(c) for c in f.read().split())
        except (OSError, ValueError):
            continue
    return found


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
    """The process's command line, its last 60 characters, on one line (a `-c` program shown as "-c ...")."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            words = [w.decode(errors="replace") for w in f.read().split(b"\0") if w]
    except OSError:
        return "?"
    if "-c" in words[:-1]:
        at = words.index("-c")
        words[at + 1] = "..."
    return " ".join(words)[-60:] or "?"


TICK = os.sysconf("SC_CLK_TCK")


def _process_cpu(pid: int) -> tuple[tuple[int, int], float] | None:
    """((pid, start time), user + system CPU seconds so far) of one process; None once it is gone. The start time
    tells a process from a later one that got its pid."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()  # after the command name, which may hold spaces
    except (OSError, IndexError):
        return None
    # fields[0] is the state (field 3 of proc(5)): utime and stime are fields 14 and 15, starttime field 22
    return (pid, int(fields[19])), (int(fields[11]) + int(fields[12])) / TICK


def tree_memory(root: int, per_process: list | None = None, cpu: dict | None = None) -> tuple[int, int]:
    """(sum of Pss, sum of Rss) in bytes over `root` and all its descendants; with `per_process`, append
    (pid, Pss, command) of each process to it; with `cpu`, record each process's CPU seconds so far in it."""
    pss, rss, stack = 0, 0, [root]
    while stack:
        pid = stack.pop()
        stack.extend(_children(pid))
        p, r = _process_memory(pid)
        pss, rss = pss + p, rss + r
        if per_process is not None and p:
            per_process.append((pid, p, _name(pid)))
        if cpu is not None and (seen := _process_cpu(pid)) is not None:
            cpu[seen[0]] = seen[1]
    return pss, rss


def measure(command: list[str], cwd: Path | None = None, env: dict | None = None) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=cwd, env=env)
    peak_pss = peak_rss = 0
    at_peak: list = []
    cpu_of: dict = {}
    while proc.poll() is None:
        now: list = []
        pss, rss = tree_memory(proc.pid, now, cpu_of)
        if pss > peak_pss:
            at_peak = now
        peak_pss, peak_rss = max(peak_pss, pss), max(peak_rss, rss)
        time.sleep(0.02)
    output = proc.stdout.read()
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    waited = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    own = sum(seconds for (pid, _), seconds in cpu_of.items() if pid == proc.pid)
    others = sorted((seconds for (pid, _), seconds in cpu_of.items() if pid != proc.pid), reverse=True)
    return dict(
        command=" ".join(command),
        returncode=proc.returncode,
        cpu_seconds=max(sum(cpu_of.values()), waited),
        # where they went: the command's own process (a grade's grading process), then its busiest descendants (in a
        # full grade of the reference, the five trained parts' workers), then the others
        own_cpu_seconds=own,
        busiest_cpu_seconds=others[:BUSIEST],
        other_cpu_seconds=(len(others[BUSIEST:]), sum(others[BUSIEST:])),
        waited_cpu_seconds=waited,
        wall_seconds=wall,
        peak_tree_pss_mb=peak_pss / 2**20,
        peak_tree_rss_mb=peak_rss / 2**20,
        output=output,
        at_peak=[(pid, p / 2**20, name) for pid, p, name in at_peak],
    )


BUSIEST = 5  # descendants whose CPU seconds are printed one by one
SPIN = "while True: pass"
# The default command: `python -m autograder grade solutions`'s work (its clean start, then engine.grade), followed by
# where its wall seconds went (on a quiet machine a grade keeps one core busy, so wall seconds are close to CPU
# seconds).
GRADE_WITH_BREAKDOWN = """
import sys, time
try:
    from autograder.grader import clean_start  # as `python -m autograder grade` starts
    clean_start.start(grading=True)
except ImportError:  # a tree before it
    pass
from pathlib import Path
from autograder.grader.engine import grade
from autograder.public.progress import Progress
from autograder.public.score_table import table


class Clock(Progress):
    # Wall seconds of each stretch of the run (a step, or one of a part's two phases: a part's mark comes once per
    # phase), and of the checks within each stretch, keyed by the stretch's mark.
    def __init__(self):
        self.marks, self.checks, self.training = [], {}, {}
    def step(self, text):
        self.marks.append((text, time.monotonic()))
    def part(self, index, count, module, checks):
        self.marks.append((module, time.monotonic()))
    def check(self, number, name, training):
        self.started, self.training_check = time.monotonic(), training
    def check_done(self):
        kind = self.training if self.training_check else self.checks
        mark = len(self.marks) - 1
        kind[mark] = kind.get(mark, 0.0) + time.monotonic() - self.started
    def end(self):
        self.marks.append(("end", time.monotonic()))


clock = Clock()
report = grade(Path(sys.argv[1]), progress=clock)
print(table(report, show_checks=False))
print("where the wall seconds went (one core busy at a time: on a quiet machine, close to CPU seconds):")
for mark, ((name, t0), (_, t1)) in enumerate(zip(clock.marks, clock.marks[1:])):
    checks, training = clock.checks.get(mark, 0.0), clock.training.get(mark, 0.0)
    rest = f": checks {checks:5.1f} s, training checks {training:5.1f} s, start-ups and the rest " \\
           f"{t1 - t0 - checks - training:5.1f} s" if mark in clock.checks or mark in clock.training else ""
    print(f"  {name:38s} {t1 - t0:6.1f} s{rest}")
"""


def cached_encodings() -> set[str]:
    """The encoder outputs cached on this machine (shared/encoder.py): a grade that finds none of its data there
    first pretrains the encoder, which is no part of a grade's usual cost."""
    from shared.encoder import cache_dir

    folder = cache_dir()
    return {p.name for p in folder.glob("grids-*.pt")} if folder.is_dir() else set()


def import_seconds(runs: int = 3) -> float:
    """Median CPU seconds (user + system) of `import torch` in a fresh interpreter, on this machine as it is now: the
    one fixed cost every process of a grade pays, printed beside the grade's figures so that runs of different days or
    machines can be compared (the same grade measured 71.4 CPU s on one day and 56.4 on another, on machines of the
    same kind: benchmarks/RESULTS.md)."""
    seconds = []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([sys.executable, "-I", "-c", "import torch"], check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        seconds.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(seconds)


def stolen_seconds() -> float:
    """CPU seconds the hypervisor has run others on this machine's CPUs since boot, all CPUs together ("steal" in
    /proc/stat; 0 on bare metal). A virtual machine's slow hours show here, or in the yardstick alone."""
    with open("/proc/stat") as stat:
        fields = stat.readline().split()  # "cpu user nice system idle iowait irq softirq steal ..."
    return int(fields[8]) / os.sysconf("SC_CLK_TCK") if len(fields) > 8 else 0.0


def measure_in(mode: str, command: list[str], cwd: Path | None = None, env: dict | None = None) -> dict:
    """measure(command) on this machine as it is ("quiet") or beside a process spinning on one core ("loaded"), in
    `cwd` with `env`."""
    load = os.getloadavg()[0]
    cached = cached_encodings()
    spinner = subprocess.Popen([sys.executable, "-c", SPIN]) if mode == "loaded" else None
    stolen = stolen_seconds()
    try:
        return {
            **measure(command, cwd, env),
            "mode": mode,
            "load_before": load,
            "stolen": stolen_seconds() - stolen,
            "built_cache": sorted(cached_encodings() - cached),
        }
    finally:
        if spinner is not None:
            spinner.kill()
            spinner.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", choices=("quiet", "loaded", "both"), default="both")
    parser.add_argument("--runs", type=int, default=1, help="how many times to measure each mode (default 1)")
    parser.add_argument("--baseline", help="also grade the reference of this commit, alternating (the default command)")
    parser.add_argument("command", nargs="*", help="the command to measure")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error(f"--runs: expected a positive number, got {args.runs}")
    if args.baseline and args.command:
        parser.error("--baseline: compares the default command (a grade of the reference), not a command of yours")
    root = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root))  # shared/, for the encoder cache's folder
    sys.path.insert(0, str(root / "benchmarks"))
    from baseline import environment, worktree

    modes = ("quiet", "loaded") if args.mode == "both" else (args.mode,)
    results = []
    with contextlib.ExitStack() as stack:
        trees = {"this tree": root}
        if args.baseline:
            trees[args.baseline] = stack.enter_context(worktree(args.baseline))
        for mode in [m for _ in range(args.runs) for m in modes]:
            for tree_name, tree in trees.items():
                command = args.command or [sys.executable, "-c", GRADE_WITH_BREAKDOWN, str(tree / "solutions")]
                # The yardstick right before each run (on the machine as it is, without the spinner): its speed drifts
                # within a set of runs (one commit's grade measured 50 to 64 CPU s within half an hour), so each run is
                # read beside it.
                yardstick = import_seconds(runs=1)
                measured = measure_in(mode, command, tree if args.baseline else None, environment())
                results.append({**measured, "yardstick": yardstick, "tree": tree_name})
    for result in results:
        print(result["output"][-3000:])
        print(
            f"mode:           {result['mode']} (load average before: {result['load_before']:.2f} on "
            f"{os.cpu_count()} cores), {result['tree']}"
        )
        print(f"command:        {result['command'].splitlines()[0][:120]}")
        print(f"exit status:    {result['returncode']}")
        print(
            f"CPU seconds:    {result['cpu_seconds']:.1f} (target <= 60; of processes waited for: "
            f"{result['waited_cpu_seconds']:.1f})"
        )
        count, rest = result["other_cpu_seconds"]
        busiest = result["busiest_cpu_seconds"]
        print(
            f"CPU by process: the command's own {result['own_cpu_seconds']:.1f} s; its {len(busiest)} busiest "
            f"descendants {sum(busiest):.1f} s ({', '.join(f'{s:.1f}' for s in busiest)}); {count} more {rest:.1f} s"
        )
        print(f"wall seconds:   {result['wall_seconds']:.1f}")
        print(f"CPU steal:      {result['stolen']:.1f} s (the machine's CPUs run for others meanwhile, all together)")
        print(f"peak tree PSS:  {result['peak_tree_pss_mb']:.0f} MB (physical memory; target <= 550)")
        print(f"peak tree RSS:  {result['peak_tree_rss_mb']:.0f} MB (shared pages counted per process)")
        print(
            "at the peak:    "
            + "\n                ".join(f"{mb:5.0f} MB PSS  pid {pid}  {name}" for pid, mb, name in result["at_peak"])
        )
        if result["built_cache"]:
            print(
                f"WARNING:        this run pretrained the encoder and cached its outputs "
                f"({', '.join(result['built_cache'])}): a first grade on this machine, not a grade's usual "
                "cost. Run the benchmark again."
            )
    if len(results) > 1:
        print(
            f"\n{'tree':10s} {'mode':8s} {'CPU s':>7s} {'wall s':>7s} {'peak PSS MB':>12s} {'peak RSS MB':>12s} {'load before':>12s} "
            f"{'import torch CPU s':>19s} {'steal s':>8s} {'CPU s / import':>15s}"
        )
        for r in results:
            print(
                f"{r['tree'][:10]:10s} {r['mode']:8s} {r['cpu_seconds']:7.1f} {r['wall_seconds']:7.1f} {r['peak_tree_pss_mb']:12.0f} "
                f"{r['peak_tree_rss_mb']:12.0f} {r['load_before']:12.2f} {r['yardstick']:19.2f} {r['stolen']:8.1f} "
                f"{r['cpu_seconds'] / r['yardstick']:15.1f}"
            )
    if args.runs > 1 or args.baseline:
        print(
            f"\n{'tree':10s} {'mode':8s} {'runs':>5s} {'CPU s: median (range)':>24s} {'wall s: median (range)':>24s} "
            f"{'peak PSS MB: median (range)':>28s}"
        )
        medians = {}
        for mode in modes:
            for tree_name in trees:
                of = [r for r in results if r["mode"] == mode and r["tree"] == tree_name]
                cells = []
                for key, digits in (("cpu_seconds", 1), ("wall_seconds", 1), ("peak_tree_pss_mb", 0)):
                    values = [r[key] for r in of]
                    medians[tree_name, mode, key] = statistics.median(values)
                    cells.append(
                        f"{statistics.median(values):.{digits}f} ({min(values):.{digits}f} .. {max(values):.{digits}f})"
                    )
                print(f"{tree_name[:10]:10s} {mode:8s} {len(of):5d} {cells[0]:>24s} {cells[1]:>24s} {cells[2]:>28s}")
        if args.baseline:
            for mode in modes:
                cpu = medians["this tree", mode, "cpu_seconds"] / medians[args.baseline, mode, "cpu_seconds"]
                pss = medians["this tree", mode, "peak_tree_pss_mb"]
                print(
                    f"{mode}: this tree's median CPU seconds are {cpu:.2f}x {args.baseline}'s (target <= 0.7); its "
                    f"median peak PSS {pss:.0f} MB (target <= 450)"
                )
    sticks = [r["yardstick"] for r in results]
    print(
        f"\nthis machine: `import torch` in a fresh interpreter took {statistics.median(sticks):.2f} CPU s (median of "
        f"{len(sticks)}, one before each run: {min(sticks):.2f} .. {max(sticks):.2f}): compare a grade's CPU seconds "
        "across machines and days with it"
    )
    return max(r["returncode"] for r in results)


if __name__ == "__main__":
    raise SystemExit(main())
