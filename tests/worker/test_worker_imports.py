"""What a part's workers import before the student's code runs (autograder.worker.main.preload): torch for every part
whose recipes use it, and nothing of torch for a part whose recipes take and return plain data (recipes.WITHOUT_TORCH,
Part 3), which spares that part's zygote torch's import. A student's module that imports torch itself still gets it
set up as every other worker has it: one thread, its generator seeded before each call."""

import subprocess
import sys

import pytest
import torch

from autograder.public.client import SEPARATE_PROCESS, Worker, copy_runtime
from autograder.worker.recipes import WITHOUT_TORCH
from shared.parts import MODULES

# A student's BLEU module that reports, through ngram_counts (a Counter with one key), what its worker holds.
# sys.modules by names built at run time: the source scan refuses a module that names it (A55, A64)
REPORTS_TORCH = """
import os
from collections import Counter


def ngram_counts(tokens, n):
    loaded = getattr(getattr(os, "s" + "ys"), "mod" + "ules")
    return Counter({tuple(sorted(m for m in loaded if m == "torch" or m.startswith("torch."))): 1})
"""
USES_TORCH = """
from collections import Counter

import torch


def ngram_counts(tokens, n):
    return Counter({(torch.get_num_threads(), torch.rand(1).item()): 1})
"""


def _worker(tmp_path, source: str) -> Worker:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "bleu.py").write_text(source)
    return Worker("bleu", tmp_path / "sub", tmp_path / "scratch", copy_runtime(tmp_path / "runtime"), SEPARATE_PROCESS)


def _key(worker: Worker):
    """The one key of the Counter the student's ngram_counts returned."""
    [(key, _count)] = worker.call("bleu.ngram_counts", tokens=["a"], n=1)["items"]
    return key


def test_a_bleu_worker_imports_no_torch_in_either_phase(tmp_path):
    worker = _worker(tmp_path, REPORTS_TORCH)
    try:
        assert _key(worker) == ()  # the public checks' worker, forked from the zygote
        worker.serve_hidden()
        assert _key(worker) == ()  # the hidden checks' worker: the zygote itself
    finally:
        worker.close()


def test_a_bleu_module_that_imports_torch_gets_one_thread_and_a_seeded_generator(tmp_path):
    worker = _worker(tmp_path, USES_TORCH)
    torch.manual_seed(0)
    expected = (1, torch.rand(1).item())
    try:
        assert _key(worker) == expected
        assert _key(worker) == expected  # seeded again before every call
    finally:
        worker.close()


def _imports_torch(part: str) -> bool:
    """Whether loading `part`'s recipes imports torch (in a fresh interpreter)."""
    code = f"import sys; from autograder.worker import recipes; recipes.load({part!r}); print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return out.strip() == "True"


@pytest.mark.parametrize("part", MODULES)
def test_a_part_goes_without_torch_exactly_when_its_recipes_never_import_it(part):
    assert (part in WITHOUT_TORCH) == (not _imports_torch(part))
