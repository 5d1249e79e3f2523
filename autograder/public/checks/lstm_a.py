"""Part 6 public checks: the schedule table of LSTM-A1..A5 and its inputs kept in the autograd graph, the state the
prefix leaves in the LSTM cell and step-by-step decoding against teacher forcing. (The part's hidden checks
and A4 trained on hidden data run in the grader, after the deadline.)

Expected values: the schedule from the spec's table (TABLE, written out here) and the gradients' closed form; the
state after the prefix and teacher forcing's log-probabilities from golden data (autograder/public/golden/lstm_a.pt),
the reference model holding the injected weights, run on the fixed public cases by `python -m instructor golden`.
In the grader's round those two checks draw sizes and weights of their own, scored by the reference there.

Every model check injects all parameters explicitly (a float64 state dict generated here from the case's
seed), so nothing depends on the student's construction order or random draws. Tensors returned by
schedule() are recognised by value: a copy of an input counts as that input."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from hypothesis import example, given

from autograder.public import golden
from autograder.public.checks import check, current_round
from autograder.public.compare import expect, expect_tensor, expect_tuple, type_name
from autograder.public.strategies import (
    FEW,
    LSTM_A_VARIANTS,
    examples,
    gradient_batch_sizes,
    gradient_widths,
    lstm_a_sizes,
    lstm_a_unknown_variants,
    schedule_batch_sizes,
    schedule_widths,
    seeds,
    tensor,
)
from autograder.public.tolerances import EXACT, LSTM_A, SAME_INPUT, SCHEDULE_GRAD
from shared.vocab import END, PAD, START

# The table of the spec, written out independently of the reference: variant -> (prefix, per-step input).
TABLE = {
    "LSTM": (("image",), None),
    "A1": (("attr",), None),
    "A2": (("image", "attr"), None),
    "A3": (("attr", "image"), None),
    "A4": (("attr",), "image"),
    "A5": (("image",), "attr"),
}
INPUT_NAME = {"image": "image_input", "attr": "attr_input"}
STEPS = examples(6)  # step-by-step decoding costs T calls per variant: fewer examples
# The first case of every model property (an explicit example: it runs first and, when the code under test
# raises, fails at once instead of being shrunk): E != H, DV == E, two prefix steps for A2/A3.
FIRST = dict(seed=0, N=2, T=4, V=5, D=2, L=2, E=3, H=4, DV=3, n_attr=3)
# The model checks' public cases (FIRST, then small sizes with one caption, one word, one location, E != DV, ...):
# their expected values are golden data; the grader's round draws sizes of its own (lstm_a_sizes).
INIT_STATE_SIZES = (
    FIRST,
    dict(seed=0, N=1, T=2, V=4, D=1, L=1, E=1, H=1, DV=1, n_attr=1),
    dict(seed=0, N=1, T=2, V=4, D=1, L=1, E=4, H=1, DV=4, n_attr=1),
    dict(seed=24823, N=2, T=4, V=8, D=3, L=4, E=4, H=2, DV=4, n_attr=6),
    dict(seed=428, N=4, T=3, V=6, D=4, L=1, E=2, H=1, DV=2, n_attr=4),
    dict(seed=36466, N=3, T=2, V=7, D=3, L=1, E=3, H=4, DV=5, n_attr=2),
    dict(seed=14, N=1, T=5, V=5, D=3, L=2, E=4, H=5, DV=4, n_attr=2),
    dict(seed=2147483647, N=4, T=3, V=6, D=2, L=3, E=5, H=1, DV=4, n_attr=6),
    dict(seed=1365068, N=1, T=5, V=6, D=3, L=2, E=3, H=6, DV=3, n_attr=4),
    dict(seed=728599069, N=4, T=5, V=6, D=2, L=4, E=2, H=4, DV=2, n_attr=2),
    dict(seed=686, N=1, T=6, V=8, D=1, L=2, E=4, H=4, DV=3, n_attr=3),
)
STEP_SIZES = (
    FIRST,
    dict(seed=0, N=1, T=2, V=4, D=1, L=1, E=1, H=1, DV=1, n_attr=1),
    dict(seed=733, N=4, T=2, V=5, D=2, L=4, E=3, H=2, DV=4, n_attr=5),
    dict(seed=2834199, N=4, T=6, V=5, D=2, L=3, E=4, H=3, DV=4, n_attr=3),
    dict(seed=114076, N=2, T=3, V=6, D=2, L=1, E=4, H=4, DV=4, n_attr=2),
    dict(seed=2532, N=4, T=5, V=5, D=2, L=1, E=6, H=4, DV=6, n_attr=2),
    dict(seed=92058, N=2, T=3, V=6, D=1, L=3, E=5, H=1, DV=5, n_attr=2),
)


# -- cases ----------------------------------------------------------------------------------------


def _describe(sizes: dict, variant: str | None = None) -> str:
    s = sizes
    head = f"variant={variant!r}, " if variant is not None else ""
    return (
        head + f"N={s['N']}, T={s['T']}, V={s['V']}, L={s['L']}, D={s['D']}, DV={s['DV']}, E={s['E']}, "
        f"H={s['H']}, n_attr={s['n_attr']}, seed={s['seed']}"
    )


def _parameter_shapes(sizes: dict) -> dict[str, tuple[int, ...]]:
    s = sizes
    E, H = s["E"], s["H"]
    return {
        "fc.weight": (s["DV"], s["D"] * s["L"]),
        "fc.bias": (s["DV"],),
        "emb.weight": (s["V"], E),
        "Tv.weight": (E, s["DV"]),
        "Tv.bias": (E,),
        "Ta.weight": (E, s["n_attr"]),
        "Ta.bias": (E,),
        "cell.weight_ih": (4 * H, E),
        "cell.weight_hh": (4 * H, H),
        "cell.bias_ih": (4 * H,),
        "cell.bias_hh": (4 * H,),
        "out.weight": (s["V"], H),
        "out.bias": (s["V"],),
    }


def _weights(sizes: dict, dtype=torch.float64) -> dict[str, torch.Tensor]:
    """Every parameter of the model, drawn from the case's seed (scale 0.7: gates neither saturated nor flat)."""
    return {
        name: tensor(sizes["seed"] + 7919 * (k + 1), *shape, scale=0.7).to(dtype)
        for k, (name, shape) in enumerate(_parameter_shapes(sizes).items())
    }


