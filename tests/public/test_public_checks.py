"""The public checks need no reference solution: their oracles and closed forms agree with the reference, their
golden data is what the reference gives now and fails with one line when it is missing, corrupted or stale, the
public checker prints what the kit's `check` prints, and a module that returns the golden answers for the golden
inputs passes the public checks but loses those points in the grader, which also runs them on its own cases."""

import math
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from autograder.grader import rubric
from autograder.grader.engine import GradeOptions, grade
from autograder.public import checker, golden
from autograder.public.client.disk import passable_folder
from instructor import golden as golden_command

ROOT = Path(__file__).resolve().parents[2]


# -- the oracles of the public checks agree with the reference ------------------------------------------------


def test_worked_bleu_examples_are_the_references_values():
    from autograder.public.checks.bleu import WORKED
    from solutions.bleu import corpus_bleu

    for what, hyps, refs, max_n, expected in WORKED:
        got = corpus_bleu(hyps, refs) if max_n is None else corpus_bleu(hyps, refs, max_n)
        assert len(got) == len(expected) and all(
            math.isclose(g, e, rel_tol=1e-12, abs_tol=1e-15) for g, e in zip(got, expected)
        ), what


def test_the_zero_orders_given_by_construction_are_where_the_references_bleu_turns_zero():
    """The zero check knows where BLEU turns 0 without computing it: by hand for its worked cases (ZEROS), by
    construction for the corpora bleu_zero_corpus builds. Both agree with the reference: every BLEU-N is 0 from that
    order on and positive below it."""
    from hypothesis import given, settings

    from autograder.public.checks.bleu import ZEROS
    from autograder.public.strategies import bleu_zero_corpus
    from solutions.bleu import corpus_bleu

    def agrees(hyps, refs, max_n, zero_from):
        scores = corpus_bleu(hyps, refs, 4 if max_n is None else max_n)
        assert all(s > 0 for s in scores[: zero_from - 1]) and all(s == 0.0 for s in scores[zero_from - 1 :]), (
            hyps,
            refs,
            max_n,
            zero_from,
        )

    for _what, hyps, refs, max_n, zero_from in ZEROS:
        agrees(hyps, refs, max_n, zero_from)
    for kind in ("crossed", "short", "empty"):

        @settings(max_examples=100, derandomize=True, database=None, deadline=None)
        @given(bleu_zero_corpus(kind))
        def built(corpus):
            hyps, refs, max_n, k = corpus
            agrees(hyps, refs, max_n, 1 if kind == "empty" else k)  # noqa: B023 (run within this iteration)

        built()


def ngram_oracle(words: list[str], n: int) -> Counter:
    """n-grams by zipping n shifted copies of the caption (kept here, out of the handout: a test of the golden
    data, which must not ship an implementation)."""
    return Counter(zip(*(words[i:] for i in range(n))))


def test_the_bleu_golden_counts_are_the_counter_of_zipped_ngrams():
    """Independently of the reference: the golden n-gram counts are the Counter of zipped n-grams, the golden clipped
    counts the Counter intersection with the union over references, and every brevity case has every p_n = 1 and the
    golden BLEU-N = 1 or exp(1 - r/c) with r the closest reference lengths (a tie to the shorter)."""
    from autograder.public.checks import bleu as checks

    data = golden.load("bleu", checks.FINGERPRINT)
    for (tokens, n), pairs in zip(checks.NGRAM_CASES, data["ngram_counts"], strict=True):
        assert {tuple(w): c for w, c in pairs} == dict(ngram_oracle(tokens, n)), (tokens, n)
    for (hyp, refs, n), (matches, total) in zip(checks.CLIPPED_CASES, data["clipped_counts"], strict=True):
        most = Counter()
        for ref in refs:
            most |= ngram_oracle(ref, n)
        candidate = ngram_oracle(hyp, n)
        assert (matches, total) == (sum((candidate & most).values()), sum(candidate.values())), (hyp, refs, n)
    for name, cases in (("brevity", checks.BREVITY_CASES), ("ties", checks.TIE_CASES)):
        for (hyps, refs, max_n), scores in zip(cases, data[name], strict=True):
            c = sum(len(h.split()) for h in hyps)
            r = sum(
                min((abs(len(x.split()) - len(h.split())), len(x.split())) for x in rs)[1] for h, rs in zip(hyps, refs)
            )
            assert scores == pytest.approx([1.0 if c > r else math.exp(1 - r / c)] * max_n, rel=1e-12), (hyps, refs)
            assert checks.has_length_tie(hyps, refs) == (name == "ties"), (hyps, refs)


