"""The trainer's step modes compute what the eager step computes (GPU), and refuse what they cannot do (CPU)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import torch

from harness.models import build_model, multigrid_bns, set_bn_layout
from harness.results import run_id
from harness.spec import ModelSpec, RunSpec, SpecError, TrainSpec, spec_from_record
from harness.train.choose import RunShapes, choose
from harness.train.loop import train
from harness.train.step import compiled, make_step

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

# (t, s, per-GPU batch, BN splits): SlowFast needs t divisible by its alpha of 4; one shape uses sub-batch BN,
# and the first shape comes back after the others, so a graph is replayed after other graphs ran.
SHAPES = [(16, 32, 8, 1), (8, 48, 4, 1), (8, 32, 8, 2), (16, 32, 8, 1)]


def _train(mode: str, steps: int, shapes=SHAPES) -> tuple[list[float], dict[str, torch.Tensor]]:
    torch.manual_seed(0)
    model = build_model(ModelSpec(name="slowfast_r50_8x8", width=0.25, dropout=0.0), 10).cuda().train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, nesterov=True, weight_decay=1e-4)
    runner = make_step(mode, model, optimizer, torch.nn.functional.cross_entropy, False, torch.device("cuda"))
    generator = torch.Generator(device="cuda").manual_seed(1)
    bns = multigrid_bns(model)
    losses = []
    for i in range(steps):
        t, s, batch, splits = shapes[i % len(shapes)]
        set_bn_layout(bns, splits, 1)
        clips = torch.randn(batch, 3, t, s, s, device="cuda", generator=generator)
        labels = torch.randint(0, 10, (batch,), device="cuda", generator=generator)
        for group in optimizer.param_groups:
            group["lr"] = 0.01 * (1 + i % 3)  # the LR changes every iteration, as under the Plan
        losses.append(runner(clips, labels, (t, s, batch, splits, 1)).item())
        optimizer.step()
    assert runner.specialisations == (0 if mode == "eager" else len(set(shapes)))
    cost = runner.compile_cost  # where the compiled modes' setup time went: the trainer's record keeps it
    assert (cost is None) == (mode in ("eager", "cuda_graphs"))
    if cost is not None:
        assert cost["graphs"] >= 1 and 0 < cost["compile_s"] + cost["inductor_backward_s"] <= runner.setup_s
    runner.release()  # as the trainer does before writing its record, which still counts the graphs
    assert runner.specialisations == (0 if mode == "eager" else len(set(shapes)))
    return losses, {k: v.detach().float().clone() for k, v in model.state_dict().items()}


def _relative(a: torch.Tensor, b: torch.Tensor) -> float:
    return ((a - b).norm() / b.norm().clamp_min(1e-12)).item()


@pytest.mark.gpu
@needs_cuda
@pytest.mark.parametrize("mode", ["cuda_graphs", "compile_graphs"])
def test_step_mode_trains_like_the_eager_step(mode):
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    # torch.compile takes about a minute per shape: the compiled modes get the sub-batch-BN shape only.
    shapes = SHAPES if mode == "cuda_graphs" else SHAPES[2:3]
    try:
        steps = 2 * len(shapes)
        eager_losses, eager_state = _train("eager", steps, shapes)
        losses, state = _train(mode, steps, shapes)
    finally:
        torch.backends.cudnn.benchmark = False
        torch.backends.cudnn.allow_tf32 = True
    assert losses == pytest.approx(eager_losses, rel=1e-3)
    # Weights and BN running statistics (which the capture's warm-up runs must not have moved) agree.
    for key, value in eager_state.items():
        if value.dtype.is_floating_point and value.norm() > 0:
            assert _relative(state[key], value) < 1e-3, key


# (t, s, per-GPU batch, BN splits, BN sync) on each of 2 GPUs: BN synchronised over both, sub-batch BN, plain BN,
# and the first shape again after the others.
DDP_SHAPES = [(16, 32, 2, 1, 2), (8, 32, 8, 2, 1), (8, 48, 4, 1, 1), (16, 32, 2, 1, 2)]


def _ddp_worker(rank: int, mode: str, init_file: str, out_dir: str) -> None:
    import torch.distributed as dist

    from harness.train.distributed import DistInfo, data_parallel

    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"file://{init_file}", rank=rank, world_size=2)
    runner = None
    try:
        torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
        device = torch.device("cuda", rank)
        torch.manual_seed(0)
        model = build_model(ModelSpec(name="slowfast_r50_8x8", width=0.25, dropout=0.0), 10).to(device).train()
        net = data_parallel(model, DistInfo(rank, 2, rank, device), for_graphs=mode == "cuda_graphs")
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, nesterov=True, weight_decay=1e-4)
        runner = make_step(mode, net, optimizer, torch.nn.functional.cross_entropy, False, device)
        generator = torch.Generator(device=device).manual_seed(1 + rank)  # each rank its own clips
        bns = multigrid_bns(model)
        losses = []
        for i in range(2 * len(DDP_SHAPES)):
            t, s, batch, splits, sync = DDP_SHAPES[i % len(DDP_SHAPES)]
            set_bn_layout(bns, splits, sync)
            clips = torch.randn(batch, 3, t, s, s, device=device, generator=generator)
            labels = torch.randint(0, 10, (batch,), device=device, generator=generator)
            for group in optimizer.param_groups:
                group["lr"] = 0.01 * (1 + i % 3)
            losses.append(runner(clips, labels, (t, s, batch, splits, sync)).item())
            optimizer.step()
        state = {k: v.detach().float().cpu() for k, v in model.state_dict().items()}
        torch.save({"losses": losses, "state": state, "graphs": runner.specialisations}, f"{out_dir}/{mode}{rank}.pt")
    finally:
        if runner is not None:
            runner.release()  # as the trainer does: NCCL destroys its communicator only once its graphs are gone
        dist.destroy_process_group()


@pytest.mark.gpu
@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs 2 CUDA GPUs")
def test_cuda_graphs_under_ddp_train_like_eager_ddp(tmp_path):
    """Graphed steps capture DDP's gradient all-reduce and synchronised BN's collectives: two processes on two
    GPUs train as eager DDP does, shape after shape, with the LR changing every iteration."""
    import torch.multiprocessing as mp

    for mode in ("eager", "cuda_graphs"):
        mp.start_processes(_ddp_worker, args=(mode, str(tmp_path / f"init_{mode}"), str(tmp_path)), nprocs=2,
                           join=True, start_method="spawn")
    for rank in range(2):
        eager, graphed = (torch.load(tmp_path / f"{mode}{rank}.pt") for mode in ("eager", "cuda_graphs"))
        assert graphed["graphs"] == len(set(DDP_SHAPES))
        assert graphed["losses"] == pytest.approx(eager["losses"], rel=1e-3)
        # The captured all-reduce may sum in another order than the eager one. A BN bias whose gradient is a sum
        # of terms that cancel barely moves (1e-7 to 1e-4 here) and then differs by a few percent of itself
        # (measured on two H200s: 1.6e-6 on a bias of norm 9e-5), so each tensor is compared within 1e-3 of its
        # size plus 1e-5: 1% of what the weights move in these steps (~1e-3).
        for key, value in eager["state"].items():
            if value.dtype.is_floating_point:
                assert (graphed["state"][key] - value).norm() <= 1e-3 * value.norm() + 1e-5, (rank, key)


def test_cuda_graphs_run_on_gpus_in_one_process_or_several_and_are_refused_elsewhere():
    RunSpec(num_gpus=2, train=TrainSpec(step="cuda_graphs")).replace()  # several GPUs: graphed DDP
    run = RunShapes("i3d_r50", {(8, 32, 8, 1): 10}, 1)  # no profile of the card: today's default
    assert [choose("auto", "auto", run, card, None).step for card in ("NVIDIA H200", None)] == ["cuda_graphs", "eager"]
    with pytest.raises(SpecError, match="needs a CUDA GPU"):
        RunSpec(num_gpus=1, train=TrainSpec(step="cuda_graphs", device="cpu")).replace()
    with pytest.raises(SpecError, match="Did you mean 'cuda_graphs'"):
        RunSpec(num_gpus=1, train=TrainSpec(step="cuda_graph")).replace()


def test_step_mode_changes_the_run_id_only_when_set():
    base = RunSpec(num_gpus=1)
    assert run_id(base) == run_id(base.replace(train=TrainSpec(step="eager")))
    assert run_id(base) != run_id(base.replace(train=TrainSpec(step="cuda_graphs")))
    # Records written before train.step existed keep their ids (reproduce finds them, reports keep them).
    # (Those records now sit in proxy/epochs10_val400/, kept beside the current proxy's records.)
    records = sorted(Path(__file__).resolve().parents[2].glob("results/kinetics_ablation/proxy/**/*.json"))
    assert records, "the committed proxy records are missing"
    old = 0
    for path in records:
        record = json.loads(path.read_text())
        old += "step" not in record["spec"]["train"]
        assert run_id(spec_from_record(record["spec"])) == record["run_id"], path.name
    assert old >= 7, "the 1-GPU records from before train.step existed are missing"


def test_compiled_graphs_are_refused_for_several_gpus():
    RunSpec(num_gpus=1, train=TrainSpec(step="compile_graphs")).replace()
    with pytest.raises(SpecError, match="use train.step=cuda_graphs|Use train.step=cuda_graphs"):
        RunSpec(num_gpus=2, train=TrainSpec(step="compile_graphs")).replace()


def test_graphed_step_modes_are_refused_on_the_cpu_before_any_work():
    for mode in ("cuda_graphs", "compile_graphs"):
        with pytest.raises(SpecError, match=f"train.step={mode}"):
            RunSpec(num_gpus=1, train=TrainSpec(step=mode, device="cpu")).replace()
        model = build_model(ModelSpec(name="i3d_r50", width=0.0625), 3)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        with pytest.raises(SpecError, match="no CUDA GPU is visible"):
            make_step(mode, model, optimizer, torch.nn.functional.cross_entropy, False, torch.device("cpu"))


@pytest.mark.parametrize("setting", ["train.plain_bn_impl=triton", "train.sub_batch_bn=triton"])
def test_cuda_bn_kernels_on_a_machine_without_gpu_stop_before_any_work(setting, tmp_path, monkeypatch):
    from harness.config import compose

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    spec = compose(["scale=smoke", setting, f"output_dir={tmp_path}/run"])
    with pytest.raises(SpecError, match=f"{setting.split('=')[0]}=.*no CUDA GPU is visible"):
        train(spec)
    assert not list(tmp_path.glob("run/checkpoints/*"))


def test_cuda_graphs_on_a_machine_without_gpu_stop_before_any_work(tmp_path, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    spec = RunSpec(num_gpus=1, train=TrainSpec(step="cuda_graphs"), output_dir=str(tmp_path))
    with pytest.raises(SpecError, match="no CUDA GPU is visible"):
        train(spec)


def test_compiled_steps_keep_their_compile_cache_beside_the_data(tmp_path, monkeypatch):
    """torch.compile's caches outlive the run (a later run at the same shapes loads instead of compiling); a cache
    folder the user chose stays theirs."""
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    monkeypatch.setenv("HARNESS_DATA_DIR", str(tmp_path / "data"))
    model = torch.nn.Linear(3, 2)
    compiled(model, shapes=1)
    assert os.environ["TORCHINDUCTOR_CACHE_DIR"] == str(tmp_path / "data" / "torch-compile")
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "mine"))
    compiled(model, shapes=1)
    assert os.environ["TORCHINDUCTOR_CACHE_DIR"] == str(tmp_path / "mine")


@pytest.mark.parametrize("mode", ["cuda_graphs", "compile_graphs"])
def test_profile_refuses_graphed_steps_on_the_cpu_before_timing(mode, capsys):
    from harness.cli import main

    assert main(["profile", "--suite", "smoke", "--scale", "smoke", "--step", mode, "--device", "cpu"]) != 0
    err = capsys.readouterr().err
    assert f"train.step={mode}" in err and "Use train.step=eager" in err and "timing" not in err