def _inputs(sizes: dict, dtype=torch.float64):
    """features (N, L, D), attribute probabilities (N, n_attr) in [0, 1], captions (N, T): START, words, END, PAD."""
    s = sizes
    g = torch.Generator().manual_seed(s["seed"] + 1)
    features = torch.randn(s["N"], s["L"], s["D"], generator=g, dtype=torch.float64).to(dtype)
    attributes = torch.rand(s["N"], s["n_attr"], generator=g, dtype=torch.float64).to(dtype)
    captions = torch.randint(3, s["V"], (s["N"], s["T"]), generator=g)
    captions[:, 0] = START
    if s["T"] >= 3:
        captions[0, -2], captions[0, -1] = END, PAD
    return features, attributes, captions


def reference_model(reference, variant: str, sizes: dict, weights: dict):
    """The reference's LSTMA (`reference`: the module solutions.lstm_a) of these sizes holding `weights`, in their
    dtype, in eval mode."""
    s = sizes
    model = reference.LSTMA(
        variant, n_vocab=s["V"], D=s["D"], L=s["L"], E=s["E"], H=s["H"], n_attr=s["n_attr"], DV=s["DV"]
    ).to(weights["cell.weight_ih"].dtype)
    model.load_state_dict(weights)
    return model.eval()


def expected_init_state(reference, variant: str, sizes: dict) -> tuple[torch.Tensor, ...]:
    """(h, c, per_step): the reference's init_state on the case of `sizes` (_weights, _inputs), float64."""
    features, attributes, _ = _inputs(sizes)
    with torch.no_grad():
        return tuple(reference_model(reference, variant, sizes, _weights(sizes)).init_state(features, attributes))


def expected_log_probs(reference, variant: str, sizes: dict) -> torch.Tensor:
    """Teacher forcing's log-probabilities (N, T-1, V): the reference's forward on the case of `sizes`, float64."""
    features, attributes, captions = _inputs(sizes)
    with torch.no_grad():
        return F.log_softmax(
            reference_model(reference, variant, sizes, _weights(sizes))(features, attributes, captions), -1
        )


def golden_cases(reference) -> dict[str, list]:
    """This part's golden data, computed with `reference` (python -m instructor golden): per public case, per
    variant (LSTM_A_VARIANTS order), the state after the prefix and the teacher-forced log-probabilities."""
    return {
        "init_state": [
            [list(expected_init_state(reference, v, sizes)) for v in LSTM_A_VARIANTS] for sizes in INIT_STATE_SIZES
        ],
        "log_probs": [[expected_log_probs(reference, v, sizes) for v in LSTM_A_VARIANTS] for sizes in STEP_SIZES],
    }