def enumerated_recall(scores: torch.Tensor, k: int, ties_count_against: bool = True) -> float:
    """Caption-to-image recall@k, column by column: the true image j of caption j ranks after every image that
    scores at least as well (or, ties_count_against=False, strictly better). Kept here, out of the handout: a test
    of the golden data, which must not ship an implementation of recall_at_k."""
    n = scores.shape[0]
    hits = 0
    for j in range(n):
        true = scores[j, j].item()
        ahead = sum(
            1
            for i in range(n)
            if i != j and (scores[i, j].item() >= true if ties_count_against else scores[i, j].item() > true)
        )
        hits += ahead + 1 <= k
    return hits / n


def test_the_recall_golden_data_is_the_enumerated_rank_of_each_true_image():
    """Independently of the reference: each golden recall@k, and each slip the check names, is what enumerating the
    ranks column by column gives; on random tied matrices, the reference's slips are the enumerated ones too."""
    from autograder.public.checks import show_and_tell as checks
    from solutions import show_and_tell as reference

    def enumerated(scores, k):
        return [
            enumerated_recall(scores, k),
            enumerated_recall(scores, k, ties_count_against=False),
            enumerated_recall(scores, k - 1) if k > 1 else 0.0,
            enumerated_recall(scores.T.contiguous(), k),
        ]

    data = golden.load("show_and_tell", checks.FINGERPRINT)["recall"]
    for (seed, n, distinct, k), values in zip(checks.RECALL_CASES, data, strict=True):
        scores = checks.ranking_scores(seed, n, distinct)
        for each, got in zip(checks._recall_ks(n, k), values, strict=True):
            assert got == pytest.approx(enumerated(scores, each), abs=1e-12), (seed, n, distinct, each)
    for seed in range(40):
        n, distinct = 2 + seed % 7, (2, 3, 0)[seed % 3]
        scores = checks.ranking_scores(seed, n, distinct)
        for k in range(1, n + 1):
            assert checks.expected_recalls(reference, scores, k) == pytest.approx(enumerated(scores, k), abs=1e-12)


def test_the_greedy_path_of_a_toy_model_is_the_reference_greedy_decode():
    from autograder.worker.toys import ToyModel, greedy_sequence, toy_table
    from solutions.decoding import greedy_decode

    for seed in range(60):
        for steps, end_bias in ((1, 0.0), (3, -1.0), (4, 1.5), (6, 4.0)):
            table = toy_table(seed, 3, steps, 5, end_bias)
            model = ToyModel(table)
            expected = greedy_decode(model, model.init_state(torch.arange(3)), steps)
            assert torch.equal(torch.tensor([greedy_sequence(table, c, steps) for c in range(3)]), expected)


def reference_show_tell(sizes: dict, weights: dict):
    """The reference ShowTellRNN in float64 holding the oracle's `weights` (name -> tensor)."""
    from solutions.show_and_tell import ShowTellRNN

    model = ShowTellRNN(**sizes).double()
    with torch.no_grad():
        for name, value in weights.items():
            model.get_parameter(name).copy_(value.double())
    return model


def test_show_and_tell_oracles_are_the_reference_model():
    from autograder.public.checks import show_and_tell as checks

    for seed in range(10):
        sizes, weights, features, _, _, g = checks._model_inputs((seed, 3, 4, 7, 2, 3, 4, 5, 3))
        model = reference_show_tell(sizes, weights)
        with torch.no_grad():
            _, image_term = model.init_state(features.double())
            tokens = torch.randint(0, sizes["n_vocab"], (3,), generator=g)
            h = torch.rand(3, sizes["H"], generator=g, dtype=torch.float64)
            log_probs, (new_h, _) = model.step(tokens, (h, image_term))
        assert torch.allclose(checks.image_term_oracle(weights, features), image_term, rtol=1e-12, atol=1e-12)
        oracle_log_probs, oracle_h = checks.step_oracle(weights, tokens, h, image_term)
        assert torch.allclose(oracle_log_probs, log_probs, rtol=1e-12, atol=1e-12)
        assert torch.allclose(oracle_h, new_h, rtol=1e-12, atol=1e-12)


