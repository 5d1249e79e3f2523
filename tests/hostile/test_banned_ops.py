"""The ban of the reference ops against modules that build every name at run time (docs/security.md, A22 and A29).

The ban runs inside the worker, where the module can switch it off by names built from pieces, or step around it
with a thread of its own (torch's function modes belong to the thread that set them). The grader's source scan
(autograder.public.source_scan) refuses the credit of every check that bans an op to a module that looks names up
at run time or reaches past the worker, and the staff view flags the part. The scan reads the module's text in the
grading process: nothing the module does when it runs can switch it off. These tests grade the evasions with the
real grader, check the scan against a catalogue of ways to turn data into a reference, and check that it flags no
reference module and no variant of the parts with a ban.
"""

from __future__ import annotations

import pytest
import torch

from autograder.grader.staff import FLAG, staff_text
from autograder.public.source_escapes import dynamic_uses
from autograder.public.source_reach import grader_reach
from autograder.public.source_scan import banned_uses
from autograder.worker.forbidden import ForbiddenOpError, forbid
from tests.hostile import harness
from tests.hostile.harness import ROOT, assert_contained, build, run_grade
from tests.hostile.test_hostile import BOUND, PARITY
from tests.meta.variants import all_variants

BANNED_PARTS = ("attention", "show_and_tell", "stylenet")  # the parts with a recipe that bans an op
SCANNED = "your code raised ForbiddenOpError: your module's source uses "
RUN_TIME = "which counts as a use: the grader cannot read what it reaches"


@pytest.fixture(autouse=True, scope="module")
def adopt_orphans():
    harness.set_subreaper(True)
    yield
    harness.set_subreaper(False)
    harness.reap_orphans()


@pytest.mark.parametrize(
    "row, part, parity",
    [
        pytest.param("A22_banned_op_runtime_names", "attention", PARITY, id="A22_banned_op_runtime_names"),
        pytest.param(
            "A22_banned_op_runtime_names_in_a_thread", "attention", PARITY, id="A22_banned_op_runtime_names_in_a_thread"
        ),
        pytest.param(
            "A22_banned_cell_runtime_names",
            "show_and_tell",
            "relu_rnn_step_matches_rnn_cell",
            id="A22_banned_cell_runtime_names",
        ),
        pytest.param("A22_banned_op_through_doctest", "attention", PARITY, id="A22_banned_op_through_doctest"),
    ],
)
def test_A22_names_built_at_run_time_earn_no_parity_points_and_are_flagged(row, part, parity, tmp_path):
    graded = run_grade(build(row, tmp_path / "sub"), (part,))
    assert_contained(graded, within=BOUND)
    result = graded.result(parity)
    assert not result.passed, f"{row}: parity passed with the reference op itself"
    assert result.output.startswith(SCANNED) and RUN_TIME in result.output, result.output
    header = staff_text(graded.report, row).split("\n\n", 1)[0]
    assert f"{FLAG}{part}: the module's source uses " in header, header
    assert "failed check" in header and RUN_TIME.split(":")[0] in header, header