def for_model_cases(name: str, public_sizes: tuple, settings, run, expected) -> None:
    """run(sizes, variant, want) on every model case of this round: in the public round the fixed sizes and their
    golden values (golden data `name`); in the grader's, sizes drawn with `settings`, and expected(reference,
    variant, sizes) of the grader's reference."""
    now = current_round()
    if now.public:
        for sizes, wants in zip(public_sizes, golden.load("lstm_a", FINGERPRINT)[name]):
            for variant, want in zip(LSTM_A_VARIANTS, wants):
                run(sizes, variant, want)
        return

    @settings
    @given(lstm_a_sizes())
    def graders(sizes):
        for variant in LSTM_A_VARIANTS:
            run(sizes, variant, expected(now.reference("lstm_a"), variant, sizes))

    graders()


def _model_call(
    student, recipe: str, variant: str, sizes: dict, weights: dict, features, attributes, captions, **kwargs
):
    return student.call(
        recipe,
        variant=variant,
        sizes=sizes,
        state=weights,
        features=features,
        attributes=attributes,
        captions=captions,
        **kwargs,
    )


def _which(x, image: torch.Tensor, attr: torch.Tensor) -> str:
    """Which input a returned tensor is, by value: "image", "attr", or a description of what it is instead."""
    if not isinstance(x, torch.Tensor):
        return f"a {type_name(x)}"
    if tuple(x.shape) != tuple(image.shape):
        return f"a tensor of shape {tuple(x.shape)}"
    found = [name for name, t in (("image", image), ("attr", attr)) if x.dtype == t.dtype and SAME_INPUT.allclose(x, t)]
    if found:
        return found[0]
    return "a tensor equal to neither input"


def _schedule_inputs(seed: int, n: int, e: int):
    return tensor(seed, n, e).float(), tensor(seed + 1, n, e).float()


@check()
def schedule_follows_the_table(student, ctx):
    """schedule gives each variant's prefix in order and its per-step input (or None); unknown variants raise ValueError."""

    @FEW
    @given(seeds, schedule_batch_sizes, schedule_widths, lstm_a_unknown_variants)
    @example(0, 2, 3, "A6")
    def prop(seed, n, e, unknown):
        image, attr = _schedule_inputs(seed, n, e)
        for variant in LSTM_A_VARIANTS:
            describe = f"variant={variant!r}, N={n}, E={e}, seed={seed}"
            out = student.call("lstm_a.schedule_case", variant=variant, image=image.clone(), attr=attr.clone())
            result = expect_tuple(
                f"schedule({variant!r}) result (prefix, per_step)", out["result"], 2, describe, exact=True
            )
            prefix, per_step = result
            want_prefix, want_per_step = TABLE[variant]
            expect(
                isinstance(prefix, list),
                f"schedule({variant!r}) prefix: expected a list of (N, E) tensors, got {type_name(prefix)}",
                describe,
            )
            got = [_which(x, image, attr) for x in prefix]
            expect(
                got == list(want_prefix),
                f"schedule({variant!r}) prefix: expected [{', '.join(INPUT_NAME[p] for p in want_prefix)}], got "
                f"[{', '.join(INPUT_NAME.get(p, p) for p in got)}]",
                describe,
            )
            if want_per_step is None:
                expect(
                    per_step is None,
                    f"schedule({variant!r}) per_step: expected None ({variant} adds nothing to "
                    f"the word embeddings), got {INPUT_NAME.get(_which(per_step, image, attr), 'a tensor')}",
                    describe,
                )
            else:
                which = "None" if per_step is None else _which(per_step, image, attr)
                expect(
                    which == want_per_step,
                    f"schedule({variant!r}) per_step: expected "
                    f"{INPUT_NAME[want_per_step]}, got {INPUT_NAME.get(which, which)}",
                    describe,
                )
            for name, after, before in zip(("image_input", "attr_input"), out["inputs_after"], (image, attr)):
                expect_tensor(f"{name} after schedule({variant!r})", after, before, tolerance=EXACT, case=describe)
        raised = student.call("lstm_a.schedule_unknown", variant=unknown, image=image, attr=attr)
        expect(
            raised == "ValueError",
            f"schedule({unknown!r}): expected ValueError for an unknown variant, "
            + ("but it returned normally" if raised == "returned" else f"got {raised}"),
            f"N={n}, E={e}",
        )

    prop()