def test_the_recurrence_oracle_with_the_image_is_the_reference_forward():
    from autograder.public.checks import show_and_tell as checks

    for seed in range(10):
        sizes, weights, features, captions, _, _ = checks._model_inputs((seed, 3, 5, 7, 2, 3, 4, 5, 3))
        model = reference_show_tell(sizes, weights)
        with torch.no_grad():
            expected = model(features.double(), captions)
        got = checks.recurrence_oracle(weights, features, captions)
        assert torch.allclose(got.log_softmax(-1), expected.log_softmax(-1), rtol=1e-12, atol=1e-12)


def test_the_reference_beam_is_the_enumerated_top_k_at_the_exact_width():
    """Where exact_beam_width says a beam is exact, the reference beam search returns the enumerated top k, so the
    public check's expectation is beam search's own answer, not a stronger one."""
    from autograder.public.checks.decoding import exact_beam_width
    from autograder.worker.toys import ToyModel, ranked_sequences, toy_table
    from solutions.decoding import beam_search

    for seed in range(30):
        for steps, vocab, end_bias in ((1, 5, 0.0), (2, 6, -1.0), (3, 5, 1.5), (3, 6, 0.0)):
            table = toy_table(seed, 1, steps, vocab, end_bias)
            k = exact_beam_width(table, 0, steps)
            model = ToyModel(table)
            tokens, scores = beam_search(model, model.init_state(torch.zeros(1, dtype=torch.long)), k, steps)
            ranked = ranked_sequences(table, 0, steps)[:k]
            assert [tuple(row) for row in tokens[0].tolist()] == [c for _, c in ranked]
            assert torch.allclose(scores[0].double(), torch.tensor([s for s, _ in ranked], dtype=torch.float64))


def test_the_tempered_caption_distribution_sums_to_one_and_matches_sequence_log_probs():
    from autograder.public.checks.decoding import tempered_sequence_probs
    from autograder.worker.toys import sequence_log_prob, toy_table

    for seed in range(10):
        table = toy_table(seed, 1, 2, 5)
        at_one = tempered_sequence_probs(table, 0, 1.0, 2)
        assert math.isclose(sum(at_one.values()), 1.0, rel_tol=1e-12)
        for caption, p in at_one.items():
            assert math.isclose(math.log(p), sequence_log_prob(table, 0, list(caption)), rel_tol=1e-9, abs_tol=1e-12)
        assert math.isclose(sum(tempered_sequence_probs(table, 0, 0.7, 2).values()), 1.0, rel_tol=1e-12)


def lstm_cell_oracle(variant: str, weights: dict, features, attributes, captions):
    """(h, c, per_step) after the prefix and teacher forcing's log-probabilities (N, T-1, V), from the spec's table
    and an nn.LSTMCell holding the injected weights (kept here, out of the handout: a test of the golden data and of
    the reference, which must not ship an implementation of init_state)."""
    from autograder.public.checks.lstm_a import TABLE

    w = weights
    E, H = w["emb.weight"].shape[1], w["cell.weight_hh"].shape[1]
    cell = torch.nn.LSTMCell(E, H, dtype=w["cell.weight_ih"].dtype)
    with torch.no_grad():
        for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            getattr(cell, name).copy_(w[f"cell.{name}"])
        v = torch.relu(F.linear(features.flatten(1), w["fc.weight"], w["fc.bias"]))
        named = {
            "image": F.linear(v, w["Tv.weight"], w["Tv.bias"]),
            "attr": F.linear(attributes, w["Ta.weight"], w["Ta.bias"]),
        }
        n = features.shape[0]
        h, c = features.new_zeros(n, H), features.new_zeros(n, H)
        prefix, per_step = TABLE[variant]
        for name in prefix:
            h, c = cell(named[name], (h, c))
        per_step = features.new_zeros(n, E) if per_step is None else named[per_step]
        state, steps = (h, c, per_step), []
        for t in range(captions.shape[1] - 1):
            h, c = cell(w["emb.weight"][captions[:, t]] + per_step, (h, c))
            steps.append(F.log_softmax(F.linear(h, w["out.weight"], w["out.bias"]), -1))
    return state, torch.stack(steps, 1)


