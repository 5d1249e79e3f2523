"""Progress while grading (autograder/public/progress.py): on a terminal a bar names the part, the running check and the
training epoch and loss (sent by the worker between epochs); elsewhere one line per finished part; nothing in
--json runs or in CI. Progress goes to stderr, so the results table on stdout is the same in every mode."""

import fcntl
import io
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from autograder.grader import rubric
from autograder.public.client.replies import progress_of
from autograder.public.progress import Bar

ROOT = Path(__file__).resolve().parents[2]


def run_on_a_terminal(args: list[str], env: dict) -> tuple[str, str, int]:
    """(what the command wrote on its terminal (stderr, a pseudo-terminal), its stdout, its exit status)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 160, 0, 0))  # a 160-column terminal
    proc = subprocess.Popen(
        [sys.executable, "-m", "autograder", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=slave,
        cwd=ROOT,
        env=env,
    )
    os.close(slave)
    seen = b""
    while True:
        if select.select([master], [], [], 1.0)[0]:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the terminal closed with the command
                break
            if not chunk:
                break
            seen += chunk
        elif proc.poll() is not None:
            break
    os.close(master)
    stdout = proc.stdout.read().decode()
    return seen.decode(errors="replace"), stdout, proc.wait(timeout=60)


def environment(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    return {**env, **extra}


def test_a_terminal_shows_the_part_the_check_and_each_training_epoch(tmp_path):
    terminal, stdout, status = run_on_a_terminal(["grade", str(ROOT / "solutions"), "--part", "lstm_a"], environment())
    assert status == 0, terminal + stdout
    assert "[1/1] Part 6 lstm_a" in terminal
    assert re.search(r"6\.\d+ \w+ \(training\)", terminal), terminal[-2000:]
    epochs = [int(e) for e in re.findall(r"epoch (\d)/8, loss \d+\.\d{3}", terminal)]
    # the run ends at the threshold (autograder.grader.training.stops_at_threshold) or after its 8 epochs
    assert epochs and epochs == sorted(epochs) and epochs[-1] <= 8, terminal[-2000:]
    assert epochs[-1] < 8, "the reference reaches the threshold before its last epoch (benchmarks/epoch_scores.py)"
    assert "Part 6 lstm_a" in stdout and "epoch" not in stdout  # the table on stdout, unchanged


def test_json_runs_and_ci_show_no_progress_and_a_log_gets_one_line_per_part(tmp_path):
    # The public checks only (what progress shows does not depend on which checks run): three grades in a few seconds
    args = ["grade", str(ROOT / "solutions"), "--part", "bleu", "--part", "decoding", "--public-only"]
    terminal, stdout, status = run_on_a_terminal(args + ["--json", str(tmp_path / "r.json")], environment())
    assert status == 0 and (tmp_path / "r.json").exists()
    assert terminal == "", terminal
    ci = subprocess.run(
        [sys.executable, "-m", "autograder", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=environment(CI="true"),
    )
    assert ci.returncode == 0 and ci.stderr == "", ci.stderr
    log = subprocess.run(
        [sys.executable, "-m", "autograder", *args], capture_output=True, text=True, cwd=ROOT, env=environment()
    )
    assert log.returncode == 0
    full = {
        part: f"{sum(e.points for e in checks.values() if e.visibility == 'public'):g}"
        for part, checks in rubric.load().items()
    }
    assert re.fullmatch(
        rf"\[1/2\] Part 2 decoding: {full['decoding']} / {full['decoding']} \(\d+ s\)\n"
        rf"\[2/2\] Part 3 bleu: {full['bleu']} / {full['bleu']} \(\d+ s\)\n",
        log.stderr,
    ), log.stderr

    def seconds_aside(table: str) -> str:
        return re.sub(r"\(\d+\.\d s\)", "(s)", table)

    assert seconds_aside(log.stdout) == seconds_aside(ci.stdout)
    assert seconds_aside(stdout).startswith(seconds_aside(log.stdout))  # + "wrote r.json"


def test_a_training_run_started_over_says_so_instead_of_counting_back():
    """A run stopped at its least budget trains again from epoch 1 (autograder.grader.training.run_within_budget):
    the bar says it is the second run; the next check starts afresh."""
    bar = Bar(io.StringIO())
    bar.begin(2)
    bar.part(1, 1, "lstm_a", 2)
    bar.check("6.5", "train_a4", training=True)
    bar.epoch(1, 8, 1.0)
    bar.epoch(2, 8, 0.9)
    assert bar.bar.postfix == "6.5 train_a4 (training): epoch 2/8, loss 0.900"
    bar.epoch(1, 8, 1.0)
    assert bar.bar.postfix == "6.5 train_a4 (training): epoch 1/8 (again, with its full time budget), loss 1.000"
    bar.epoch(2, 8, 0.9)
    assert "again" in bar.bar.postfix
    bar.check_done()
    bar.check("6.6", "a4_recall", training=True)
    bar.epoch(1, 8, 1.0)
    assert "again" not in bar.bar.postfix
    bar.end()


@pytest.mark.parametrize(
    "message",
    [
        {"progress": {"epoch": 0, "epochs": 8, "loss": 1.0}},  # epochs count from 1
        {"progress": {"epoch": 9, "epochs": 8, "loss": 1.0}},
        {"progress": {"epoch": 1, "epochs": 10**9, "loss": 1.0}},
        {"progress": {"epoch": True, "epochs": 8, "loss": 1.0}},  # a bool is not an epoch
        {"progress": {"epoch": 1.0, "epochs": 8, "loss": 1.0}},
        {"progress": {"epoch": 1, "epochs": 8, "loss": "1.0\x1b[2J"}},  # nothing but numbers reaches the terminal
        {"progress": {"epoch": 1, "epochs": 8, "loss": 1.0, "note": "x"}},
        {"progress": {"epoch": 1, "epochs": 8, "loss": 1.0}, "ok": None},
        {"progress": [1, 8, 1.0]},
    ],
)
def test_a_malformed_progress_message_is_refused(message):
    assert progress_of(message) is None
    assert progress_of({"progress": {"epoch": 1, "epochs": 8, "loss": 1.0}}) == (1, 8, 1.0)


# -- judged epochs: the grader stops a training run once its captions reach the threshold --------------------------

FORGING_MODULE = '''
import torch as _torch

from autograder.worker import protocol as _protocol
from autograder.worker.main import REPLIES as _replies, REQUESTS as _requests


def ngram_counts(tokens, n):
    """Sends a judged progress message for each epoch in `tokens` (as numbers) and returns the grader's answers."""
    answers = {}
    for epoch in tokens:
        _protocol.send(_replies, {"progress": {"epoch": int(epoch), "epochs": 8, "loss": 1.0,
                                               "tokens": _torch.zeros(4, 3, dtype=_torch.long)}})
        answer = _protocol.receive(_requests)
        answers[f"epoch {epoch}"] = int(answer == {"stop": True})
    return answers
