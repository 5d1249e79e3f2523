"""What a training check keeps of the student's run for the feedback report (autograder/grader/report): its curves,
its captions of the shown hidden scenes, attention maps and beams."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from autograder.grader.context import GradingContext
from autograder.public.training_verdicts import curve, reply
from shared.scenes import make_scenes
from shared.vocab import END, PAD, T_MAX, VOCAB, VOCAB_SIZE, decode_batch

if TYPE_CHECKING:
    from autograder.grader.training.spec import TrainingSpec

# -- what a training check keeps for the feedback report (autograder/grader/report) ------------------------
# Only the student's own run, and only its first SHOWN hidden test scenes: docs/grader.md ("Feedback reports")
# says why that is shown and when. Keeping never raises and never changes a verdict: what is malformed is
# left out, and the report says the figure is missing.

SHOWN = 4  # hidden test scenes a report shows (the first ones of the test split)


def _captions(tokens, n: int) -> list[str] | None:
    """The first n captions of a (N >= n, T) long token tensor, or None."""
    if not isinstance(tokens, torch.Tensor) or tokens.dim() != 2 or tokens.shape[0] < n or tokens.dtype != torch.long:
        return None
    try:
        return decode_batch(tokens[:n])
    except ValueError:
        return None


def shown_scenes(ctx: GradingContext) -> dict:
    """The first SHOWN hidden test scenes: their reference captions and (N, 3, 32, 32) images. The data set
    keeps no pixels when its encoder outputs come from the cache; a scene is a pure function of the seed's
    random stream, so the first scenes of the same stream are drawn again (and compared)."""
    test = ctx.data.test.scenes
    n = min(SHOWN, len(test))
    references = [list(r) for r in test.references[:n]]
    images = test.images[:n].clone() if test.images is not None else None
    if images is None:
        again = make_scenes(n, test.seed, max_objects=max(len(o) for o in test.objects))
        images = again.images if again.references == references else None
    return {"references": references, "images": images}


def keep_run(ctx: GradingContext, part: str, curves: dict, captions: dict) -> None:
    """Keep the training curves ({name: per-epoch losses}) and the captions of the shown test scenes
    ({name: (N, T) tokens of the whole test split}) of the student's run, with those scenes."""
    try:
        scenes = shown_scenes(ctx)
        n = len(scenes["references"])
        kept_curves = {name: c for name, values in curves.items() if (c := curve(values)) is not None}
        kept_captions = {name: c for name, tokens in captions.items() if (c := _captions(tokens, n)) is not None}
    except Exception:  # noqa: BLE001 (the report is optional; the verdict is not)
        return
    if kept_curves:
        ctx.keep(part, "curves", kept_curves)
    if kept_captions:
        ctx.keep(part, "scenes", scenes)
        ctx.keep(part, "captions", kept_captions)


def keep_attention(ctx: GradingContext, part: str, attention, hard: bool = False) -> None:
    """Keep the attention maps a recipe returned for the shown scenes: {"weights": (n, T, L) float, "tokens":
    (n, T) long, the words emitted at each step}. hard: the decoder read one location (the argmax) per step."""
    if not isinstance(attention, dict):
        return
    weights, tokens = attention.get("weights"), attention.get("tokens")
    if not (
        isinstance(weights, torch.Tensor)
        and isinstance(tokens, torch.Tensor)
        and weights.dim() == 3
        and weights.is_floating_point()
        and tokens.dim() == 2
        and tokens.dtype == torch.long
        and tuple(weights.shape[:2]) == tuple(tokens.shape)
        and 0 < weights.shape[0] <= SHOWN
        and weights.shape[1] <= 2 * T_MAX
        and weights.shape[2] <= 1024
        and torch.isfinite(weights).all()
    ):
        return
    words = []
    for row in tokens.tolist():
        if not all(0 <= t < VOCAB_SIZE for t in row):
            return
        step_words = []
        for t in row:
            step_words.append(VOCAB[t])
            if t in (END, PAD):
                break
        words.append(step_words)
    ctx.keep(part, "attention", {"weights": weights.detach().float().clone(), "words": words, "hard": hard})


def keep_beams(ctx: GradingContext, part: str, beams) -> None:
    """Keep the beams a recipe returned for the shown scenes: {"tokens": (n, k, T) long, "scores": (n, k)}."""
    if not isinstance(beams, dict):
        return
    tokens, scores = beams.get("tokens"), beams.get("scores")
    if not (
        isinstance(tokens, torch.Tensor)
        and isinstance(scores, torch.Tensor)
        and tokens.dim() == 3
        and tokens.dtype == torch.long
        and scores.dim() == 2
        and tuple(scores.shape) == tuple(tokens.shape[:2])
        and 0 < tokens.shape[0] <= SHOWN
        and tokens.shape[1] <= 16
        and scores.is_floating_point()
    ):
        return
    try:
        captions = [decode_batch(beam) for beam in tokens]
    except ValueError:
        return
    ctx.keep(part, "beams", {"captions": captions, "scores": [[float(s) for s in row] for row in scores.tolist()]})


def keep(spec: TrainingSpec, out, ctx: GradingContext) -> None:
    """Keep what `spec` says the report shows of the student's run: its curves, its captions of the shown scenes
    (with those scenes) and its figures."""
    keep_run(
        ctx,
        spec.part,
        curves={name: reply(out, key) for name, key in spec.curves.items()},
        captions={name: _dig(out, keys) for name, keys in spec.captions.items()},
    )
    for figure in spec.figures:
        FIGURES[figure](ctx, spec.part, out)


def _dig(out, keys: tuple[str, ...]):
    for key in keys:
        out = reply(out, key)
    return out


# The figures a training check can keep beyond curves and captions, by name: what the recipe returns for them.
FIGURES = {
    "beams": lambda ctx, part, out: keep_beams(ctx, part, reply(out, "beams")),
    "attention": lambda ctx, part, out: keep_attention(ctx, part, reply(out, "attention")),
    "hard attention": lambda ctx, part, out: keep_attention(ctx, part, reply(out, "attention"), hard=True),
}


# == the training checks ==========================================================================================