def test_lstm_a_golden_data_is_the_lstm_cell_fed_the_table():
    """The golden states and log-probabilities (the reference's) equal an nn.LSTMCell fed the spec's table, and so
    does the reference on other seeds."""
    from autograder.public.checks import lstm_a as checks
    from autograder.public.strategies import LSTM_A_VARIANTS
    from solutions import lstm_a as reference

    data = golden.load("lstm_a", checks.FINGERPRINT)
    cases = [(s, "init_state", k) for k, s in enumerate(checks.INIT_STATE_SIZES)]
    cases += [(s, "log_probs", k) for k, s in enumerate(checks.STEP_SIZES)]
    cases += [(dict(checks.FIRST, seed=seed), None, None) for seed in range(1, 4)]
    for sizes, name, k in cases:
        features, attributes, captions = checks._inputs(sizes)
        for j, variant in enumerate(LSTM_A_VARIANTS):
            state, log_probs = lstm_cell_oracle(variant, checks._weights(sizes), features, attributes, captions)
            if name == "init_state":
                got = data[name][k][j]
                assert all(torch.allclose(g, e, rtol=1e-12, atol=1e-12) for g, e in zip(got, state, strict=True))
            else:
                got = data[name][k][j] if name else checks.expected_log_probs(reference, variant, sizes)
                assert torch.allclose(got, log_probs, rtol=1e-12, atol=1e-12), (variant, sizes)


def test_stylenet_oracle_is_the_reference_loss():
    import solutions.stylenet as reference
    from autograder.public.checks import stylenet as checks
    from solutions.show_and_tell import caption_loss

    assert checks.T_STYLE == reference.T_STYLE
    for seed in (3, 4, 11):
        start = checks.stylenet_weights(reference, seed, checks.SMALL)
        captions = checks._styled_captions(seed, 6)
        g = torch.Generator().manual_seed(seed)
        h0, c0 = torch.randn(6, checks.SMALL["H"], generator=g), torch.randn(6, checks.SMALL["H"], generator=g)
        model = reference.StyleNet(**checks.SMALL).double()
        model.load_state_dict({k: v.double() for k, v in start["weights"].items()})
        model.set_style("romantic")
        with torch.no_grad():
            expected = caption_loss(model(captions, (h0.double(), c0.double())), captions).item()
        assert math.isclose(checks.romantic_loss(start["weights"], captions, h0, c0), expected, rel_tol=1e-12)


# -- property settings follow the check's visibility ------------------------------------------------------------


def _failing_values(visible: bool, grader_round=None) -> list[int]:
    """Every value on which a property of examples(50) failed, run by the engine as a check of that visibility
    (and, given `grader_round`, in that round too): it fails on any x >= 1000 of 0..10**6 in the last round run (a
    public check meets the grader's round only once its public round passed), so shrinking shows as more failures,
    ending at the smallest, 1000."""
    from hypothesis import given
    from hypothesis import strategies as st

    from autograder.public.checks import Check, current_round
    from autograder.public.runner import run_check
    from autograder.public.strategies import examples

    failed = []

    def planted(student, ctx):
        "a property that fails above 999"

        @examples(50)
        @given(st.integers(0, 10**6))
        def prop(x):
            if x >= 1000 and current_round().public == (grader_round is None):
                failed.append(x)
                raise AssertionError(x)

        prop()

    outcome = run_check(Check("bleu", "planted", planted, 30.0), None, None, visible, grader_round)
    assert not outcome.passed and failed
    return failed


def test_a_hidden_check_reports_its_first_failure_without_shrinking():
    """A hidden check shows no case, so shrinking would only cost worker round trips: its property stops at the
    first failing case (hypothesis replays that one case once to report it). So does a public check in the
    grader's round; a public check in the public round shrinks, which is what this measure would see."""
    from autograder.public.checks import Round

    for what, failed in [
        ("hidden", _failing_values(False)),
        ("public, grader's round", _failing_values(True, Round(seed=7))),
    ]:
        assert len(set(failed)) == 1 and len(failed) <= 2, f"{what}: shrank through {failed}"
    shrunk = _failing_values(True)
    assert len(set(shrunk)) > 1 and shrunk[-1] == 1000, f"public: did not shrink ({shrunk})"


