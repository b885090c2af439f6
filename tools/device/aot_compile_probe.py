"""Ahead-of-time compiled training forwards, one artifact per planned shape: what loading one costs and what it buys.

`torch.compile(fn, fullgraph=True).aot_compile(...)` traces and compiles `fn` (here: the model's forward under bf16
autocast, training mode, so its compiled backward comes with it) and saves the result as a file; a later process
loads it with `torch.compiler.load_compiled_function` without Dynamo tracing anything. This probe measures, for the
planned shapes of one suite run, what a compiled step would cost a run that finds such files:

    python tools/device/aot_compile_probe.py keys SUITE VARIANT SCALE          # the run's planned shapes, one a line
    python tools/device/aot_compile_probe.py make DIR KEY...                   # compile and save (cold)
    python tools/device/aot_compile_probe.py time DIR OUT.json KEY...          # load each, capture, time

A KEY is t,s,batch,splits (frames, crop, per-GPU clips, BN groups), as the plan's step keys. `time` loads each
artifact in turn in one fresh process (the first load also pays the process's one-time imports), captures the
loaded forward + backward into a CUDA graph as `train.step=compile_graphs` does, and times its replays against the
same shape's CUDA graph of the eager step (`train.step=cuda_graphs`). Then it loads the first artifact again in a
background thread while the first graph replays in the foreground: whether a run could load its next shapes while
it trains. SlowFast R50 8×8 (the kinetics_ablation model), channels-last, random clips, one GPU.
"""

from __future__ import annotations

import json
import statistics
import sys
import threading
import time
from pathlib import Path

import torch

from harness.models import build_model, multigrid_bns
from harness.models.bn import BLOCK_SPLITS_GRAPHED, set_bn_block_splits, set_bn_impls, set_bn_layout
from harness.provenance import provenance
from harness.spec import ModelSpec, TrainSpec

MODEL = "slowfast_r50_8x8"
CLASSES = 12


def planned_keys(suite: str, variant: str, scale: str) -> list[tuple[int, ...]]:
    from harness.schedule import build_plan
    from harness.schedule.trained import iterations_by_shape
    from harness.suite import load_scale, load_suite, resolve_suite

    run = next(r for r in resolve_suite(load_suite(suite), load_scale(scale), []) if r.run.variant == variant)
    return sorted(iterations_by_shape(build_plan(run.spec)))


def forward(model: torch.nn.Module, clips: torch.Tensor) -> torch.Tensor:
    with torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=False):
        return model(clips)