# Ways to turn data into a reference, or to run the op where the worker's ban does not reach; each is one module's
# code (the name scan sees no op name in any of them).
EVASIONS = {
    "getattr with a computed name": "f = getattr(F, 'scaled' + '_dot')",
    "getattr with a name from a variable": "name = ''.join(parts)\nf = getattr(F, name)",
    "setattr with a computed name (restores the original)": "setattr(F, name, kept)",
    "delattr with a computed name": "delattr(F, name)",
    "getattr passed on": "import functools\nf = functools.reduce(getattr, names, torch)",
    "getattr bound to another name": "look = getattr\nf = look(F, name)",
    "a namespace by vars": "f = vars(F)[key]",
    "a namespace by __dict__": "f = F.__dict__[key]",
    "the module's globals": "g = globals()",
    "dir and an index": "names = sorted(dir(F))",
    "__getattribute__": "f = type(F).__getattribute__(F, key)",
    "object.__getattribute__": "f = object.__getattribute__(F, key)",
    "subclasses": "classes = object.__subclasses__()",
    "eval": "f = eval(text)",
    "exec": "exec(text, space)",
    "compile": "code = compile(text, 'x', 'eval')",
    "__import__": "m = __import__(name)",
    "__builtins__": "b = __builtins__",
    "importlib": "import importlib\nm = importlib.import_module(name)",
    "importlib from": "from importlib import import_module",
    "sys.modules": "import sys\nm = sys.modules[name]",
    "sys under another name": "import sys as s\nm = s.modules[name]",
    "sys passed on": "import sys\nm = list(vars_of(sys))",
    "modules from sys": "from sys import modules",
    "_getframe": "import sys\nframe = sys._getframe(1)",
    "sys through another module": "m = torch.sys.modules[name]",
    "os.environ (torch.load's switches)": "import os\nos.environ[key] = '1'",
    "os.system": "import os\nos.system(command)",
    "a traceback's frames": "try:\n    raise ValueError\nexcept ValueError as e:\n    f = e.__traceback__.tb_frame",
    "a frame's caller": "f = frame.f_back.f_locals",
    "gc": "import gc\nobjects = gc.get_objects()",
    "ctypes": "import ctypes",
    "pickle": "import pickle\nf = pickle.loads(data)",
    "torch.load with any pickle": "f = torch.load(buffer, weights_only=False)",
    "numpy's pickle": "f = np.load(buffer, allow_pickle=True)",
    "threading": "import threading\nthreading.Thread(target=run).start()",
    "a thread by name": "from threading import Thread",
    "a thread pool": "from concurrent.futures import ThreadPoolExecutor",
    "a process": "import multiprocessing",
    "torch's processes": "pool = torch.multiprocessing.Pool()",
    "subprocess": "import subprocess",
    "TorchScript from text": "cu = torch.jit.CompilationUnit(text)",
    "torch's function-mode registry": "table = torch.overrides.get_testing_overrides()",
    "torch's operator registry": "op = torch.ops.aten",
    "torch's quantization mappings (the cells)": "m = torch.ao.quantization.get_default_dynamic_quant_module_mappings()",
    "a C++ extension": "from torch.utils import cpp_extension",
    "torch's private namespace": "switch = torch._C",
    "a private import": "from torch._C import _nn",
    "a private module": "import torch._decomp",
    "attrgetter": "import operator\nf = operator.attrgetter(name)(torch)",
    "a format field": "from string import Formatter",
    "pydoc.locate": "import pydoc\nf = pydoc.locate(name)",
    "logging.config's resolver": "import logging.config",
    "typing's evaluator": "from typing import get_type_hints",
    "sympy's eval": "import sympy",
    "a function's globals": "g = attend.__globals__",
    "a code object": "c = attend.__code__",
    "inspect": "import inspect",
    "builtins": "import builtins",
    "types": "import types",
    "breakpoint": "breakpoint()",
}


@pytest.mark.parametrize("code", EVASIONS.values(), ids=EVASIONS.keys())
def test_A22_the_source_scan_flags_every_way_to_a_name_built_at_run_time(code):
    assert dynamic_uses(code) is not None, code
    assert set(banned_uses(code, ("sdpa", "rnn_cell"))) == {"sdpa", "rnn_cell"}, code


# What the parts' own code does: none of it is a lookup by a computed name.
ORDINARY = {
    "a literal getattr": "w = getattr(self, 'W_q', None)",
    "a literal setattr": "setattr(self, 'cache', None)",
    "hasattr": "if hasattr(model, name):\n    pass",
    "own private attributes": "class Model:\n    pass\n\n\nself._cache = {}\nx = Model._helper(y)",
    "super's private method": "super()._apply(fn)",
    "printing": "import sys\nsys.stdout.write('x')\nprint(x, file=sys.stderr)",
    "paths": "import os\np = os.path.join(a, b)",
    "eval mode": "model.eval()",
    "clipping gradients": "nn.utils.clip_grad_norm_(model.parameters(), 1.0)",
    "a class name": "kind = type(x).__name__",
    "future annotations": "from __future__ import annotations",
    "math": "import math\ns = math.sqrt(d)",
    "an own attribute named like a module": "self.code = 3\nself.load = loader",
}


