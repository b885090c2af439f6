"""CompileCostMeter reads torch.compile's own timers and cache counters: the stages PyTorch names must still be
found (a renamed one would read 0 for ever), and a second compile of the same function in a fresh Dynamo must be
served by the caches."""

import torch

from harness.train.compile_cost import CompileCostMeter


def _step(x: torch.Tensor) -> torch.Tensor:
    return (x.sin() * 2 + x.cos()).sum()


def _compile_and_run(backend: str) -> dict:
    meter = CompileCostMeter()
    x = torch.randn(16, requires_grad=True)
    torch.compile(_step, backend=backend, dynamic=False)(x).backward()
    return meter.cost()


def test_a_traced_function_counts_its_tracing_and_its_graph():
    torch._dynamo.reset()
    cost = _compile_and_run("eager")  # Dynamo alone: tracing and guards, no AOTAutograd or Inductor
    assert cost["graphs"] == 1 and cost["compile_s"] > 0 and 0 < cost["tracing_s"] <= cost["compile_s"]
    assert cost["guards_s"] > 0 and cost["inductor_forward_s"] == cost["inductor_backward_s"] == 0
    assert CompileCostMeter().cost()["graphs"] == 0  # a meter counts from its making on


def test_inductor_stages_are_timed_and_a_second_compile_hits_the_caches(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path))
    torch._dynamo.reset()
    first = _compile_and_run("inductor")
    assert first["inductor_forward_s"] > 0 and first["inductor_backward_s"] > 0
    assert first["aot_autograd_s"] > 0 and first["inductor_cache_misses"] >= 2  # forward and backward
    assert first["compile_s"] >= first["tracing_s"] + first["inductor_forward_s"]
    torch._dynamo.reset()  # as a new process: Dynamo traces again, the caches on disk serve the rest
    again = _compile_and_run("inductor")
    assert again["graphs"] == 1 and again["tracing_s"] > 0
    assert again["aot_autograd_cache_hits"] + again["inductor_cache_hits"] >= 1
    assert again["inductor_cache_misses"] == 0


def test_internals_of_another_shape_give_no_breakdown_and_no_error(monkeypatch):
    from torch._dynamo import utils

    monkeypatch.setattr(utils, "compilation_time_metrics", {"bytecode_tracing": None})
    assert CompileCostMeter().cost() == {}
    monkeypatch.delattr(utils, "compilation_time_metrics")
    assert CompileCostMeter().cost() == {}