'''


@pytest.fixture
def forging_worker(tmp_path):
    """A real worker of Part 3 whose ngram_counts sends judged progress messages itself, as student code can."""
    from autograder.public.client import SEPARATE_PROCESS, Worker, copy_runtime

    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "bleu.py").write_text(FORGING_MODULE)
    worker = Worker(
        "bleu", tmp_path / "sub", tmp_path / "scratch", copy_runtime(tmp_path / "runtime"), SEPARATE_PROCESS
    )
    worker.reach = None  # the module imports the worker's protocol on purpose; the source scan that refuses such a
    # module (A55) is tested in tests/hostile/test_banned_ops.py, not here
    yield worker
    worker.close()


def answers(result: dict) -> dict[str, int]:
    return {key: value for key, (_, value) in result["items"]}


def test_each_judged_epoch_is_answered_once_and_in_order(forging_worker):
    judged = []

    def evaluate(epoch, epochs, tokens):
        judged.append((epoch, epochs, tuple(tokens.shape)))
        return epoch >= 2

    result = forging_worker.call("bleu.ngram_counts", evaluate=evaluate, tokens=["1", "2", "5"], n=1)
    assert answers(result) == {"epoch 1": 0, "epoch 2": 1, "epoch 5": 1}
    assert judged == [(1, 8, (4, 3)), (2, 8, (4, 3)), (5, 8, (4, 3))]
    # Without an evaluate (a call that is not a training check's), every epoch is answered "go on".
    assert answers(forging_worker.call("bleu.ngram_counts", tokens=["1", "2"], n=1)) == {"epoch 1": 0, "epoch 2": 0}


@pytest.mark.parametrize("epochs", [["2", "2"], ["3", "1"]])
def test_an_epoch_judged_again_or_out_of_order_kills_the_worker(forging_worker, epochs):
    from autograder.public.client import WorkerDied

    judged = []
    with pytest.raises(WorkerDied, match="sent a malformed progress message"):
        forging_worker.call(
            "bleu.ngram_counts", evaluate=lambda *args: judged.append(args[0]) or True, tokens=epochs, n=1
        )
    assert judged == [int(epochs[0])]  # one bit learnt, no more


def test_captions_sent_for_judging_must_be_token_tensors():
    import torch

    from autograder.public.client.replies import MALFORMED, judged_tokens

    def message(tokens):
        return {"progress": {"epoch": 1, "epochs": 8, "loss": 1.0, "tokens": tokens}}

    good = torch.zeros(400, 12, dtype=torch.long)
    assert judged_tokens(message(good)) is good
    assert judged_tokens(message({"factual": good, "romantic": good})) == {"factual": good, "romantic": good}
    assert judged_tokens({"progress": {"epoch": 1, "epochs": 8, "loss": 1.0}}) is None
    for bad in (
        good.float(),
        good[0],
        good.tolist(),
        torch.zeros(400, 10**4, dtype=torch.long),
        {},
        {1: good},
        {"factual": good.float()},
        {str(i): good for i in range(9)},
    ):
        assert judged_tokens(message(bad)) is MALFORMED
    assert progress_of(message(good)) == (1, 8, 1.0)