@pytest.mark.parametrize("code", ORDINARY.values(), ids=ORDINARY.keys())
def test_A22_the_source_scan_passes_ordinary_code(code):
    assert dynamic_uses(code) is None, code


@pytest.mark.parametrize("part", BANNED_PARTS)
def test_A22_the_source_scan_flags_no_reference(part):
    source = (ROOT / "solutions" / f"{part}.py").read_text()
    assert dynamic_uses(source) is None


VARIANTS = [v for v in all_variants() if v.part in BANNED_PARTS]


@pytest.mark.parametrize("variant", VARIANTS, ids=[f"{v.part}-{v.name}" for v in VARIANTS])
def test_A22_the_source_scan_flags_no_variant(variant):
    """No variant, correct alternatives included, looks a name up at run time: none loses a point to the scan."""
    assert dynamic_uses(variant.apply((ROOT / "solutions" / f"{variant.part}.py").read_text())) is None


# Free text names nothing: an error message may mention the model's class or the cell it replaces.
MESSAGES = {
    "rnn_cell": 'raise ValueError(f"ShowTellRNN.step: tokens must be (N,), got {tuple(tokens.shape)}")',
    "lstm_cell": 'raise ValueError("FactoredLSTMCell.forward: the LSTM state must be a pair (h, c)")',
    "sdpa": 'raise ValueError("attend: scaled dot-product attention needs keys (N, L, d)")',
}


@pytest.mark.parametrize("op", MESSAGES)
def test_A22_an_error_message_that_mentions_the_model_is_no_use_of_the_op(op):
    assert banned_uses(MESSAGES[op], (op,)) == {}


@pytest.mark.parametrize("text", ["RNNCell", "torch.nn.RNNCell", "nn.RNNCell"])
def test_A22_a_string_that_names_the_op_is_a_use(text):
    assert banned_uses(f"name = {text!r}", ("rnn_cell",)) == {"rnn_cell": f"line 1 names {text.split('.')[-1]}"}


def test_A22_a_class_pattern_names_the_op():
    assert banned_uses("match F:\n    case object(scaled_dot_product_attention=f):\n        pass", ("sdpa",))


@pytest.mark.parametrize("call", ["flex", "native multi-head attention"])
def test_A22_torch_s_other_attention_ops_are_refused(call):
    from torch.nn.attention import flex_attention

    q = torch.randn(1, 1, 2, 4)
    eye = torch.eye(4)
    calls = {
        "flex": lambda: flex_attention.flex_attention(q, q, q),
        "native multi-head attention": lambda: torch._native_multi_head_attention(
            q[0], q[0], q[0], 4, 1, eye.repeat(3, 1), torch.zeros(12), eye, torch.zeros(4)
        ),
    }
    with forbid("sdpa"), pytest.raises(ForbiddenOpError):
        calls[call]()


def test_A55_a_module_that_patches_a_recipe_earns_nothing_and_is_flagged(tmp_path):
    """bleu.py replaces the code of the worker's "inputs unchanged" recipe, so that the property holds however its
    functions treat their inputs (they change them). No check of a part earns anything from a module whose source
    reaches into the grader's worker, and the staff view flags it."""
    graded = run_grade(build("A55_recipe_patched_from_the_module", tmp_path / "sub"), ("bleu",))
    assert_contained(graded, within=BOUND)
    assert graded.report.results and all(not r.passed for r in graded.report.results), [
        r.name for r in graded.report.results if r.passed
    ]
    public = [r for r in graded.report.results if r.visibility == "public"]
    assert public and all(
        "your module's source uses the grader's worker (line 5 names autograder)" in r.output for r in public
    ), public[0].output
    header = staff_text(graded.report, "A55").split("\n\n", 1)[0]
    assert f"{FLAG}bleu: the module's source uses " in header, header


