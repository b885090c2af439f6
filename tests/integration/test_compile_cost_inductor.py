"""A compiled step's compile cost on the CPU (Inductor's C++ backend), as CompileCostMeter records it."""

from __future__ import annotations

import torch

from harness.train.step import compiled


def test_a_compiled_step_keeps_where_its_compile_time_went(tmp_path, monkeypatch, capsys):
    """On the CPU (Inductor's C++ backend), a tiny model compiled as compiled steps compile it: the record of its
    compilation, as `harness throughput` and the trainer's record keep it."""
    import time

    from harness.cli_measure.throughput import _print_compile_cost
    from harness.measure.throughput import time_mode
    from harness.train.compile_cost import CompileCostMeter

    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path))
    torch._dynamo.reset()
    model = torch.nn.Sequential(torch.nn.Conv3d(3, 4, 3), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool3d(1),
                                torch.nn.Flatten(), torch.nn.Linear(4, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    clips, labels = torch.randn(2, 3, 4, 8, 8), torch.tensor([0, 1])
    meter, start = CompileCostMeter(), time.perf_counter()
    torch.nn.functional.cross_entropy(compiled(model, shapes=1)(clips), labels).backward()
    setup_s, cost = time.perf_counter() - start, meter.cost()
    assert cost["graphs"] == 1 and cost["inductor_cache_misses"] >= 2  # forward and backward, compiled afresh
    assert 0 < cost["tracing_s"] < cost["compile_s"] and 0 < cost["compile_s"] + cost["inductor_backward_s"] <= setup_s
    assert time_mode("plain", model, optimizer, clips, labels, False, warmup=1, repeats=1)[3] is None
    _print_compile_cost({"model": "tiny", "batch": 2, "mode": "compile_graphs", "setup_s": setup_s, "compile": cost})
    assert "1 graph(s): tracing" in capsys.readouterr().out