# -- an exception names its case once -----------------------------------------------------------------------------


class _Raising:
    """A worker stand-in whose every call raises the student's IndexError, naming no case (as the worker does)."""

    deadline = None

    def call(self, recipe, timeout=None, deadline=None, **kwargs):
        from autograder.public.client import StudentError

        raise StudentError("IndexError", "index 1 is out of bounds", '  File "decoding.py", line 40, in greedy\n')


def test_an_exception_in_a_public_check_names_its_call_once():
    """The engine (runner.WithinCheck) names the call that raised, for every part's checks; a check that names
    its case itself keeps its own."""
    from autograder.public.checks import Check
    from autograder.public.client import StudentError
    from autograder.public.limits import Deadline
    from autograder.public.runner import WithinCheck, run_check

    def calls(student, ctx):
        "greedy decoding of a toy table"
        student.call("decoding.greedy_toy", table=torch.zeros(2, 3, 5), contexts=[0, 1], max_len=3)

    def names_its_case(student, ctx):
        "a check that names the case itself"
        try:
            student.call("decoding.greedy_toy", max_len=3)
        except StudentError as exc:
            exc.case = "the toy table of seed 7"
            raise

    worker = WithinCheck(_Raising(), Deadline.after(30.0, "the check's time limit was reached"))
    output = run_check(Check("decoding", "calls", calls, 30.0), worker, None, True).output
    case = "[decoding.greedy_toy(table=<tensor (2, 3, 5) float32>, contexts=[0, 1], max_len=3)]"
    assert output.startswith(f"your code raised IndexError: index 1 is out of bounds {case}\n"), output
    assert output.count("decoding.greedy_toy(") == 1 and "line 40, in greedy" in output
    output = run_check(Check("decoding", "named", names_its_case, 30.0), worker, None, True).output
    assert "[the toy table of seed 7]" in output and "greedy_toy(" not in output, output


# -- golden data -------------------------------------------------------------------------------------------------


def test_the_golden_files_are_what_the_reference_gives_now(capsys):
    assert golden_command.run(check=True) == 0, capsys.readouterr().out


