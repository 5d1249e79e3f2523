"""Part 1 public checks, the caption loss: the masked mean cross-entropy and its gradient against an enumerated
oracle, logits at PAD targets and extra PAD columns changing nothing, and the anchor a constant loss fails."""

from __future__ import annotations

import torch
from hypothesis import given

from autograder.public.checks import check
from autograder.public.checks.show_and_tell.cells import F64, _randn
from autograder.public.compare import (
    CheckFailed,
    expect,
    expect_close,
    expect_float_tensor,
    expect_tensor,
    expect_tuple,
    type_name,
)
from autograder.public.strategies import (
    DTYPES,
    FEW,
    extra_pad_columns,
    small_loss_cases,
)
from autograder.public.tolerances import (
    PAD_GRADIENT,
    RNN_STEP,
)
from shared.vocab import END, PAD, START


def _expect_scalar(name: str, got, case: str) -> torch.Tensor:
    """A 0-d floating-point tensor, as the docstring's "a scalar tensor" says (a (1,) tensor is not one)."""
    if not isinstance(got, torch.Tensor):
        raise CheckFailed(f"{name}: expected a scalar tensor, got {type_name(got)} [{case}]")
    expect(got.dim() == 0, f"{name}: expected a scalar tensor (shape ()), got shape {tuple(got.shape)}", case)
    expect(got.is_floating_point(), f"{name}: expected a floating-point tensor, got dtype {got.dtype}", case)
    return got


def random_captions(g: torch.Generator, n: int, t: int, v: int) -> torch.Tensor:
    """(n, t) captions START, 0..t-2 random words (ids 3..v-1), END, then PAD: every row has a non-PAD target."""
    rows = []
    for _ in range(n):
        k = int(torch.randint(0, t - 1, (1,), generator=g))
        words = torch.randint(3, v, (k,), generator=g).tolist()
        rows.append([START] + words + [END] + [PAD] * (t - 2 - k))
    return torch.tensor(rows, dtype=torch.long)


def _loss_inputs(case):
    seed, n, t, v, scale, dtype = case
    g = torch.Generator().manual_seed(seed)
    captions = random_captions(g, n, t, v)
    logits = _randn(g, n, t - 1, v, scale=scale).to(DTYPES[dtype])
    describe = (
        f"logits ({n}, {t - 1}, {v}) {dtype} standard normal x {scale:g}, captions ({n}, {t}) = "
        f"{captions.tolist()}, seed={seed}"
    )
    return logits, captions, describe, g