@check()
def schedule_keeps_the_inputs_in_the_graph(student, ctx):
    """The tensors schedule returns carry gradients back to image_input and attr_input (nothing detached)."""

    @FEW
    @given(seeds, gradient_batch_sizes, gradient_widths)
    @example(0, 2, 3)
    def prop(seed, n, e):
        image, attr, weight = tensor(seed, n, e), tensor(seed + 1, n, e), tensor(seed + 2, n, e)
        zero = torch.zeros(n, e, dtype=torch.float64)
        for variant in LSTM_A_VARIANTS:
            describe = f"variant={variant!r}, N={n}, E={e}, seed={seed}"
            out = student.call("lstm_a.schedule_gradients", variant=variant, image=image, attr=attr, weight=weight)
            expect(
                isinstance(out, list), f"schedule({variant!r}): expected a prefix list and a per-step input", describe
            )
            # Judged per returned tensor that is one of the inputs by value (which one belongs where is
            # schedule_follows_the_table's business): the gradient must reach that input, and only it.
            for k, entry in enumerate(out):
                value, grad_image, grad_attr = expect_tuple("(value, gradients)", entry, 3, describe)
                which = _which(value, image, attr)
                if which not in INPUT_NAME:
                    continue
                for name, got in (("image", grad_image), ("attr", grad_attr)):
                    expect_tensor(
                        f"gradient of returned tensor {k} (a copy of {INPUT_NAME[which]}) with respect to "
                        f"{INPUT_NAME[name]} in schedule({variant!r})",
                        got,
                        weight if name == which else zero,
                        tolerance=SCHEDULE_GRAD,
                        case=describe,
                    )

    prop()
    expect_schedule_returns_the_inputs(student)


def expect_schedule_returns_the_inputs(student) -> None:
    """The anchor of the gradient check, which a schedule returning neither input passes vacuously: over the
    variants, what schedule returns holds image_input and attr_input (the table feeds both to the LSTM)."""
    image, attr, weight = tensor(0, 2, 3), tensor(1, 2, 3), tensor(2, 2, 3)
    seen = set()
    for variant in LSTM_A_VARIANTS:
        out = student.call("lstm_a.schedule_gradients", variant=variant, image=image, attr=attr, weight=weight)
        for entry in out if isinstance(out, list) else []:
            if isinstance(entry, (tuple, list)) and len(entry) == 3:
                seen.add(_which(entry[0], image, attr))
    missing = [INPUT_NAME[name] for name in ("image", "attr") if name not in seen]
    expect(
        not missing,
        f"your schedule returns no {' and no '.join(missing)} in any of the variants "
        f"{list(LSTM_A_VARIANTS)}: the table feeds the image and the attributes to the LSTM",
        "the anchor of the gradient check: N=2, E=3, seed=0",
    )


@check()
def init_state_matches_the_lstm_cell(student, ctx):
    """init_state equals nn.LSTMCell (same weights) fed the prefix from a zero state, with the per-step input or zeros."""

    def run(sizes, variant, want):
        weights = _weights(sizes)
        features, attributes, _ = _inputs(sizes)
        describe = _describe(sizes, variant)
        out = student.call(
            "lstm_a.init_state_case",
            variant=variant,
            sizes=sizes,
            state=weights,
            features=features,
            attributes=attributes,
        )
        got = expect_tuple("init_state result (h, c, per_step)", out, 3, describe, exact=True)
        for name, g, w in zip(("h", "c"), got, want):
            expect_tensor(f"init_state {name}", g, w, tolerance=LSTM_A, case=describe)
        # zeros may come in any floating dtype; a per-step input is the float64 projection itself
        expect_tensor(
            "init_state per_step",
            got[2],
            want[2],
            tolerance=LSTM_A,
            case=describe,
            check_dtype=TABLE[variant][1] is not None,
        )

    for_model_cases("init_state", INIT_STATE_SIZES, FEW, run, expected_init_state)


@check()
def step_by_step_equals_teacher_forcing(student, ctx):
    """init_state then step() word by word gives teacher forcing's log-probabilities (nn.LSTMCell, same weights)."""

    def run(sizes, variant, want):
        weights = _weights(sizes)
        features, attributes, captions = _inputs(sizes)
        got = _model_call(student, "lstm_a.step_by_step", variant, sizes, weights, features, attributes, captions)
        expect_tensor(
            "step-by-step log-probabilities (N, T-1, V)",
            got,
            want,
            tolerance=LSTM_A,
            case=_describe(sizes, variant),
        )

    for_model_cases("log_probs", STEP_SIZES, STEPS, run, expected_log_probs)


FINGERPRINT = golden.fingerprint(
    INIT_STATE_SIZES,
    STEP_SIZES,
    _weights,
    _inputs,
    _parameter_shapes,
    reference_model,
    expected_init_state,
    expected_log_probs,
    golden_cases,
)