class Probe:
    def __init__(self) -> None:
        self.dev = torch.device("cuda")
        torch.manual_seed(0)
        net = build_model(ModelSpec(name=MODEL), CLASSES).to(self.dev)
        self.net = net.to(memory_format=torch.channels_last_3d).train()
        self.bns = multigrid_bns(self.net)
        set_bn_impls(self.bns, TrainSpec())
        set_bn_block_splits(self.bns, BLOCK_SPLITS_GRAPHED)  # as graphed steps run sub-batch BN
        self.optimizer = torch.optim.SGD(self.net.parameters(), lr=1e-6, momentum=0.9)

    def inputs(self, key: tuple[int, ...]) -> tuple[torch.Tensor, torch.Tensor]:
        t, s, batch, splits = key
        set_bn_layout(self.bns, splits, 1)
        clips = torch.randn(batch, 3, t, s, s, device=self.dev).contiguous(memory_format=torch.channels_last_3d)
        return clips, torch.randint(0, CLASSES, (batch,), device=self.dev)

    def forward_backward(self, fn, clips: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        self.optimizer.zero_grad(set_to_none=False)
        loss = torch.nn.functional.cross_entropy(fn(self.net, clips).float(), labels)
        loss.backward()
        return loss

    def graph(self, fn, clips: torch.Tensor, labels: torch.Tensor) -> tuple[torch.cuda.CUDAGraph, float]:
        """The step captured as GraphedStep captures it (three warm-up runs on a side stream); seconds taken."""
        for p in self.net.parameters():
            if p.grad is None:
                p.grad = torch.zeros_like(p)
        torch.cuda.synchronize()
        start = time.perf_counter()
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                self.forward_backward(fn, clips, labels)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            self.forward_backward(fn, clips, labels)
        torch.cuda.synchronize()
        return graph, time.perf_counter() - start


def replay_ms(graph: torch.cuda.CUDAGraph, n: int) -> list[float]:
    out = []
    for _ in range(n):
        start = time.perf_counter()
        graph.replay()
        torch.cuda.synchronize()
        out.append((time.perf_counter() - start) * 1000)
    return out


def artifact(folder: str, key: tuple[int, ...]) -> Path:
    return Path(folder) / ("x".join(map(str, key)) + ".aot")


def make(folder: str, keys: list[tuple[int, ...]]) -> None:
    torch._dynamo.config.enable_aot_compile = True  # needed before PyTorch 2.12, where it became the default
    probe = Probe()
    Path(folder).mkdir(parents=True, exist_ok=True)
    for key in keys:
        clips, _ = probe.inputs(key)
        start = time.perf_counter()
        compiled = torch.compile(forward, fullgraph=True, dynamic=False).aot_compile(((probe.net, clips), {}))
        compiled.save_compiled_function(str(artifact(folder, key)))
        print(json.dumps({"key": key, "make_s": round(time.perf_counter() - start, 1),
                          "bytes": artifact(folder, key).stat().st_size}), flush=True)


def time_loads(folder: str, out: str, keys: list[tuple[int, ...]]) -> None:
    probe = Probe()
    rows, first = [], None
    for key in keys:
        path = artifact(folder, key)
        if not path.exists():
            rows.append({"key": key, "missing": True})
            continue
        clips, labels = probe.inputs(key)
        eager_graph, eager_capture_s = probe.graph(forward, clips, labels)
        eager_ms = statistics.median(replay_ms(eager_graph, 30))
        start = time.perf_counter()
        with open(path, "rb") as f:
            loaded = torch.compiler.load_compiled_function(f)
        load_s = time.perf_counter() - start
        graph, capture_s = probe.graph(loaded, clips, labels)
        ms = statistics.median(replay_ms(graph, 30))
        rows.append({"key": key, "load_s": round(load_s, 2), "capture_s": round(capture_s, 2),
                     "compiled_graph_ms": round(ms, 2), "eager_graph_ms": round(eager_ms, 2),
                     "eager_capture_s": round(eager_capture_s, 2), "speedup": round(eager_ms / ms, 3)})
        print(json.dumps(rows[-1]), flush=True)
        if first is None:  # its inputs kept alive with it: the graph replays from their memory
            first = (key, graph, clips, labels)
        del eager_graph
    record = {"model": MODEL, "shapes": rows, "torch": torch.__version__, "provenance": provenance()}
    if first is not None:
        record["background_load"] = background_load(probe, folder, first[0], first[1])
        print(json.dumps(record["background_load"]), flush=True)
    Path(out).write_text(json.dumps(record, indent=1))


def background_load(probe: Probe, folder: str, key: tuple[int, ...], graph: torch.cuda.CUDAGraph) -> dict:
    """Replay `graph` while a thread loads `key`'s artifact again: the load's time and the steps' slowdown."""
    alone = replay_ms(graph, 100)
    loaded: dict[str, float] = {}

    def load() -> None:
        start = time.perf_counter()
        with open(artifact(folder, key), "rb") as f:
            torch.compiler.load_compiled_function(f)
        loaded["s"] = time.perf_counter() - start

    thread = threading.Thread(target=load)
    thread.start()
    during: list[float] = []
    while thread.is_alive():
        during += replay_ms(graph, 1)
    thread.join()
    return {"key": key, "load_s": round(loaded["s"], 2), "steps_during": len(during),
            "step_ms_alone": round(statistics.median(alone), 2),
            "step_ms_during_median": round(statistics.median(during), 2),
            "step_ms_during_mean": round(statistics.mean(during), 2),
            "extra_s": round(sum(during) / 1000 - len(during) * statistics.median(alone) / 1000, 2)}


def parse(keys: list[str]) -> list[tuple[int, ...]]:
    return [tuple(int(v) for v in k.split(",")) for k in keys]


if __name__ == "__main__":
    verb, *rest = sys.argv[1:]
    if verb == "keys":
        print("\n".join(",".join(map(str, k)) for k in planned_keys(*rest)))
    elif verb == "make":
        make(rest[0], parse(rest[1:]))
    elif verb == "time":
        time_loads(rest[0], rest[1], parse(rest[2:]))
    else:
        sys.exit(__doc__)
