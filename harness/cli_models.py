"""`harness models list|check` and `harness flops`."""

from __future__ import annotations

import argparse
import json


def cmd_models_list(args: argparse.Namespace) -> int:
    from harness.models import get_entry, list_models

    for name in list_models():
        entry = get_entry(name)
        tag = "paper" if entry.paper else "torchvision"
        print(f"{name:<20} {tag:<12} {entry.description}")
    return 0


def cmd_models_check(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from harness.cli_train import scaled_overrides
    from harness.config import compose
    from harness.models import build_model
    from harness.models.check import check_shapes
    from harness.schedule import build_plan
    from harness.schedule.trained import planned_clip_sizes

    overrides = [*args.overrides]
    if args.model.count(":") == 1:
        overrides.append(f"model.target={args.model}")
    else:
        overrides.append(f"model.name={args.model}")
    spec = compose(scaled_overrides(overrides))  # scale=NAME as `harness train` applies it
    plan = build_plan(spec)
    model = build_model(spec.model, spec.data.num_classes)
    shapes = planned_clip_sizes(plan)
    with tqdm(total=len(shapes), desc=f"checking {args.model}", unit="shape", disable=args.json) as bar:
        results = check_shapes(model, shapes, spec.data.num_classes, batch=args.batch, progress=bar)
    failed = [r for r in results if not r.ok]
    if args.json:
        print(json.dumps({"model": args.model, "shapes": [r.__dict__ for r in results], "failed": len(failed)}))
    else:
        for r in results:
            status = "ok" if r.ok else f"FAILED  {r.error}"
            print(f"  {r.t:>3} frames × {r.s:>3}px  {r.seconds:6.2f}s  {status}")
        print(f"{len(results) - len(failed)}/{len(results)} planned shapes work with {args.model}.")
    return 1 if failed else 0


def cmd_flops(args: argparse.Namespace) -> int:
    from harness.models import build_model, get_entry
    from harness.models.flops import count_flops
    from harness.spec import ModelSpec

    entry = get_entry(args.model)
    frames = args.frames or entry.default_frames
    model = build_model(ModelSpec(name=args.model, width=args.width), args.classes)
    count = count_flops(model, frames, args.crop)
    if args.json:
        print(json.dumps({"model": args.model, "frames": frames, "crop": args.crop, **count.to_dict()}))
    else:
        print(f"{args.model} at {frames}×{args.crop}², 1 clip, {args.classes} classes: "
              f"{count.params / 1e6:.2f}M params, {count.gflops:.2f} GFLOPs "
              f"({count.gflops_conv:.2f} in convolutions)")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    models = sub.add_parser("models", help="list the registered models, or check one against a plan")
    msub = models.add_subparsers(dest="models_command", required=True, metavar="ACTION")
    listing = msub.add_parser("list", help="every registered model")
    listing.set_defaults(func=cmd_models_list)
    check = msub.add_parser("check", help="forward+backward at every planned shape (CPU, tiny batch)",
                            description="Run a model at every shape the plan (of the default recipe, or with "
                                        "overrides) produces and report which shapes fail and why. MODEL is a "
                                        "registered name or pkg.module:factory.")
    check.add_argument("model")
    check.add_argument("--batch", type=int, default=2, help="clips per step (default 2)")
    check.add_argument("--json", action="store_true")
    check.add_argument("overrides", nargs="*", help="plan overrides, e.g. recipe=k400_i3d_r50 model.width=0.25")
    check.set_defaults(func=cmd_models_check)

    flops = sub.add_parser("flops", help="parameters and GFLOPs (fvcore, 1 clip, eval mode)")
    flops.add_argument("model")
    flops.add_argument("--frames", type=int, default=None, help="clip length (default: the model's published T)")
    flops.add_argument("--crop", type=int, default=256, help="spatial size (default 256, as the model zoos count)")
    flops.add_argument("--classes", type=int, default=400)
    flops.add_argument("--width", type=float, default=1.0)
    flops.add_argument("--json", action="store_true")
    flops.set_defaults(func=cmd_flops)