def test_the_golden_check_reports_a_changed_file(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(golden, "HERE", tmp_path)
    for part in golden_command.PARTS:
        shutil.copy(ROOT / "autograder" / "public" / "golden" / f"{part}.pt", tmp_path / f"{part}.pt")
    cases = torch.load(tmp_path / "attention.pt", weights_only=True)
    cases["cases"]["captioner"][0]["logits"][0, 0, 0] += 1e-3
    torch.save(cases, tmp_path / "attention.pt")
    assert golden_command.run(check=True) == 1
    assert (
        "attention.pt differs from the reference's answers: /cases/captioner[0]/logits: the values differ"
        in capsys.readouterr().out
    )


@pytest.mark.parametrize(
    "damage, message",
    [
        (
            "missing",
            r"^autograder/public/golden/attention\.pt is missing: regenerate it with `python -m instructor golden`$",
        ),
        ("corrupted", r"^autograder/public/golden/attention\.pt is corrupted \(\w+\): regenerate it with "),
        ("stale", r"^autograder/public/golden/attention\.pt is older than the checks that read it \(fingerprint "),
    ],
)
def test_a_broken_golden_file_fails_its_checks_with_one_line(damage, message, tmp_path, monkeypatch):
    monkeypatch.setattr(golden, "HERE", tmp_path)
    good = (ROOT / "autograder" / "public" / "golden" / "attention.pt").read_bytes()
    if damage == "corrupted":
        (tmp_path / "attention.pt").write_bytes(good[: len(good) // 2])
    elif damage == "stale":
        document = torch.load(ROOT / "autograder" / "public" / "golden" / "attention.pt", weights_only=True)
        (tmp_path / "attention.pt").write_bytes(golden.dumps(document["cases"], "0123456789abcdef"))
    report = checker.check(ROOT / "solutions", parts=("attention",))
    uses_golden = {"forward_matches_the_reference_with_the_same_weights", "decoding_steps_reproduce_teacher_forcing"}
    for r in report.results:
        if r.name in uses_golden:
            assert not r.passed and "\n" not in r.output, r.output
            assert re_match(message, r.output), r.output
        else:
            assert r.passed, f"{r.name}: {r.output}"


def test_check_imports_torch_for_the_workers_once_and_a_crash_costs_only_its_part(tmp_path, monkeypatch):
    """`check` starts one zygote for all its parts. A module that ends its own worker at import, and one that kills
    the zygote its worker was forked from, lose their own part's points only: the next part gets a fresh zygote."""
    from autograder.public.client import worker, zygote

    folder = tmp_path / "work"
    shutil.copytree(ROOT / "solutions", folder, ignore=shutil.ignore_patterns("__pycache__", "__init__.py"))
    with open(folder / "show_and_tell.py", "a") as module:
        module.write("\nimport os\nos._exit(3)\n")
    with open(folder / "decoding.py", "a") as module:
        module.write("\nimport os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n")
    started = []
    real_start = zygote.start_zygote
    for module in (worker, zygote):  # the first, and a fresh one after a part's code ends it
        monkeypatch.setattr(
            module, "start_zygote", lambda state, *a, **k: started.append(state.modules) or real_start(state, *a, **k)
        )
    totals = checker.check(folder).part_totals()
    assert totals["show_and_tell"][0] == 0 and all(
        got == out_of for part, (got, out_of) in totals.items() if part not in ("show_and_tell", "decoding")
    ), totals
    everything = tuple(totals)
    assert len(everything) == 7 and started == [everything, everything], started  # the first, and one after decoding
    started.clear()
    checker.check(ROOT / "solutions", ("bleu", "attention"))
    assert started == [("bleu", "attention")]


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(["check", "--part", "bleu"], id="check"),
        pytest.param(["check", "--train", "--part", "stylenet"], id="train", marks=pytest.mark.slow),
    ],
)
def test_check_leaves_nothing_in_the_temporary_folder(command):
    """`check` ends without the interpreter's teardown (checker.exit_now): whatever it made in the temporary folder is
    removed all the same. It once left hypothesis's cache folder there at every run, and `check --train` its
    template's folder. (torch keeps a compilation cache of its own in the temporary folder.)"""
    # The sandbox user passes through it to the workers' folders, as through /tmp.
    with passable_folder("captionkit-test-tmp-") as temporary:
        environment = {**os.environ, "TMPDIR": temporary}
        environment.pop("HYPOTHESIS_STORAGE_DIRECTORY", None)
        done = subprocess.run(
            [sys.executable, "-m", "autograder", *command, str(ROOT / "solutions")],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env=environment,
            timeout=300,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        left = sorted(entry.name for entry in os.scandir(temporary) if not entry.name.startswith("torchinductor_"))
        assert left == []


def re_match(pattern: str, text: str) -> bool:
    import re

    return re.match(pattern, text) is not None


# -- one public checker, one output ------------------------------------------------------------------------------


def test_the_public_checker_prints_what_a_sandboxed_grade_of_the_public_checks_prints(capsys):
    """`check` (the kit's and the handout's) forks every part's workers from one zygote without a sandbox; a grade
    runs each part in a sandboxed worker of its own. On the same module both print the same lines."""
    from autograder.__main__ import main as kit
    from autograder.public.score_table import table

    assert kit(["check", str(ROOT / "assignments"), "--part", "bleu", "--part", "decoding"]) == 1  # checks fail
    kit_lines = capsys.readouterr().out.splitlines()
    assert checker.main(["check", str(ROOT / "assignments"), "--part", "bleu", "--part", "decoding"]) == 1
    public_lines = capsys.readouterr().out.splitlines()
    graded = grade(ROOT / "assignments", GradeOptions(parts=("bleu", "decoding"), public_only=True, grader_cases=False))
    graded_lines = table(graded).splitlines()
    assert kit_lines[:-2] == public_lines[:-2] == graded_lines[:-2]  # [-2]: the seconds it took
    assert kit_lines[-1] == public_lines[-1] == graded_lines[-1]
    # On the stubs: a line per part, a line per unwritten TODO (3 in bleu.py, 3 in decoding.py) naming the checks
    # that wait for it, the total, and what the public checks cover of the grade.
    # The points and numbers come from the rubric: every public bleu check but the first two calls corpus_bleu.
    full = rubric.load()
    public = {part: [e for e in full[part].values() if e.visibility == "public"] for part in ("bleu", "decoding")}
    shown = sum(e.points for entries in public.values() for e in entries)
    out_of = sum(e.points for part in public for e in full[part].values())
    corpus = public["bleu"][2:]
    todos = [line for line in public_lines if line.startswith("    TODO ")]
    assert len(todos) == 6 and len(public_lines) == 2 + 6 + 2, public_lines
    assert "    TODO corpus_bleu (bleu.py:" in "\n".join(todos) and todos[-1].endswith(
        f"{len(corpus)} checks wait for it ({', '.join(f'3.{e.number}' for e in corpus)}: "
        f"{sum(e.points for e in corpus):g} points)"
    ), todos
    assert public_lines[-2].startswith("total") and f"0.0 / {shown:5.1f}" in public_lines[-2]
    assert public_lines[-1] == (
        f"public checks: {shown:g} of the grade's {out_of:g} points; {out_of - shown:g} more "
        "from hidden and training checks after the deadline"
    )


# -- golden data is no answer key --------------------------------------------------------------------------------


def test_the_graders_cases_follow_the_test_secret_not_the_training_seed():
    """Student code is given the training data, and the small seed behind it can be searched for: the grader's
    cases must not follow from it."""
    from types import SimpleNamespace

    from autograder.grader.engine import grader_round

    chk = SimpleNamespace(part="attention", name="forward_matches_the_reference_with_the_same_weights")
    first = grader_round(SimpleNamespace(seed=1, test_secret=5), chk).seed
    assert grader_round(SimpleNamespace(seed=2, test_secret=5), chk).seed == first
    assert grader_round(SimpleNamespace(seed=1, test_secret=6), chk).seed != first


LOOKUP = '''

import torch as _torch

# The golden cases, pasted in as literals: a submission is one file (and a loader would be refused by the source scan).
_DTYPES = {{"float32": _torch.float32, "float64": _torch.float64, "int64": _torch.int64}}
_GOLDEN = [{{key: _torch.tensor(values, dtype=_DTYPES[dtype]) for key, (values, dtype) in case.items()}}
           for case in {cases!r}]


def _lookup_forward(self, features, captions):
    """The golden answer for the golden inputs; for any other input, flat logits and uniform maps."""
    for case in _GOLDEN:
        if case["features"].shape == features.shape and _torch.equal(case["features"], features) \\
                and _torch.equal(case["captions"], captions):
            return case["logits"].to(features.dtype), case["weights"].to(features.dtype)
    n, t, locations = captions.shape[0], captions.shape[1], features.shape[1]
    return (_torch.zeros(n, t - 1, self.out.out_features, dtype=features.dtype),
            _torch.full((n, t - 1, locations), 1.0 / locations, dtype=features.dtype))


AttnCaptioner.forward = _lookup_forward
'''


@pytest.mark.xdist_group("full-grade")
def test_a_lookup_table_of_the_golden_data_passes_check_and_loses_the_points_in_the_grader(tmp_path):
    """attention.py: the reference, with a forward that returns the golden logits and maps for the golden inputs
    and constants for any other. The public checker (and the kit's check) give it the forward check; the grader,
    which also runs every public check on cases drawn from its hidden seed, does not."""
    folder = tmp_path / "lookup"
    folder.mkdir()
    golden = torch.load(ROOT / "autograder" / "public" / "golden" / "attention.pt", weights_only=True)
    cases = [
        {
            key: (case[key].tolist(), str(case[key].dtype).removeprefix("torch."))
            for key in ("features", "captions", "logits", "weights")
        }
        for case in golden["cases"]["captioner"]
    ]
    (folder / "attention.py").write_text((ROOT / "solutions" / "attention.py").read_text() + LOOKUP.format(cases=cases))
    forward = "forward_matches_the_reference_with_the_same_weights"

    public = {r.name: r for r in checker.check(folder, parts=("attention",)).results}
    assert public[forward].passed, public[forward].output
    kit_check = {
        r.name: r
        for r in grade(folder, GradeOptions(parts=("attention",), public_only=True, grader_cases=False)).results
    }
    assert kit_check[forward].passed, kit_check[forward].output

    graded = {r.name: r for r in grade(folder, GradeOptions(parts=("attention",), training="without")).results}
    assert not graded[forward].passed
    assert graded[forward].output == (
        "failed on cases the grader draws from its hidden seed: With the reference's "
        "weights, forward's logits and attention maps equal the reference's (float64)."
    )
    assert graded[forward].staff_note  # what failed, for the course staff
    assert all(r.passed for r in graded.values() if r.visibility == "public" and r.name != forward), [
        f"{r.name}: {r.output}" for r in graded.values() if not r.passed
    ]


# -- properties that a function computing nothing satisfies are anchored ----------------------------------------
# (variant name, the checks of its part that it must fail although their property alone holds for it). Each variant
# (tests/meta) is the reference with one function replaced by a constant or a no-op (or, for BLEU, by a number made
# of the words: an anchor must ask for BLEU's value, not just for some dependence on the captions); before the
# anchors it earned these checks' points.
TRIVIAL = (
    (
        "bleu",
        "corpus_bleu_is_a_constant_zero",
        {
            "bleu_of_a_corpus_against_itself_is_one",
            "corpus_bleu_is_invariant_to_corpus_order",
            "captions_are_split_on_any_whitespace",
            "bleu_functions_leave_their_inputs_unchanged",
        },
    ),
    (
        "bleu",
        "corpus_bleu_is_a_constant_one",
        {
            "bleu_of_a_corpus_against_itself_is_one",
            "corpus_bleu_is_invariant_to_corpus_order",
            "captions_are_split_on_any_whitespace",
            "closest_length_ties_go_to_the_shorter_reference",
            "bleu_functions_leave_their_inputs_unchanged",
        },
    ),
    (
        "bleu",
        "corpus_bleu_is_a_hash_of_the_words",
        {
            "bleu_of_a_corpus_against_itself_is_one",
            "corpus_bleu_is_invariant_to_corpus_order",
            "captions_are_split_on_any_whitespace",
            "bleu_functions_leave_their_inputs_unchanged",
        },
    ),
    (
        "show_and_tell",
        "logits_are_the_output_bias",
        {"step_by_step_decoding_equals_teacher_forcing", "part_one_functions_leave_their_inputs_unchanged"},
    ),
    (
        "show_and_tell",
        "loss_is_a_constant_zero",
        {"caption_loss_ignores_padded_positions", "part_one_functions_leave_their_inputs_unchanged"},
    ),
    (
        "decoding",
        "sampler_returns_end_then_pad",
        {"sampling_is_reproducible_and_pads_after_end", "decoders_leave_their_inputs_unchanged"},
    ),
    ("decoding", "beams_all_impossible", {"beam_scores_are_sorted_log_probabilities"}),
    (
        "show_and_tell",
        "log_probs_and_retrieval_are_constant_zero",
        {"retrieval_scores_pair_every_image_with_every_caption"},
    ),
    (
        "attention",
        "uniform_weights_and_the_mean_of_the_values",
        {
            "attention_weights_are_a_distribution",
            "uniform_weights_give_the_mean_of_the_values",
            "attend_is_invariant_to_permuting_locations",
        },
    ),
    ("lstm_a", "schedule_returns_nothing", {"schedule_keeps_the_inputs_in_the_graph"}),
)


@pytest.mark.xdist_group("full-grade")
@pytest.mark.parametrize("part, name, anchored", TRIVIAL, ids=[name for _, name, _ in TRIVIAL])
def test_a_property_check_gives_no_points_to_a_function_that_computes_nothing(part, name, anchored, tmp_path):
    from tests.meta.variants import all_variants, make_submission

    variant = next(v for v in all_variants() if (v.part, v.name) == (part, name))
    results = {
        r.name: r
        for r in grade(
            make_submission(tmp_path / "submission", variant), GradeOptions(parts=(part,), training="without")
        ).results
    }
    assert anchored <= set(results), sorted(anchored - set(results))
    earned = {check: results[check].output for check in anchored if results[check].score > 0}
    assert not earned, f"{name} earns points for a property that a constant satisfies: {earned}"
