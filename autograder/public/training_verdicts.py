"""How a training run's reply is read and judged, on whichever test scenes it is judged on (the grader's: hidden;
`check --train`'s: public): the reply's curve and captions, the exact match and StyleNet's style switch, and what a
failed run says about its own cause (known_causes).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import torch

from autograder.public.compare import CheckFailed, expect, type_name
from shared.encoder import GRID
from shared.looking import NAMES, look_score, objects_of
from shared.metrics import exact_match, style_scores
from shared.scenes import Scenes
from shared.vocab import decode_batch

if TYPE_CHECKING:
    from autograder.public.published_training import Published

# -- reading a recipe's reply ----------------------------------------------------------------------------------------

MAX_EPOCHS = 100  # longer "curves" are not a training run's


def reply(out, key: str):
    """out[key] when a recipe returned a dict holding it, else None."""
    return out.get(key) if isinstance(out, dict) else None


def curve(values) -> list[float] | None:
    """A training curve (per-epoch losses) as floats, or None when `values` is not one."""
    if not isinstance(values, (list, tuple)) or not 0 < len(values) <= MAX_EPOCHS:
        return None
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in values):
        return None
    return [float(v) for v in values]


def predicted_tokens(out, n: int, key: str = "tokens") -> torch.Tensor:
    """The (n, T) long token tensor a training recipe returned under `key`."""
    tokens = out.get(key) if isinstance(out, dict) else None
    if not isinstance(tokens, torch.Tensor) or tokens.dim() != 2 or tokens.shape[0] != n or tokens.dtype != torch.long:
        raise CheckFailed(
            f"the trained model's captions: expected a long tensor of shape ({n}, T), got "
            f"{tuple(tokens.shape) if isinstance(tokens, torch.Tensor) else type_name(tokens)}"
        )
    return tokens


# -- the verdicts --------------------------------------------------------------------------------------------------
# Each takes the reply and the test scenes it is judged on (the grader's: hidden; check --train's: public) and names
# them by `where` ("hidden", "public").


def exact_match_of(out, test: Scenes, key: str = "tokens") -> float:
    """Exact match of the returned captions against the test scenes' references."""
    try:
        captions = decode_batch(predicted_tokens(out, len(test), key))
    except ValueError as exc:  # a token id outside the vocabulary
        raise CheckFailed(f"the trained model's captions: {exc}") from None
    return exact_match(captions, test.references)


LOSS_FELL = 0.98  # a run whose last epoch's loss is above this fraction of its first's did not learn


def known_causes(out, figures: bool = True) -> list[str]:
    """What a failed training run says about its own cause, in words that name the symptom and reveal nothing of
    the test scenes: the student's step-by-step decoding disagreeing with the student's forward (the recipe
    compares them on training captions; the captions judged come from step, training used forward), a training
    loss that did not fall. Only read to explain a failure: it never changes a verdict. figures=False: no number
    the worker sent (the losses), for text a hidden check shows: the module can set those numbers to anything, so
    printed whole they would carry what its worker holds (security notes, A57)."""
    causes = []
    if reply(out, "step_agrees_with_forward") is False:
        causes.append(
            "your step-by-step decoding (init_state, then step) disagrees with your forward on the trained "
            "model: training follows forward, the captions judged come from step"
        )
    losses = curve(reply(out, "losses"))
    if losses and len(losses) > 1 and losses[-1] > LOSS_FELL * losses[0]:
        shown = f" (first epoch {losses[0]:.3f}, last {losses[-1]:.3f})" if figures else ""
        causes.append(f"the training loss did not fall{shown}: no learning signal reaches the parameters")
    return causes


def expect_exact_match(published: Published, out, test: Scenes, where: str) -> None:
    """The verdict of the exact-match training checks: the returned greedy captions reach the threshold on the test
    scenes."""
    accuracy = exact_match_of(out, test)
    threshold = published.threshold
    causes = "".join(f"; {cause}" for cause in known_causes(out))
    unshaped = "".join(f"; {cause}" for cause in known_causes(out, figures=False))
    expect(
        accuracy >= threshold,
        f"exact match {accuracy:.3f} on the {where} test scenes; the threshold is {threshold}{causes}",
        safe=f"exact match {accuracy:.3f}, threshold {threshold}{unshaped}",
    )


# Part 5: the captions reach the exact-match threshold, and a look policy trained by the student's REINFORCE alone
# (shared.looking) looks at the object it is asked about. The reference 0.939 .. 0.971 over twenty seeds (one and two
# threads) and three draws of scenes; a wrong sign at most 0.002, a detached log-probability at most 0.186, uniform
# weights about 0.10 (the kit's threshold notes).
LOOK_THRESHOLD = 0.5
LOOK_HINT = (
    "the look policy, trained by your sample_location, update_baseline and reinforce_loss alone (reward 1 when the "
    "sampled cell holds the object asked about), did not learn to look at that object; uniform weights score about "
    "0.10, a policy that learnt to look away 0.00"
)