@pytest.mark.parametrize(
    "name, reach",
    [
        ("A64_registry_through_sys_by_another_name", "line 8 names sys.modules"),
        ("A64_recipe_globals_through_a_caller_s_frame", "line 17 names f_globals"),
    ],
)
def test_A64_a_module_that_reaches_a_recipe_without_naming_the_grader_earns_nothing(tmp_path, name, reach):
    """A55 without naming the grader. Each bleu.py computes BLEU right but changes its inputs, and makes the "inputs
    unchanged" recipe report them unchanged: one imports sys's registry of loaded modules as `from sys import
    modules` and replaces the recipe in the worker's registry (found by a suffix); the other takes the calling
    recipe's frame (sys._getframe) and replaces the `copy` of its module's globals by one that copies nothing. Before
    the scan named these, each scored 15/15 (14/15 without the replacement); now no check of the part earns
    anything."""
    graded = run_grade(build(name, tmp_path / "sub"), ("bleu",))
    assert_contained(graded, within=BOUND)
    assert graded.report.results and all(not r.passed for r in graded.report.results), [
        r.name for r in graded.report.results if r.passed
    ]
    public = [r for r in graded.report.results if r.visibility == "public"]
    assert public and all(f"your module's source uses the grader's worker ({reach})" in r.output for r in public), (
        public[0].output
    )


@pytest.mark.parametrize(
    "code",
    [
        "from autograder.worker.recipes import bleu",
        "import autograder",
        "f.__code__ = g.__code__",
        "g = f.__globals__",
        "import importlib",
        "import gc",
        "import sys\nm = sys.modules['x']",
        "name = 'autograder.worker'",
        # sys's registry of loaded modules by any other spelling (the eighth review)
        "from sys import modules",
        "import sys as s\nm = s.modules['x']",
        "m = torch.sys.modules['x']",
        "import sys\nm = getattr(sys, name)",
        "import sys\nd = vars(sys)",
        "import sys\nf = sys._getframe(1)",
        # a caller's frame holds the recipe's globals
        "g = e.__traceback__.tb_frame.f_back.f_globals",
        "import inspect",
        "import traceback\nframes = traceback.walk_stack(None)",
    ],
)
def test_A55_the_scan_for_every_part_names_the_grader_s_worker_and_function_internals(code):
    assert grader_reach(code) is not None, code


@pytest.mark.parametrize(
    "code",
    [
        "for m in self.modules():\n    pass",
        "import sys\nsys.stdout.write('x')",
        "import sys as s\nprint(s.float_info.eps, file=s.stderr)",
        "from sys import maxsize",
        "import traceback\ntraceback.print_exc()",
        "raise ValueError('the autograder expects (N, T)')",
        "from shared.vocab import END",
    ],
)
def test_A55_the_scan_for_every_part_passes_ordinary_code(code):
    assert grader_reach(code) is None, code


@pytest.mark.parametrize("part", ("show_and_tell", "decoding", "bleu", "attention", "reinforce", "lstm_a", "stylenet"))
def test_A55_no_reference_and_no_variant_reaches_the_grader_s_worker(part):
    sources = [(ROOT / "solutions" / f"{part}.py").read_text()]
    sources += [v.apply(sources[0]) for v in all_variants() if v.part == part]
    assert [grader_reach(source) for source in sources] == [None] * len(sources)


# -- a source the grader's parser cannot read -------------------------------------------------------------------

NESTED_PAST_THE_PARSER = "_x = " + "-" * 20_000 + "1\n"  # MemoryError in ast.parse on Python 3.11


def test_a_source_nested_past_the_parser_costs_its_part_and_no_grader_error(tmp_path):
    """Before: ast.parse's MemoryError escaped the source scan, and every check of the part said "the grader could not
    run this check (an error on the grader's side)"; now the scan reads nothing of it and the import fails as such."""
    assert grader_reach(NESTED_PAST_THE_PARSER) is None and banned_uses(NESTED_PAST_THE_PARSER, ("attend",)) == {}
    assert dynamic_uses(NESTED_PAST_THE_PARSER) is None
    folder = tmp_path / "sub"
    folder.mkdir()
    (folder / "bleu.py").write_text((ROOT / "solutions" / "bleu.py").read_text() + "\n" + NESTED_PAST_THE_PARSER)
    graded = run_grade(folder, ("bleu",))
    assert_contained(graded, within=BOUND)
    assert {r.output for r in graded.results()} == {"bleu.py could not be imported: MemoryError: "}, graded.describe()
