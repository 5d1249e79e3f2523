"""autograder.public.compare's failure messages name the entry that fails, and finding it imports nothing heavy: the
grading process lives for a whole grade beside a worker (benchmarks/RESULTS.md)."""

import subprocess
import sys
import textwrap

import pytest
import torch

from autograder.public.compare import CheckFailed, Tolerance, expect_tensor, index_of
from autograder.public.tolerances import EXACT


def test_index_of_is_the_index_of_a_flat_position():
    t = torch.arange(2 * 3 * 4).reshape(2, 3, 4)
    for flat in (0, 5, 13, 23):
        idx = index_of(torch.tensor(flat), t.shape)
        assert idx == index_of(flat, t.shape) and int(t[idx]) == flat and all(isinstance(i, int) for i in idx)


def test_the_worst_entry_is_named_by_its_index():
    expected = torch.zeros(2, 3, 4)
    actual = expected.clone()
    actual[1, 2, 0], actual[0, 1, 3] = 0.5, 0.1
    with pytest.raises(CheckFailed, match=r"2 of 24 entries outside .* largest error 0\.5 at \(1, 2, 0\)"):
        expect_tensor("x", actual, expected, tolerance=Tolerance(0, 1e-6))


def test_naming_the_worst_entry_does_not_import_sympy():
    """torch.unravel_index's argument check imports sympy (about 30 MB, a second) in the process that calls it."""
    code = textwrap.dedent("""
        import sys, torch
        from autograder.public.compare import CheckFailed, expect_tensor
        from autograder.public.tolerances import EXACT
        try:
            expect_tensor("x", torch.ones(3, 4), torch.zeros(3, 4), tolerance=EXACT)
        except CheckFailed as exc:
            print("failed:", exc)
        print("sympy" in sys.modules)
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "False" and "at (0, 0)" in done.stdout


@pytest.mark.parametrize(
    "actual, expected",
    [
        (torch.ones(3, dtype=torch.bool), torch.tensor([0.3, 0.7, 1.5])),  # True is 1, not "nonzero"
        (torch.tensor([1, 3]), torch.tensor([1.0, 2.7])),  # an int is its value, not a truncation
        (torch.ones(2, dtype=torch.bool), torch.tensor([2, 5])),  # True is 1, not any nonzero integer
    ],
    ids=["bool for floats", "ints for floats", "bool for ints"],
)
def test_A69_a_result_of_another_dtype_is_compared_by_its_values(actual, expected):
    """check_dtype=False compares values: a bool or integer result was compared after casting what is expected to its
    dtype, so a constant all-True tensor matched any expected value with no zero (update_baseline earned 2 points)."""
    with pytest.raises(CheckFailed, match="entries"):
        expect_tensor("x", actual, expected, tolerance=Tolerance(1e-5, 1e-6), check_dtype=False)


def test_a_result_of_another_dtype_with_the_right_values_passes():
    expect_tensor("x", torch.tensor([1, 2]), torch.tensor([1.0, 2.0]), tolerance=EXACT, check_dtype=False)
    expect_tensor("x", torch.tensor([True, False]), torch.tensor([1, 0]), tolerance=EXACT, check_dtype=False)
