"""`harness models list|check|pretrain-2d` and `harness flops`."""

from __future__ import annotations

import argparse
import json

from harness.cli_args import COUNT, path


def cmd_models_list(args: argparse.Namespace) -> int:
    from harness.models import get_entry, list_models
    from harness.spec import ModelSpec

    for name in list_models():
        entry = get_entry(name)
        # the paper's architectures, the harness's others (X3D), torchvision's wrapped
        tag = "paper" if entry.paper else "harness" if ModelSpec(name=name).takes_width else "torchvision"
        print(f"{name:<20} {tag:<12} {entry.description}")
    return 0


def _check_overrides(args: argparse.Namespace, on_cpu: bool) -> tuple[list[str], str]:
    """The plan overrides of `harness models check` and a line saying which scale's shapes it checks: without a
    scale= override, the smoke scale's small shapes on a CPU (the paper's take minutes a shape there), the recipe's
    own elsewhere."""
    from harness.cli_train import override_key

    overrides = [*args.overrides]
    if args.model.count(":") == 1:  # quoted: 'pkg.module:' unquoted is a YAML mapping, not the path to refuse
        overrides.append(f"model.target='{args.model}'" if "'" not in args.model else f"model.target={args.model}")
    else:
        overrides.append(f"model.name={args.model}")
    given = [o.split("=", 1)[1] for o in overrides if "=" in o and override_key(o) == "scale"]
    if given:
        return overrides, f"scale={given[-1]} (as given)"
    if on_cpu:
        return [*overrides, "scale=smoke"], ("scale=smoke: small, fast shapes, the default on a CPU (give "
                                             "scale=proxy or scale=paper to check those shapes: minutes a shape "
                                             "here at paper scale)")
    return overrides, "the recipe's own shapes (paper scale; give scale=smoke for small, fast ones)"


def _shape_line(result) -> str:
    status = "ok" if result.ok else f"FAILED  {result.error}"
    return f"  {result.t:>3} frames × {result.s:>3}px  {result.seconds:6.2f}s  {status}"


