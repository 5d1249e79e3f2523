"""Part 1 public check, recall@k against the enumerated rank of each true image, ties counted against it: the fixed
public cases with their golden data (golden_cases, FINGERPRINT), the grader's own cases scored by its reference."""

from __future__ import annotations

import re

import torch
from hypothesis import given

from autograder.public import golden
from autograder.public.checks import check, current_round
from autograder.public.checks.show_and_tell.cells import F64
from autograder.public.compare import (
    expect,
    expect_tensor,
    type_name,
)
from autograder.public.strategies import (
    FEW,
    ranking_cases,
)
from autograder.public.tolerances import (
    EXACT,
    RECALL,
)


def ranking_scores(seed: int, n: int, distinct: int) -> torch.Tensor:
    """(n, n) float64 scores: integers 0..distinct-1 (many ties), or standard normal values when distinct is 0."""
    g = torch.Generator().manual_seed(seed)
    if distinct == 0:
        return torch.randn(n, n, generator=g, dtype=F64)
    return torch.randint(0, distinct, (n, n), generator=g).to(F64)


# The recall check's public cases (seed, N, distinct values or 0 for normal scores, k), each scored at k in {1, k, N}:
# their expected values are golden data (autograder/public/golden/show_and_tell.pt); the grader's round draws its own.
RECALL_CASES = (
    (0, 4, 2, 1),
    (0, 4, 0, 2),
    (0, 1, 2, 1),
    (1652, 1, 2, 1),
    (1652, 4, 0, 1),
    (40752, 3, 0, 1),
    (11729, 6, 2, 1),
    (3205, 5, 2, 1),
    (2604673, 1, 0, 1),
    (349, 6, 3, 3),
    (10530, 6, 2, 3),
    (223, 3, 0, 1),
)


def _recall_ks(n: int, k: int) -> list[int]:
    return sorted({1, min(k, n), n})


def _favouring_ties(scores: torch.Tensor) -> torch.Tensor:
    """`scores` with each true image (the diagonal) raised by half the smallest gap between two different scores:
    every tie with it is broken in its favour, every other order kept."""
    values = scores.unique()
    gap = (values[1:] - values[:-1]).min().item() if len(values) > 1 else 1.0
    return scores + torch.eye(scores.shape[0], dtype=scores.dtype) * gap / 2


def expected_recalls(reference, scores: torch.Tensor, k: int) -> list[float]:
    """[recall@k, and what the usual slips give: ties counted in the true image's favour, rank < k, rows ranked
    instead of columns], all from `reference`'s recall_at_k (the module solutions.show_and_tell)."""
    return [
        reference.recall_at_k(scores, k),
        reference.recall_at_k(_favouring_ties(scores), k),
        reference.recall_at_k(scores, k - 1) if k > 1 else 0.0,
        reference.recall_at_k(scores.T.contiguous(), k),
    ]


def golden_cases(reference) -> dict[str, list]:
    """This part's golden data, computed with `reference` (python -m instructor golden): per recall case, per k of
    _recall_ks, expected_recalls."""
    return {
        "recall": [
            [expected_recalls(reference, ranking_scores(seed, n, distinct), k) for k in _recall_ks(n, k_drawn)]
            for seed, n, distinct, k_drawn in RECALL_CASES
        ]
    }


SLIPS = (
    "ties are counted in the true image's favour; a tie must count against it",
    "the true image counts only within the first k - 1 (rank < k where rank <= k is meant)",
    "images are ranked per row (captions for an image); the contract ranks each column (images for a caption)",
)


def _recall_symptom(got: float, slips: list[float]) -> str:
    """The usual slip whose value (`slips`, from expected_recalls) `got` matches, named by its symptom ('' if none)."""
    for symptom, value in zip(SLIPS, slips):
        if RECALL.accepts(got, value):
            return f" ({symptom})"
    return ""


def _recall(student, scores: torch.Tensor, k) -> dict:
    out = student.call("show_and_tell.recall", scores=scores, k=k)
    expect(isinstance(out, dict) and ("returned" in out or "raised" in out), f"unexpected result {type_name(out)}")
    return out


def _expect_recall(student, scores: torch.Tensor, k: int, describe: str, expected: list[float]) -> None:
    """The student's recall_at_k(scores, k) against expected[0]; expected[1:] name the slip a wrong value matches."""
    out = _recall(student, scores, k)
    call = f"recall_at_k(scores, k={k})"
    expect("raised" not in out, f"{call} raised {out.get('raised')}: {out.get('message')}", describe)
    got = out["returned"]
    expect(isinstance(got, float), f"{call}: expected a Python float, got {type_name(got)}", describe)
    if not RECALL.accepts(got, expected[0]):
        expect(
            False, f"{call}: expected {expected[0]:.6g}, got {got:.6g}{_recall_symptom(got, expected[1:])}", describe
        )
    expect_tensor(f"{call}: input scores after the call", out["scores_after"], scores, tolerance=EXACT, case=describe)


def _expect_value_error(student, scores, k, argument: str, describe: str) -> None:
    out = _recall(student, scores, k)
    call = f"recall_at_k(scores of shape {tuple(scores.shape)}, k={k!r})"
    expect(
        "raised" in out,
        f"{call}: expected a ValueError naming {argument}, but it returned {out.get('returned')!r}",
        describe,
    )
    expect(
        out["raised"] == "ValueError", f"{call}: expected a ValueError naming {argument}, got {out['raised']}", describe
    )
    expect(
        re.search(rf"\b{argument}\b", out.get("message", "")) is not None,
        f"{call}: the ValueError's message does not name the argument {argument!r}: {out.get('message')!r}",
        describe,
    )


@check()
def recall_at_k_counts_ties_against_the_true_image(student, ctx):
    """recall_at_k: the share of captions whose own image is in the top k of their column, ties counted against it.

    A bad k or a non-square matrix raises a ValueError naming the argument."""

    def run(case, expected):
        seed, n, distinct, k = case
        k = min(k, n)
        scores = ranking_scores(seed, n, distinct)
        describe = f"scores {scores.tolist()}, seed={seed}"
        for each, want in zip(_recall_ks(n, k), expected(scores)):
            _expect_recall(student, scores, each, describe, want)
        _expect_value_error(student, scores, 0, "k", describe)
        _expect_value_error(student, scores, n + 1, "k", describe)
        _expect_value_error(student, scores, float(k), "k", describe)
        _expect_value_error(student, torch.cat([scores, scores[:1]], 0), k, "scores", describe + ", one row repeated")

    now = current_round()
    if now.public:
        for case, expected in zip(RECALL_CASES, golden.load("show_and_tell", FINGERPRINT)["recall"]):
            run(case, lambda scores, expected=expected: expected)
        return

    @FEW
    @given(ranking_cases)
    def graders(case):
        reference = now.reference("show_and_tell")
        run(case, lambda scores: [expected_recalls(reference, scores, k) for k in _recall_ks(case[1], case[3])])

    graders()


FINGERPRINT = golden.fingerprint(
    RECALL_CASES, ranking_scores, _recall_ks, _favouring_ties, expected_recalls, golden_cases
)