def look_score_of(out, test: Scenes) -> float:
    """The score of the look policy's weights a run returned under "look" ((N, len(NAMES), L): every name on every
    test scene) on `test` (shared.looking.look_score). Raises CheckFailed naming what is malformed."""
    weights = reply(out, "look")
    expected = (len(test), len(NAMES), GRID * GRID)
    if not isinstance(weights, torch.Tensor) or not weights.is_floating_point() or tuple(weights.shape) != expected:
        got = tuple(weights.shape) if isinstance(weights, torch.Tensor) else type_name(weights)
        raise CheckFailed(f"the look policy's weights: expected a float tensor of shape {expected}, got {got}")
    weights = weights.double()
    if not bool(torch.isfinite(weights).all()) or bool((weights < 0).any()):
        raise CheckFailed("the look policy's weights: expected finite non-negative weights, got NaN, inf or negatives")
    if not torch.allclose(weights.sum(-1), torch.ones((), dtype=weights.dtype), atol=1e-3):
        raise CheckFailed("the look policy's weights: expected each row to sum to 1 (a distribution over the cells)")
    return look_score(weights, objects_of(test.objects))


def expect_exact_match_and_the_look(published: Published, out, test: Scenes, where: str) -> None:
    """The captions reach the exact-match threshold (expect_exact_match) and the look policy LOOK_THRESHOLD."""
    expect_exact_match(published, out, test, where)
    score = look_score_of(out, test)
    expect(
        score >= LOOK_THRESHOLD,
        f"look score {score:.3f} on the {where} test scenes; the threshold is {LOOK_THRESHOLD}: {LOOK_HINT}",
        safe=f"look score {score:.2f}, threshold {LOOK_THRESHOLD}: {LOOK_HINT}",
    )


def look_of(out, test: Scenes) -> str:
    """The look policy's score beside its threshold, in words (check --train shows it with the exact match)."""
    try:
        return f"look score {look_score_of(out, test):.3f} (needs >= {LOOK_THRESHOLD})"
    except CheckFailed as exc:
        return str(exc)


# StyleNet: the threshold is the factual content-slot accuracy; the swap of the factor must also switch the style.
ROMANTIC_STYLE_RATE = 0.90  # at least (the reference: 0.995 .. 1.000)
FACTUAL_STYLE_RATE = 0.10  # at most (the reference: 0.000)


def style_scores_of(out, test: Scenes) -> dict[str, dict]:
    """shared.metrics.style_scores of the captions under each factor ({style: (N, T) tokens} under "tokens")."""
    scores = {}
    for style in ("factual", "romantic"):
        try:
            captions = decode_batch(predicted_tokens(reply(out, "tokens"), len(test), style))
        except ValueError as exc:  # a token id outside the vocabulary
            raise CheckFailed(f"the trained model's {style} captions: {exc}") from None
        scores[style] = style_scores(captions, test.references)
    return scores


def style_switch_of(out, test: Scenes) -> str:
    """The style rates of StyleNet's verdict beside what it needs, in words (check --train shows them with the
    score)."""
    scores = style_scores_of(out, test)
    return (
        f"style switch: romantic captions' style rate {scores['romantic']['style_rate']:.3f} (needs >= "
        f"{ROMANTIC_STYLE_RATE}), factual captions' {scores['factual']['style_rate']:.3f} (needs <= "
        f"{FACTUAL_STYLE_RATE})"
    )


def expect_the_style_switch(published: Published, out, test: Scenes, where: str) -> None:
    """Swapping the factor switches the style (style rates) and the factual captions keep the content (slots)."""
    if not isinstance(out, dict):
        raise CheckFailed(f"the trained model's captions: unexpected reply {type_name(out)}")
    scores = style_scores_of(out, test)
    romantic, factual = scores["romantic"]["style_rate"], scores["factual"]["style_rate"]
    content = scores["factual"]["content_slots"]
    summary = (
        f"style rate {romantic:.3f} romantic (needs >= {ROMANTIC_STYLE_RATE}), {factual:.3f} factual "
        f"(needs <= {FACTUAL_STYLE_RATE}); factual content slots {content:.3f} (needs >= {published.threshold})"
    )
    ok = romantic >= ROMANTIC_STYLE_RATE and factual <= FACTUAL_STYLE_RATE and content >= published.threshold
    expect(ok, f"on the {where} test scenes: {summary}", safe=summary)
