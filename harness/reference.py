"""docs/usage.md, generated: every command and flag from the argparse parsers, every config key with its default
from `RunSpec`, so the reference cannot drift from the code. `python -m harness.reference docs/usage.md` writes it;
a test fails where the committed page differs."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from harness.spec import RunSpec

# What each key means, beside the code that reads it; the test requires one line for every key RunSpec has.
KEYS = {
    "solver.base_lr": "learning rate at the recipe's global batch (linear scaling applies to multigrid's batches)",
    "solver.policy": "`step` (× gamma at each of `steps`) or `cosine`",
    "solver.steps": "epochs at which LR stages start (the first is 0)",
    "solver.max_epoch": "the baseline's epochs (multigrid trains `multigrid.epoch_factor` × as many)",
    "solver.gamma": "LR factor per stage of the step policy",
    "solver.warmup_epochs": "linear warm-up length in epochs",
    "solver.warmup_start_lr": "LR at the start of the warm-up",
    "solver.momentum": "SGD momentum (below 1)",
    "solver.weight_decay": "SGD weight decay",
    "solver.batch_size": "global mini-batch of clips, split evenly over `num_gpus`",
    "data.name": "`kinetics400`, `ssv2`, `charades` or `synthetic` (see data.md)",
    "data.root": "the dataset's folder (videos and annotation files)",
    "data.num_frames": "frames per clip T₀ of the base shape",
    "data.sampling_rate": "stride between a clip's frames",
    "data.crop_size": "crop side S₀ of the base shape",
    "data.jitter": "[min, max] short side of training scale jitter",
    "data.train_videos": "training clips per epoch; taken from the data where the user leaves it unset",
    "data.num_classes": "classes of the classifier; taken from the data where the user leaves it unset",
    "data.cache": "a decoded-frame cache (`harness data cache`) to read clips from",
    "data.low_res_copies": "folders of copies of `root` at smaller short sides (`harness data prepare --short-side`)",
    "model.name": "a registered model (`harness models list`)",
    "model.target": "`pkg.module:factory` for a model of your own (your-model.md)",
    "model.dropout": "dropout before the classifier",
    "model.width": "channel multiplier (smoke scale shrinks it)",
    "model.pretrained": "weights to start from: an ImageNet ResNet-50 to inflate, or the same video model's",
    "model.fresh_classifier": "start the classifier afresh even where the class counts match",
    "model.pad_stem_channels": "on CUDA, pad the stem's 3 input channels with zeros to this many (0: off)",
    "multigrid.long_cycle": "vary the base shape over the long cycle",
    "multigrid.short_cycle": "vary the spatial size every iteration",
    "multigrid.epoch_factor": "multigrid's epochs over the baseline's",
    "multigrid.long_cycle_factors": "[[t, s], …]: the long cycle's shape factors, coarse to fine",
    "multigrid.short_cycle_factors": "the short cycle's spatial factors besides 1",
    "multigrid.bn_base_size": "clips per BN group at the base shape",
    "multigrid.long_cycle_shapes": "keep the last S′ long-cycle shapes (Table 1a; null: all)",
    "multigrid.short_cycle_shapes": "short-cycle shapes: 1 long cycle only, 2, or 3 the default (Table 1b)",
    "multigrid.batch_rule": "`tokens` (the paper's: b·t·h·w constant) or `flops` (counted FLOPs constant)",
    "multigrid.shape_costs": "with `batch_rule=flops`: [t, s, cost relative to the base clip] per shape (counted)",
    "baseline.epoch_factor": "a shortened baseline's epochs over the recipe's (\"Baseline 1/k\": 1/k)",
    "baseline.shape_factor": "[t, s] factors of the baseline's shape (Figure 3's smaller shape, larger batch)",
    "baseline.progressive_scale": "progressive resizing: the starting crop's share of `data.crop_size` (0: off)",
    "baseline.progressive_stages": "progressive resizing: equal steps from the starting crop to the full one",
    "baseline.progressive_full_fraction": "progressive resizing: the share of the epochs trained at the full crop",
    "train.device": "`auto` (CUDA where there is one), `cuda` or `cpu`",
    "train.precision": "`auto` (bf16 on GPU, fp32 on CPU), `bf16` or `fp32`",
    "train.channels_last": "`auto` (on GPU), `on` or `off`",
    "train.nesterov": "Nesterov momentum, as the reference's SGD",
    "train.num_workers": "loader processes per GPU",
    "train.eval_every": "evaluate every K epochs (0: at the end only)",
    "train.eval_clips": "temporal views per video at evaluation (null: the dataset's)",
    "train.eval_crops": "spatial crops per view, 1 or 3 (null: the dataset's)",
    "train.eval_batch_size": "videos per evaluation batch",
    "train.checkpoint_every": "iterations between checkpoints (0: every epoch's end)",
    "train.keep_checkpoints": "checkpoints kept in `output_dir/checkpoints/`",
    "train.precise_bn": "batches to recompute BN statistics with before each evaluation (0: off)",
    "train.log_every": "iterations between log lines and progress updates",
    "train.step": "how a training step runs: `auto`, `eager`, `cuda_graphs` or `compile_graphs`",
    "train.sub_batch_bn": "how sub-batch BN computes its groups: `auto` (cuDNN) or `triton`",
    "train.plain_bn_impl": "kernels of BN over the whole per-GPU batch: `cudnn` or `triton`",
    "train.train_eval_videos": "training videos scored as the validation ones after training (0: none)",
    "num_gpus": "processes of the run (torchrun's); `solver.batch_size` is split over them",
    "scale": "`smoke`, `proxy` or `paper` (suites/scales/)",
    "seed": "initialisation and data order",
    "suite": "the suite a run belongs to (set by `harness reproduce`)",
    "recipe": "a recipe of suites/recipe/ (default `k400_slowfast_r50_8x8`)",
    "variant": "the suite's run name (set by `harness reproduce`)",
    "output_dir": "where checkpoints, logs and `record.json` go",
    "resume": "continue from the newest checkpoint in `output_dir`",
}


def spec_keys(spec: Any = None, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Every leaf key of RunSpec with its default, in the dataclasses' order."""
    spec = RunSpec() if spec is None else spec
    for f in dataclasses.fields(spec):
        value = getattr(spec, f.name)
        if dataclasses.is_dataclass(value):
            yield from spec_keys(value, f"{prefix}{f.name}.")
        else:
            yield f"{prefix}{f.name}", value


