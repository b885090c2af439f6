"""Compile time per shape of a compiled training step, the whole model against block by block (train.compile_scope).

Trains two steps at each of three multigrid-like shapes (clips, frames, crop, BN groups) with `train.step=compile`
and prints each shape's compile time (the step's setup_s) and the compile stages (harness.train.compile_cost).
Run it twice with the same TORCHINDUCTOR_CACHE_DIR: the second process shows what the compile caches leave.

    TORCHINDUCTOR_CACHE_DIR=/tmp/cc python tools/compile_scope_probe.py SCOPE MODEL OUT.json [cpu|cuda] [BACKEND]

Width 0.25 keeps a CPU step short; compile time depends on the graphs, not on the channel counts. `backend`
aot_eager stops after Dynamo and AOTAutograd (Inductor's C++ code generation for the whole SlowFast takes over ten
minutes a shape on two CPU cores); the default, inductor, is what the trainer compiles with.
"""

from __future__ import annotations

import functools
import json
import sys
import time

import torch

from harness.models.bn import multigrid_bns, set_bn_layout
from harness.models.registry import get_entry
from harness.provenance import provenance
from harness.train.step import make_step

SHAPES = [(16, 8, 32, 4), (8, 8, 48, 2), (4, 16, 32, 1)]  # (clips, frames, crop, BN groups)


def main(scope: str, model_name: str, out: str, device: str = "cpu", backend: str = "inductor") -> None:
    dev = torch.device(device)
    torch.compile = functools.partial(torch.compile, backend=backend)  # how the step's compile calls compile
    torch.manual_seed(0)
    net = get_entry(model_name).factory(num_classes=10, dropout=0.0, width=0.25).to(dev).train()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
    step = make_step("compile", net, optimizer, torch.nn.functional.cross_entropy, False, dev, shapes=len(SHAPES),
                     compile_scope=scope)
    rows = []
    for clips, frames, crop, groups in SHAPES:
        set_bn_layout(multigrid_bns(net), groups, 1)
        x = torch.randn(clips, 3, frames, crop, crop, device=dev)
        y = torch.randint(0, 10, (clips,), device=dev)
        key = (frames, crop, clips, groups, 1)
        before = step.setup_s
        step(x, y, key)
        optimizer.step()
        start = time.perf_counter()
        step(x, y, key)
        optimizer.step()
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)
        rows.append({"shape": [clips, frames, crop, groups], "compile_s": round(step.setup_s - before, 2),
                     "step_s": round(time.perf_counter() - start, 3)})
        print(scope, rows[-1], flush=True)
    record = {"scope": scope, "model": model_name, "width": 0.25, "backend": backend, "rows": rows,
              "setup_s": round(step.setup_s, 2), "compile": step.compile_cost, "provenance": provenance()}
    print(scope, "total", record["setup_s"], record["compile"], flush=True)
    with open(out, "w") as f:
        json.dump(record, f, indent=1)


if __name__ == "__main__":
    main(*sys.argv[1:])
