"""What a worker forked from a process that already imported torch would save, against one started afresh (as every
part's zygote is started now: benchmarks/RESULTS.md).

    python benchmarks/fork_sharing.py [--steps 30]

Two processes each time, a parent that imported torch and a child that trains a small LSTM (the size of the kit's
models) for --steps Adam steps: once a child forked from the parent after its import, once a child started as a new
interpreter that imports torch itself. Prints each process's PSS and its anonymous part, their sum (what a
container's memory limit counts of the two), and the child's CPU seconds. `import torch` leaves about 145 MB of
private heap in every process that makes it; a forked child shares those pages with its parent until it writes
them (Python writes reference counts, so part of them is copied).
"""

from __future__ import annotations

import argparse
import ast
import os
import resource
import subprocess
import sys

CHILD = """
import sys, time, torch
torch.manual_seed(0)
model = torch.nn.LSTM(48, 128, batch_first=True)
optimizer = torch.optim.Adam(model.parameters())
x = torch.randn(64, 20, 48)
for _ in range({steps}):
    optimizer.zero_grad()
    model(x)[0].sum().backward()
    optimizer.step()
print("trained", flush=True)
sys.stdin.read()   # stay alive until the parent has measured both
"""


def memory(pid: int) -> tuple[int, int]:
    """(PSS, anonymous PSS) of one process, in MB."""
    with open(f"/proc/{pid}/smaps_rollup") as f:
        fields = {line.split(":")[0]: int(line.split()[1]) for line in f if line.split()[-1] == "kB"}
    return fields["Pss"] // 1024, fields["Pss_Anon"] // 1024


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(forked: bool, steps: int) -> dict:
    import torch  # noqa: F401 (the parent's import, which a forked child shares)

    code = CHILD.format(steps=steps)
    if forked:
        from_parent, to_child = os.pipe()  # os.pipe(): (read end, write end)
        from_child, to_parent = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:  # the child never returns into the parent's code, whatever the training does
                os.close(to_child)
                os.close(from_child)
                os.dup2(from_parent, 0)
                os.dup2(to_parent, 1)
                exec(compile(code, "<child>", "exec"), {"__name__": "__child__"})
            finally:
                os._exit(0)
        os.close(from_parent)
        os.close(to_parent)
        with os.fdopen(from_child) as reply:
            reply.readline()
        result = dict(child=memory(pid), parent=memory(os.getpid()), child_cpu=cpu_seconds(pid))
        os.close(to_child)
        os.waitpid(pid, 0)
        return result
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    proc.stdout.readline()
    result = dict(child=memory(proc.pid), parent=memory(os.getpid()), child_cpu=cpu_seconds(proc.pid))
    proc.stdin.close()
    proc.wait()
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=30, help="Adam steps the child trains (default 30)")
    args = parser.parse_args()
    if args.steps < 1:
        parser.error(f"--steps: expected a positive number, got {args.steps}")
    print(
        f"{'child':22s} {'parent PSS (anon) MB':>21s} {'child PSS (anon) MB':>20s} {'sum MB':>7s} {'child CPU s':>12s}"
    )
    for forked in (False, True):  # each way in a parent of its own, so that neither inherits the other's heap
        r = measure_in_fresh_parent(forked, args.steps)
        (pp, pa), (cp, ca) = r["parent"], r["child"]
        print(
            f"{'forked after the import' if forked else 'a new interpreter':22s} {f'{pp} ({pa})':>21s} "
            f"{f'{cp} ({ca})':>20s} {pp + cp:7d} {r['child_cpu']:12.2f}"
        )
    print(
        f"(load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; "
        f"this process's own peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MB)"
    )
    return 0


def measure_in_fresh_parent(forked: bool, steps: int) -> dict:
    """measure() in a new interpreter of its own, its result read back as a dict literal."""
    code = (
        f"import sys; sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r}); "
        f"import fork_sharing; print(repr(fork_sharing.measure({forked}, {steps})))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return ast.literal_eval(out.strip().splitlines()[-1])


if __name__ == "__main__":
    raise SystemExit(main())