def _default(value: Any) -> str:
    return json.dumps(list(value) if isinstance(value, tuple) else value, ensure_ascii=False,
                      default=lambda v: list(v) if isinstance(v, tuple) else str(v)).replace("|", "\\|")


def _subcommands(parser: argparse.ArgumentParser, name: str) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """(full command name, parser) of every command below `parser`, depth first, in the order they were added."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                yield f"{name} {sub_name}", sub
                yield from _subcommands(sub, f"{name} {sub_name}")


def _helps(parser: argparse.ArgumentParser, name: str) -> Iterator[tuple[str, str]]:
    """(command name, its one-line help) of every command below `parser`."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                yield f"{name}{choice.dest}".strip(), choice.help or ""
            for sub_name, sub in action.choices.items():
                yield from ((f"{sub_name} {n}", h) for n, h in _helps(sub, ""))


def _cell(text: str | None) -> str:
    return " ".join((text or "").split()).replace("|", "\\|")


def _flags(parser: argparse.ArgumentParser) -> list[str]:
    rows = []
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        name = ", ".join(f"`{o}`" for o in action.option_strings) or f"`{action.metavar or action.dest}`"
        said = "default" in (action.help or "")
        default = "" if action.default in (None, False, argparse.SUPPRESS) or not action.option_strings or said else (
            f" (default: `{action.default}`)")
        rows.append(f"| {name} | {_cell(action.help)}{_cell(default)} |")
    return rows


def usage_markdown(parser: argparse.ArgumentParser) -> str:
    """The page: the commands (each with its description and flags), then the config keys."""
    lines = ["# Command and key reference", "",
             "Generated from the code (`python -m harness.reference docs/usage.md`): every command of `harness` "
             "with its flags, then every config key with its default. `harness COMMAND -h` says the same. Overrides "
             "are `key=value` words after the flags (lists as `[a,b]`); a bad key or value is refused before "
             "anything runs, naming the key.", ""]
    helps = {f"harness {n}": h for n, h in _helps(parser, "")}
    for name, sub in _subcommands(parser, "harness"):
        lines += [f"## `{name}`", "", _cell(sub.description or helps.get(name, "")), ""]
        flags = _flags(sub)
        if flags and not any(isinstance(a, argparse._SubParsersAction) for a in sub._actions):
            lines += ["| flag | what |", "|---|---|", *flags, ""]
    lines += ["## Config keys", "",
              "Defaults are the paper's Kinetics-400 SlowFast R50 8×8 recipe; `recipe=NAME` loads another "
              "(suites/recipe/), `scale=NAME` shrinks it (suites/scales/).", "",
              "| key | default | meaning |", "|---|---|---|"]
    lines += [f"| `{key}` | `{_default(value)}` | {KEYS.get(key, '')} |" for key, value in spec_keys()]
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    from harness.cli import build_parser

    argv = sys.argv[1:] if argv is None else argv
    text = usage_markdown(build_parser())
    if argv:
        Path(argv[0]).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
