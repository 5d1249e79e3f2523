"""Part 1 public check, the lab's image controls: zeroed_features and shuffled_features."""

from __future__ import annotations

import re

import torch
from hypothesis import example, given

from autograder.public.checks import check
from autograder.public.compare import (
    expect,
    expect_tensor,
    type_name,
)
from autograder.public.strategies import (
    DTYPES,
    FEW,
    control_cases,
    tensor,
)
from autograder.public.tolerances import (
    EXACT,
)

# -- the lab's image controls ----------------------------------------------------------------------


def _controls(student, features: torch.Tensor, seeds: list[int], describe: str) -> dict:
    out = student.call("show_and_tell.controls", features=features, seeds=seeds)
    expect(
        isinstance(out, dict) and isinstance(out.get("shuffled"), list) and len(out["shuffled"]) == len(seeds),
        f"unexpected result {type_name(out)}",
        describe,
    )
    return out


def _returned(name: str, outcome: dict, features: torch.Tensor, describe: str) -> torch.Tensor:
    """What a control returned: a tensor of the features' shape, dtype and device."""
    expect("raised" not in outcome, f"{name} raised {outcome.get('raised')}: {outcome.get('message')}", describe)
    got = outcome["returned"]
    expect(isinstance(got, torch.Tensor), f"{name}: expected a tensor, got {type_name(got)}", describe)
    expect(
        tuple(got.shape) == tuple(features.shape),
        f"{name}: expected shape {tuple(features.shape)}, got {tuple(got.shape)}",
        describe,
    )
    expect(got.dtype == features.dtype, f"{name}: expected dtype {features.dtype}, got {got.dtype}", describe)
    expect(got.device == features.device, f"{name}: expected device {features.device}, got {got.device}", describe)
    return got


def shuffle_permutation(name: str, got: torch.Tensor, features: torch.Tensor, describe: str) -> list[int]:
    """Which scene's features each row of `got` holds (features has distinct rows), checked to be a permutation of
    the scenes with no scene keeping its own."""
    n = features.shape[0]
    perm = []
    for row in range(n):
        match = [m for m in range(n) if torch.equal(got[row], features[m])]
        expect(
            len(match) == 1,
            f"{name}: row {row} is not any scene's features (expected every row to be one scene's features, unchanged)",
            describe,
        )
        perm.append(match[0])
    expect(
        sorted(perm) == list(range(n)),
        f"{name}: some scene's features appear twice and another's not at all "
        f"(rows hold scenes {perm}; expected a permutation)",
        describe,
    )
    kept = [row for row in range(n) if perm[row] == row]
    expect(
        not kept,
        f"{name}: scene(s) {kept} kept their own features (rows hold scenes {perm}; every scene must read "
        "another scene's image)",
        describe,
    )
    return perm


@check()
def image_controls_hide_each_scenes_own_image(student, ctx):
    """zeroed_features gives zeros; shuffled_features gives each scene another's features, drawn from a generator.

    The shuffle is a permutation of the scenes with no fixed point; neither function changes its input."""

    @FEW
    @given(control_cases)
    @example((0, 2, "float32", (3,)))
    def prop(case):
        seed, n, dtype, rest = case
        features = tensor(seed, n, *rest).to(DTYPES[dtype])
        seeds = [seed + i for i in range(8)]
        describe = (
            f"features ({', '.join(map(str, (n, *rest)))}) {dtype} standard normal, seed={seed}, "
            f"generators torch.Generator().manual_seed(s) for s in {seeds}"
        )
        out = _controls(student, features, seeds, describe)
        expect_tensor(
            "features after zeroed_features(features) (it must not change its input)",
            out["features_after_zeroed"],
            features,
            tolerance=EXACT,
            case=describe,
        )
        zeroed = _returned("zeroed_features(features)", out["zeroed"], features, describe)
        expect(not bool(zeroed.any()), "zeroed_features(features): not all zeros", describe)
        perms = []
        for s, outcome in zip(seeds, out["shuffled"]):
            name = f"shuffled_features(features, generator seeded {s})"
            perms.append(shuffle_permutation(name, _returned(name, outcome, features, describe), features, describe))
        again = _returned(
            f"shuffled_features(features, generator seeded {seeds[0]}) called again", out["again"], features, describe
        )
        expect(
            torch.equal(again, out["shuffled"][0]["returned"]),
            f"shuffled_features: the same generator seed ({seeds[0]}) gave two different shuffles (draw the "
            "permutation from the generator only)",
            describe,
        )
        # With 4 or more scenes there are at least 9 permutations without a fixed point: eight draws from the
        # generator all giving the same one (probability under 1e-6) mean the generator is not used.
        expect(
            n < 4 or len({tuple(p) for p in perms}) > 1,
            f"shuffled_features: eight different generator seeds all gave the same shuffle {perms[0]} (the "
            "permutation must be drawn from the generator)",
            describe,
        )
        expect_tensor(
            "features after shuffled_features (it must not change its input)",
            out["features_after"],
            features,
            tolerance=EXACT,
            case=describe,
        )
        single = features[:1].clone()
        one = _controls(student, single, [seed], describe + ", then features[:1] alone")["shuffled"][0]
        expect(
            one.get("raised") == "ValueError" and re.search(r"\bfeatures\b", one.get("message", "")) is not None,
            "shuffled_features on a single scene: expected a ValueError naming features (no other scene to read), "
            + (f"got {one['raised']}: {one.get('message')!r}" if "raised" in one else "but it returned normally"),
            describe,
        )

    prop()
