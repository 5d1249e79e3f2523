"""The worker's stand-in for torch._dynamo (autograder/worker/lazy_dynamo.py): training is bit-for-bit what it is
with the real module, the real module is never imported by the training the kit runs, and anything else asks for it
gets the real one. Each case runs in a fresh interpreter: the stand-in must be registered before any optimizer ran."""

import json
import subprocess
import sys
import textwrap

TRAIN = textwrap.dedent("""
    import json, sys
    import torch
    if sys.argv[1] == "stand-in":
        from autograder.worker.lazy_dynamo import defer_dynamo_import
        defer_dynamo_import()
    from shared.training import train

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Embedding(20, 8), torch.nn.LSTM(8, 16, batch_first=True))
    head = torch.nn.Linear(16, 20)
    tokens = torch.randint(0, 20, (64, 6))

    def loss_fn(m, idx):
        out = head(m(tokens[idx])[0])
        return torch.nn.functional.cross_entropy(out.reshape(-1, 20), tokens[idx].roll(-1, 1).reshape(-1))

    history = train(model, loss_fn, len(tokens), epochs=2, batch_size=16, lr=1e-2, seed=3)
    params = list(model.parameters()) + list(head.parameters())
    sgd = torch.optim.SGD(params, lr=0.1, momentum=0.9)
    for idx in torch.arange(64).split(16):
        sgd.zero_grad(); loss_fn(model, idx).backward(); torch.nn.utils.clip_grad_norm_(params, 1.0); sgd.step()
    torch.optim.lr_scheduler.StepLR(sgd, 1).step()
    print(json.dumps({"losses": [float(x).hex() for x in history.losses],
                      "params": [float(x).hex() for p in params for x in p.detach().flatten()[:50]],
                      "module": type(sys.modules["torch._dynamo"]).__name__,
                      "real_parts": sorted(m for m in sys.modules if m.startswith("torch._dynamo."))}))
""")


def _run(code: str, *args: str) -> dict:
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_training_with_the_stand_in_is_bit_for_bit_the_same_and_never_imports_dynamo():
    real, stand_in = _run(TRAIN, "real"), _run(TRAIN, "stand-in")
    assert real["module"] == "module" and real["real_parts"], "the real run should have imported torch._dynamo"
    assert stand_in["module"] == "_DynamoStandIn", "some use of torch._dynamo in training imported the real module"
    assert stand_in["real_parts"] == []
    assert stand_in["losses"] == real["losses"] and stand_in["params"] == real["params"]


def test_any_other_use_imports_the_real_module_but_a_probe_of_its_dunders_does_not():
    code = textwrap.dedent("""
        import json, sys
        import torch
        from autograder.worker.lazy_dynamo import defer_dynamo_import
        defer_dynamo_import()
        stand_in = torch._dynamo
        probed = [getattr(stand_in, name, None) for name in ("__file__", "__all__", "__wrapped__")]
        assert probed == [None] * 3 and sys.modules["torch._dynamo"] is stand_in, "a probe imported the module"
        limit = stand_in.config.recompile_limit          # not one of the two eager answers
        from torch._dynamo import list_backends          # and a from-import
        print(json.dumps({"module": type(sys.modules["torch._dynamo"]).__name__,
                          "same": sys.modules["torch._dynamo"] is torch._dynamo, "limit": limit,
                          "backends": callable(list_backends)}))
    """)
    got = _run(code)
    assert got == {"module": "module", "same": True, "limit": got["limit"], "backends": True}
    assert isinstance(got["limit"], int)


def test_the_timing_host_times_the_real_import_in_a_child_and_keeps_the_stand_in():
    """The reference's timing runs add the seconds of torch._dynamo's real import (budgets unchanged) but train with
    the stand-in: the real module's memory never sits beside them (autograder.grader.context)."""
    code = textwrap.dedent("""
        import json, sys
        from autograder.grader.context import import_optimizer_machinery
        from autograder.worker.lazy_dynamo import defer_dynamo_import, import_real
        if sys.argv[1] == "stand-in first":   # as in the grading process (engine.grade registers it)
            defer_dynamo_import()
        seconds = import_optimizer_machinery()
        again = import_optimizer_machinery()   # still the real import's seconds: the child's import left nothing here
        module = type(sys.modules["torch._dynamo"]).__name__
        import_real()
        print(json.dumps({"seconds": seconds, "again": again, "module": module,
                          "after a real import": import_optimizer_machinery()}))
    """)
    for start in ("nothing", "stand-in first"):
        got = _run(code, start)
        assert got["seconds"] > 0.05 and got["again"] > 0.05, (start, got)
        assert got["module"] == "_DynamoStandIn" and got["after a real import"] == 0.0, (start, got)
