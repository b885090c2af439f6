"""The training progress bar: the run's iterations done, and the epoch, loss, LR and shapes it is training at."""

from __future__ import annotations

from tqdm import tqdm

from harness.schedule import Iteration, Plan


def progress_bar(plan: Plan, label: str, start: int, shown: bool) -> tqdm:
    """A bar over the run's iterations from `start`, named for the model and the Plan's kind; hidden if not `shown`."""
    return tqdm(total=plan.iterations, initial=start, unit="it", disable=not shown, desc=f"{label} {plan.kind}",
                dynamic_ncols=True)


def show_iteration(bar: tqdm, plan: Plan, it: Iteration, loss: float, log_every: int) -> None:
    """Count iteration `it` done; every `log_every` iterations and as each epoch starts, show what it trained."""
    bar.update(1)
    if (it.index + 1) % log_every == 0 or it.step_in_epoch == 0:
        bar.set_postfix(epoch=it.epoch, loss=f"{loss:.3f}", lr=f"{it.lr:.3g}", **phase_shapes(plan, it.phase))


def phase_shapes(plan: Plan, index: int) -> dict[str, str]:
    """The shapes (per-GPU clips × frames × size²) phase `index` trains at, for the progress bar: its long-cycle base
    shape and, where the short cycle is on, the other shapes it alternates with every iteration."""
    phase = plan.phases[index]
    base_batch = phase.base.batch_mult * plan.spec.solver.batch_size // plan.spec.num_gpus
    shapes = {"shape": f"{base_batch}×{phase.base.t}×{phase.base.s}²"}
    others = [f"{b}×{c.t}×{c.s}²" for c, b in zip(phase.cycle, phase.per_gpu_batches)
              if (c.t, c.s) != (phase.base.t, phase.base.s)]
    if phase.short_cycle and others:
        shapes["short_cycle"] = ", ".join(others)
    return shapes