def cmd_models_check(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from harness.cli_train import scaled_overrides
    from harness.config import compose
    from harness.device import pick_device, require_device
    from harness.models import build_model
    from harness.models.check import check_shapes
    from harness.schedule import build_plan
    from harness.schedule.trained import planned_clip_sizes

    require_device(args.device)
    device = pick_device(args.device)
    overrides, scale_line = _check_overrides(args, device.type == "cpu")
    spec = compose(scaled_overrides(overrides))  # scale=NAME as `harness train` applies it
    plan = build_plan(spec)
    model = build_model(spec.model, spec.data.num_classes)
    shapes = planned_clip_sizes(plan)
    if not args.json:
        print(f"checking {spec.model.label} on {device.type} at {len(shapes)} planned shapes, batch {args.batch}, "
              f"{scale_line}", flush=True)
    with tqdm(total=len(shapes), desc=f"checking {args.model}", unit="shape", disable=args.json) as bar:
        results = check_shapes(model, shapes, spec.data.num_classes, batch=args.batch, progress=bar, device=device,
                               on_result=None if args.json else lambda r: bar.write(_shape_line(r)))
    failed = [r for r in results if not r.ok]
    if args.json:
        print(json.dumps({"model": args.model, "scale": spec.scale, "device": device.type,
                          "shapes": [r.__dict__ for r in results], "failed": len(failed)}))
    else:
        print(f"{len(results) - len(failed)}/{len(results)} planned shapes of scale={spec.scale} work with "
              f"{args.model}.")
    return 1 if failed else 0


def cmd_models_pretrain_2d(args: argparse.Namespace) -> int:
    from pathlib import Path

    from harness.cli_train import scaled_overrides
    from harness.config import compose
    from harness.device import require_device
    from harness.io import require_writable_dir
    from harness.reproduce.inputs import prepare_synthetic
    from harness.spec import SpecError
    from harness.train.pretrain_2d import MIN_SIZE, PretrainSettings, pretrain_2d

    # Every refusal before a scale's synthetic data is generated (minutes at proxy scale); without --size the
    # run's crop is the size, known only then.
    PretrainSettings(args.iterations, args.batch, MIN_SIZE if args.size is None else args.size, args.lr,
                     args.seed).check()
    out = Path(args.out)
    if out.is_dir():
        raise SpecError(f"--out {out} is a folder; give the path of the weights file to write, e.g. {out}/resnet50.pt.")
    if (out.exists() or out.is_symlink()) and not args.force:
        raise SpecError(f"--out {out} exists; give another path, or add --force to replace it (and its sidecar "
                        f"{out.name}.json).")
    require_writable_dir(out.parent, "--out")
    require_device(args.device)  # before any work, not at the first step
    scaled = any(o.split("=", 1)[0] == "scale" for o in args.overrides)
    if not scaled and compose(args.overrides).data.root is None:
        raise SpecError("Say which frames to train on: scale=smoke or scale=proxy (that scale's synthetic training "
                        "videos, generated on first use, and its model width), or data.name=NAME data.root=DIR "
                        "data.num_classes=N for a dataset of your own.")
    spec = compose(scaled_overrides(args.overrides, prepare=prepare_synthetic))
    if spec.data.root is None:  # scale=paper: the recipe's real data, which only data.root can name
        raise SpecError(f"scale={spec.scale} has no synthetic data: set data.root=DIR (and data.name, "
                        f"data.num_classes), or use scale=smoke or scale=proxy.")
    size = spec.data.crop_size if args.size is None else args.size
    settings = PretrainSettings(args.iterations, args.batch, size, args.lr, args.seed)
    meta = pretrain_2d(spec, out, settings.check(), device=args.device, progress=not args.quiet)
    print(f"wrote {out} (and {out.name}.json): {settings.iterations} iterations of {settings.batch} frames at "
          f"{settings.size} px from {meta['dataset']['train_videos']} videos of {spec.data.root}, width "
          f"{spec.model.width:g}, train top-1 {meta['final_train_top1']:.1f}% over the last "
          f"{meta['final_train_top1_iterations']} iteration(s). Use it as model.pretrained={out.resolve()}")
    return 0


def cmd_flops(args: argparse.Namespace) -> int:
    from harness.models import build_model, get_entry
    from harness.models.check import PROBE_LIMIT, smallest_crop
    from harness.models.flops import count_flops
    from harness.spec import ModelSpec, SpecError

    if "=" in args.model:  # other commands take key=value overrides; this one takes the model's name
        name = args.model.split("=", 1)[1]
        raise SpecError(f"harness flops takes the model's name, not an override: harness flops {name or 'MODEL'} "
                        "(harness models list names them).")
    entry = get_entry(args.model)
    frames = args.frames or entry.default_frames
    if frames < entry.min_frames:
        raise SpecError(f"--frames {frames}: {entry.name} needs at least {entry.min_frames} frames.")
    if not 0 < args.width < float("inf"):
        raise SpecError(f"--width must be > 0 (1.0: the published model), got {args.width}.")
    spec = ModelSpec(name=args.model, width=args.width)
    if args.width != 1.0 and not spec.takes_width:
        raise SpecError(f"--width scales only the harness's own models (harness models list); {entry.name} is a "
                        f"torchvision model. Leave --width out.")
    smallest = smallest_crop(spec, args.classes, frames, args.crop)  # before fvcore's traceback of a too-small map
    if smallest is None:
        raise SpecError(f"--frames {frames}: {entry.name} runs no clip of {frames} frames at any crop up to "
                        f"{PROBE_LIMIT} px. Give more frames.")
    if smallest > args.crop:
        raise SpecError(f"--crop {args.crop}: {entry.name} needs at least {smallest} px at {frames} frames (its "
                        f"downsampling leaves no pixel to pool below that). Give --crop {smallest} or more.")
    model = build_model(spec, args.classes)
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
    check = msub.add_parser("check", help="forward+backward at every planned shape (tiny batch)",
                            description="Run a model at every shape the plan (of the default recipe, or with "
                                        "overrides) produces and report which shapes fail and why. MODEL is a "
                                        "registered name or pkg.module:factory. Without scale=NAME: the smoke "
                                        "scale's shapes on a CPU, the recipe's own on a GPU.")
    check.add_argument("model")
    check.add_argument("--batch", type=COUNT, default=2, help="clips per step (default 2)")
    check.add_argument("--device", choices=("cuda", "cpu"), default=None, help="default: cuda if available")
    check.add_argument("--json", action="store_true")
    check.add_argument("overrides", nargs="*", help="plan overrides, e.g. recipe=k400_i3d_r50 model.width=0.25")
    check.set_defaults(func=cmd_models_check)

    pre = msub.add_parser(
        "pretrain-2d", help="train a 2D ResNet-50 on video frames: a stand-in for ImageNet weights (model.pretrained)",
        description="Train torchvision's ResNet-50 from scratch on single frames of a dataset's training videos and "
                    "write its backbone state dict (the layout model.pretrained inflates into I3D or SlowFast's "
                    "slow pathway) with a JSON sidecar saying what it was trained on. Nothing is downloaded: these "
                    "are not ImageNet weights. scale=smoke|proxy trains on that scale's synthetic videos at its "
                    "model width (1/16 at smoke scale, so that the weights fit its narrowed video models).")
    pre.add_argument("--out", required=True, type=path, help="the weights file to write (the sidecar is OUT.json)")
    pre.add_argument("--force", action="store_true", help="replace --out (and its sidecar) if it exists")
    pre.add_argument("--iterations", type=int, default=200, help="SGD steps (default 200)")
    pre.add_argument("--batch", type=int, default=32, help="frames per step (default 32)")
    pre.add_argument("--size", type=int, default=None, help="frame crop in pixels (default: the run's data.crop_size)")
    pre.add_argument("--lr", type=float, default=None,
                     help="peak learning rate (warm-up, then cosine; default 0.1 per 256 frames: 0.0125 at 32)")
    pre.add_argument("--seed", type=int, default=0, help="initialisation and frame order (default 0)")
    pre.add_argument("--device", choices=("cuda", "cpu"), default=None, help="default: cuda if available")
    pre.add_argument("--quiet", action="store_true", help="no progress bar")
    pre.add_argument("overrides", nargs="*",
                     help="scale=smoke|proxy, or data.name=NAME data.root=DIR data.num_classes=N [model.width=W]")
    pre.set_defaults(func=cmd_models_pretrain_2d)

    flops = sub.add_parser("flops", help="parameters and GFLOPs (fvcore, 1 clip, eval mode)")
    flops.add_argument("model")
    flops.add_argument("--frames", type=COUNT, default=None, help="clip length (default: the model's published T)")
    flops.add_argument("--crop", type=COUNT, default=256, help="spatial size (default 256, as the model zoos count)")
    flops.add_argument("--classes", type=COUNT, default=400)
    flops.add_argument("--width", type=float, default=1.0)
    flops.add_argument("--json", action="store_true")
    flops.set_defaults(func=cmd_flops)
