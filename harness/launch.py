"""`python -m harness.launch`: suite runs as Hydra jobs, for Hydra's launchers (submitit on Slurm).

One job trains one variant of a suite, resumably (a resubmitted or requeued job continues from its
last checkpoint). Sweep the variants with Hydra's multirun and pick a launcher:

    python -m harness.launch -m suite=kinetics_ablation scale=paper variant=baseline,multigrid \\
        hydra/launcher=submitit_slurm hydra.launcher.nodes=1 hydra.launcher.tasks_per_node=8 \\
        hydra.launcher.gpus_per_node=8 hydra.launcher.cpus_per_task=10 hydra.launcher.timeout_min=4320

Under submitit every task is one rank: RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT
come from submitit's job environment, so `nodes × tasks_per_node` must equal the run's num_gpus.
`harness reproduce --dry-run --launcher slurm` prints this command for a suite; `dry_run=true`
makes each job print what it would train instead of training.
"""

from __future__ import annotations

import os
from pathlib import Path

import hydra
from omegaconf import DictConfig

from harness.paths import suites_dir
from harness.spec import SpecError


def submitit_rank_environment(master_port: int) -> bool:
    """Export torchrun's variables from submitit's job environment; False when not in a submitit job."""
    if not os.environ.get("SUBMITIT_EXECUTOR"):
        return False
    import submitit

    env = submitit.JobEnvironment()
    os.environ.update({"RANK": str(env.global_rank), "WORLD_SIZE": str(env.num_tasks),
                       "LOCAL_RANK": str(env.local_rank), "MASTER_ADDR": env.hostnames[0],
                       "MASTER_PORT": str(master_port)})
    return True


def _prepare_on_rank_zero(scale) -> tuple[str | None, str | None]:
    """prepare_synthetic on rank 0 only; every rank gets its (root, cache)."""
    import torch.distributed as dist

    from harness.reproduce.inputs import prepare_synthetic

    if not dist.is_initialized():
        return prepare_synthetic(scale)
    shared = list(prepare_synthetic(scale)) if dist.get_rank() == 0 else [None, None]
    dist.broadcast_object_list(shared, src=0)
    return shared[0], shared[1]


def _pretrained_on_rank_zero(scale, spec) -> None:
    """prepare_pretrained on rank 0 only; the other ranks wait until its file is there."""
    import torch.distributed as dist

    from harness.reproduce.inputs import prepare_pretrained

    if not dist.is_initialized() or dist.get_rank() == 0:
        prepare_pretrained(scale, spec)
    if dist.is_initialized():
        dist.barrier()


def run_job(cfg: DictConfig) -> str:
    """Resolve the suite run `cfg.variant` at `cfg.scale` and train it (or print it with dry_run)."""
    from harness.reproduce.inputs import suite_data, suite_pretrained
    from harness.suite import load_scale, load_suite, resolve_suite, suite_scale
    from harness.train.distributed import init_distributed
    from harness.train.loop import train

    suite = load_suite(str(cfg.suite))
    scale = suite_scale(suite, load_scale(str(cfg.scale)))  # synthetic data of the suite's dataset, as reproduce
    suite.require_variants([str(cfg.variant)], "variant")
    overrides = [str(o) for o in cfg.overrides]
    submitit_rank_environment(int(cfg.master_port))
    world = int(os.environ.get("WORLD_SIZE", 1))
    if not cfg.dry_run and world > 1:
        init_distributed("auto")  # rank 0 prepares the synthetic data while the others wait
    root, cache = suite_data(scale, overrides, bool(cfg.dry_run), prepare=_prepare_on_rank_zero)
    pretrained = suite_pretrained(scale, overrides)  # the ImageNet rows' stand-in, as reproduce
    run = next(r for r in resolve_suite(suite, scale, overrides, root, cache, pretrained)
               if r.run.variant == cfg.variant)
    if run.spec is None:
        raise SpecError(f"{suite.name}/{cfg.variant} cannot run: {run.skip_reason}")
    out = run.output_dir(Path(str(cfg.output_root)) / suite.name)
    spec = run.spec.replace(output_dir=str(out), resume=True)
    if spec.num_gpus != world and not cfg.dry_run:
        raise SpecError(f"{suite.name}/{cfg.variant} needs num_gpus={spec.num_gpus} processes, but this job has "
                        f"{world}. Set hydra.launcher.nodes × hydra.launcher.tasks_per_node = {spec.num_gpus}, or "
                        f"override num_gpus (and solver.batch_size).")
    if cfg.dry_run:
        print(f"{suite.name}/{cfg.variant}: {world} process(es), output {out}\n  harness train "
              + " ".join(run.overrides))
        return str(out)
    if pretrained and spec.model.pretrained == pretrained:
        _pretrained_on_rank_zero(scale, spec)
    train(spec, Path(str(cfg.results)) if cfg.results else None)
    return str(out)


def main() -> None:
    # Hydra reads the app's config from suites/launch.yaml (suites_dir(): the checkout's, or $HARNESS_SUITES_DIR).
    hydra.main(config_path=str(suites_dir()), config_name="launch", version_base="1.3")(run_job)()


if __name__ == "__main__":
    main()
