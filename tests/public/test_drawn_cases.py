"""The cases a property draws depend only on its round (and the installed hypothesis), never on what else the
process has imported.

hypothesis (from 6.131) mixes into its draws the constants it finds in the source of every "local" module in
sys.modules, collected again whenever that set grows. In the kit that set is whatever the process happened to import
before the draw: the parts graded before this one, the reference modules, an editable install or not, a student's
own helper module in a notebook kernel. autograder/public/strategies.py empties that pool; these tests load a module
full of constants beside the kit and check that not one drawn case moves.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Draws each kind of case the checks use (integers, floats, tuples of them, BLEU word lists) in the public round and
# in a grader's round, and prints them. argv[1]: a JSON list of modules to import first.
DRAW = r"""
import importlib, json, sys
for name in json.loads(sys.argv[1]):
    importlib.import_module(name)
from hypothesis import given, strategies as st
from autograder.public import strategies as s
from autograder.public.checks import Round, running_as

cases = {}
for kind, round in (("public", Round()), ("grader", Round(seed=20261204))):
    for name, strategy in (("model_cases", s.model_cases), ("toy_cases", s.toy_cases),
                           ("bleu_corpus", s.bleu_corpus()),
                           ("floats", st.lists(st.floats(-1e6, 1e6), max_size=4)),
                           ("text", st.text(alphabet="abcdefgh", max_size=6))):
        drawn = cases.setdefault(f"{kind} {name}", [])
        with running_as("public", round):
            @s.examples(25)
            @given(strategy)
            def draw(case):
                drawn.append(repr(case))
            draw()
print(json.dumps(cases))
"""

# Integers, floats and strings a module may hold, in the ranges the kit's strategies draw from.
CONSTANTS = """
SEEDS = [123457, 2345671, 34567, 456713, 5671, 67139, 713937, 1393711, 39371, 937131, 2, 3, 5, 7]
SCALES = [0.125, 1.5, 2.75, -3.25, 12345.5, -99.5]
WORDS = ["abc", "hgfe", "dcba", "aaaa", "bead", "cafe"]
"""


def _drawn(imports: list[str], extra_path: Path | None = None) -> dict[str, list[str]]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + ([str(extra_path)] if extra_path else []))
    env["PYTHONHASHSEED"] = "0"
    done = subprocess.run(
        [sys.executable, "-c", DRAW, json.dumps(imports)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def _moved(first: dict[str, list[str]], second: dict[str, list[str]]) -> list[str]:
    assert first.keys() == second.keys()
    return [
        f"{key}: {sum(a != b for a, b in zip(first[key], second[key]))} of {len(first[key])} cases differ"
        for key in first
        if first[key] != second[key]
    ]


def test_a_module_of_constants_beside_the_kit_moves_no_drawn_case(tmp_path):
    """A student's helper module (or any other local module) loaded before the checks run changes none of the
    cases, public or the grader's."""
    (tmp_path / "my_helpers.py").write_text(CONSTANTS)
    alone, beside = _drawn([]), _drawn(["my_helpers"], tmp_path)
    assert sum(len(v) for v in alone.values()) >= 200
    assert not _moved(alone, beside), _moved(alone, beside)


def test_the_grader_draws_the_same_cases_whichever_parts_it_graded_before():
    """A part graded alone (`grade --part`, `batch --part`) sees the cases it saw in a full grade, where the
    earlier parts' checks, recipes and reference modules had been imported first."""
    imported_by_a_full_grade = [
        "autograder.grader.engine",
        "autograder.grader.checks.show_and_tell",
        "autograder.grader.checks.attention",
        "autograder.worker.recipes",
        "solutions.show_and_tell",
        "solutions.decoding",
        "solutions.attention",
        "shared.training",
        "shared.encoder",
    ]
    alone, after = _drawn([]), _drawn(imported_by_a_full_grade)
    assert not _moved(alone, after), _moved(alone, after)