def enumerated_loss(logits: torch.Tensor, captions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The masked mean cross-entropy and its gradient, term by term in float64: the mean over every (n, t) with
    captions[n, t + 1] != PAD of -log softmax(logits[n, t])[captions[n, t + 1]]."""
    log_probs = logits.to(F64).log_softmax(-1)
    total, count = 0.0, 0
    grad = torch.zeros_like(log_probs)
    for n in range(captions.shape[0]):
        for t in range(captions.shape[1] - 1):
            y = int(captions[n, t + 1])
            if y == PAD:
                continue
            total -= log_probs[n, t, y].item()
            count += 1
            grad[n, t] = log_probs[n, t].exp()
            grad[n, t, y] -= 1.0
    return torch.tensor(total / count, dtype=F64), grad / count


def _loss_and_grad(student, logits, captions, describe):
    out = student.call("show_and_tell.loss_and_grad", logits=logits, captions=captions)
    loss, grad = expect_tuple("caption_loss result", out, 2, describe)
    return _expect_scalar("caption_loss(logits, captions)", loss, describe), grad


def _loss_value_and_gradient_property(student, case) -> None:
    logits, captions, describe, _ = _loss_inputs(case)
    loss, grad = _loss_and_grad(student, logits, captions, describe)
    expected, expected_grad = enumerated_loss(logits, captions)
    expect_close("caption_loss(logits, captions)", loss, expected, RNN_STEP, inputs=logits.dtype, case=describe)
    expect(
        grad is not None,
        "caption_loss: no gradient reaches the logits (the loss must stay differentiable: "
        "no .item(), .detach() or torch.tensor(...) of a computed value)",
        describe,
    )
    expect_close("d caption_loss / d logits", grad, expected_grad, RNN_STEP, inputs=logits.dtype, case=describe)


@check()
def caption_loss_is_the_masked_mean_cross_entropy(student, ctx):
    """caption_loss is the mean cross-entropy over non-PAD targets captions[:, 1:], and so is its gradient."""

    @FEW
    @given(small_loss_cases)
    def prop(case):
        _loss_value_and_gradient_property(student, case)

    prop()


@check()
def caption_loss_ignores_padded_positions(student, ctx):
    """Logits at PAD targets change neither caption_loss nor get any gradient; extra PAD columns change nothing."""

    @FEW
    @given(small_loss_cases, extra_pad_columns)
    def prop(case, extra):
        logits, captions, describe, g = _loss_inputs(case)
        loss, grad = _loss_and_grad(student, logits, captions, describe)
        padded = captions[:, 1:] == PAD
        tol = RNN_STEP.for_dtypes(logits.dtype, loss.dtype)
        if padded.any():
            changed = logits.clone()
            changed[padded] = _randn(g, int(padded.sum()), logits.shape[-1], scale=10.0).to(logits.dtype)
            other, _ = _loss_and_grad(student, changed, captions, describe)
            expect_tensor(
                "caption_loss with the logits at PAD targets replaced by N(0, 10^2) values (expected: "
                "the loss before the change)",
                other,
                loss,
                tolerance=tol,
                case=describe,
                check_dtype=False,
            )
            if grad is not None:
                grad = expect_float_tensor("d caption_loss / d logits", grad, tuple(logits.shape), describe)
                expect_tensor(
                    "d caption_loss / d logits at positions whose target is PAD",
                    grad[padded],
                    torch.zeros(int(padded.sum()), logits.shape[-1], dtype=F64),
                    tolerance=PAD_GRADIENT,
                    case=describe,
                    check_dtype=False,
                )
        longer = torch.cat([captions, torch.full((captions.shape[0], extra), PAD, dtype=torch.long)], 1)
        more = torch.cat([logits, _randn(g, logits.shape[0], extra, logits.shape[-1]).to(logits.dtype)], 1)
        other, _ = _loss_and_grad(student, more, longer, describe + f", then {extra} PAD column(s) appended")
        expect_tensor(
            f"caption_loss with {extra} all-PAD column(s) appended to captions (and logits) (expected: "
            "the loss without them)",
            other,
            loss,
            tolerance=tol,
            case=describe,
            check_dtype=False,
        )

    prop()
    expect_loss_depends_on_the_scored_logits(student)


# The anchor of the padding check, which a constant loss satisfies: raising the logit of a scored target word lowers
# the loss (from log 5 = 1.609 to 1.021, the mean over the two scored positions).
ANCHOR_LOSS_CAPTIONS = [[START, 3, END, PAD]]


def expect_loss_depends_on_the_scored_logits(student) -> None:
    captions = torch.tensor(ANCHOR_LOSS_CAPTIONS, dtype=torch.long)
    logits = torch.zeros(1, 3, 5)
    raised = logits.clone()
    raised[0, 0, 3] = 2.0  # the logit of the first scored target, word 3
    describe = (
        f"the anchor of the padding check: captions {captions.tolist()}, logits zeros (1, 3, 5) float32, then "
        f"logits[0, 0, 3] = 2 (the logit of the target at t = 0)"
    )
    loss, lower = (_loss_value(student, x, captions, describe) for x in (logits, raised))
    expect(
        lower < loss - 1e-3,
        f"your caption_loss does not depend on the logits of the scored words: {loss:.6g} "
        f"with zero logits, {lower:.6g} after raising the target word's logit (expected it to fall, from 1.609 to "
        f"1.021)",
        describe,
    )


def _loss_value(student, logits, captions, describe) -> float:
    """The loss as a float (its shape is the other checks' to judge)."""
    loss = _loss_and_grad(student, logits, captions, describe)[0]
    expect(
        isinstance(loss, torch.Tensor) and loss.numel() == 1,
        f"caption_loss: expected a scalar tensor, got {type_name(loss)}",
        describe,
    )
    return float(loss)
