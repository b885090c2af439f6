"""Pure functions from records to figures (PNG bytes): Figure 2 (shapes over iterations), Figure 3 (time vs
accuracy) and the data-wait share per phase. Matplotlib's object API (no pyplot state) renders off-screen."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from harness.schedule import build_plan, iteration
from harness.spec import spec_from_dict

MAX_POINTS = 1500  # iterations sampled per schedule in Figure 2: a paper-scale plan has ~10^5
PALETTE = "colorblind"


def _png(fig: Figure) -> bytes:
    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    # No Software/date metadata: the same records give byte-identical PNGs.
    fig.savefig(buf, format="png", dpi=fig.dpi, metadata={"Software": None})
    return buf.getvalue()


def schedule_series(record: Mapping[str, Any], max_points: int = MAX_POINTS) -> list[dict[str, Any]]:
    """The planned shape of (a sample of) every iteration of a record's run, rebuilt from its spec.

    Sampling keeps every iteration of short plans; for long ones it takes `max_points` evenly spaced
    iterations, so the short cycle shows as a band between its smallest and largest shapes.
    """
    plan = build_plan(spec_from_dict(record["spec"]))
    n = plan.iterations
    step = max(1, -(-n // max_points))
    t0, s0 = plan.spec.data.num_frames, plan.spec.data.crop_size
    out = []
    for i in [*range(0, n, step), n - 1] if (n - 1) % step else range(0, n, step):
        it = iteration(plan, i)
        out.append({"iteration": i, "per_gpu_batch": it.per_gpu_batch, "t": it.t, "s": it.s,
                    "clip_size": it.t * it.s**2 / (t0 * s0**2), "lr": it.lr})
    return out


def _margins(fig: Figure, width: float, height: float, left: float = 0.7, right: float = 0.15,
             top: float = 0.35, bottom: float = 0.55, **space: float) -> None:
    """Fixed margins in inches: tight_layout would lay every text out twice (most of a report's build time)."""
    fig.subplots_adjust(left=left / width, right=1 - right / width, top=1 - top / height, bottom=bottom / height,
                        **space)


def schedule_figure(series: Mapping[str, Sequence[Mapping[str, Any]]]) -> bytes | None:
    """Figure 2: per-GPU mini-batch size and clip size t·s² (relative to the baseline's T·S²) over iterations,
    one row per run, sharing the iteration axis so that schedule lengths compare."""
    if not series:
        return None
    n = len(series)
    width, height = 11.0, 0.9 + 1.45 * n
    fig = Figure(figsize=(width, height), dpi=90)
    axes = fig.subplots(n, 2, sharex=True, squeeze=False)
    _margins(fig, width, height, hspace=0.45, wspace=0.12)
    colors = sns.color_palette(PALETTE, 2)
    for row, (name, points) in enumerate(series.items()):
        df = pd.DataFrame(list(points))
        ax_b, ax_c = axes[row]
        ax_b.step(df["iteration"], df["per_gpu_batch"], where="post", color=colors[0], linewidth=1)
        ax_c.step(df["iteration"], df["clip_size"], where="post", color=colors[1], linewidth=1)
        ax_b.set_title(f"{name}: per-GPU mini-batch (clips)", loc="left", fontsize=9)
        ax_c.set_title("clip size t·s² ÷ baseline T·S²", loc="left", fontsize=9)
        for ax in (ax_b, ax_c):
            ax.set_yscale("log", base=2)
            ax.grid(True, alpha=0.3)
            ax.tick_params(labelsize=8)
    for ax in axes[-1]:
        ax.set_xlabel("iteration", fontsize=9)
    return _png(fig)


def _time_unit(seconds: Sequence[float]) -> tuple[float, str]:
    top = max(seconds, default=0.0)
    if top >= 2 * 3600:
        return 3600.0, "hours"
    if top >= 120:
        return 60.0, "minutes"
    return 1.0, "seconds"


def tradeoff_figure(points: Sequence[Mapping[str, Any]], paper_points: Sequence[Mapping[str, Any]],
                    metric: str = "top1") -> bytes | None:
    """Figure 3: measured training time (x) vs accuracy (y) per method, lines with markers, each point labelled
    with its epoch factor; beside it the paper's tabulated points (relative training time = 1 / speedup).

    `points`: dicts with method, epochs_x, train_s and `metric`; `paper_points`: method, epochs_x, speedup and
    `metric` (the paper's).
    """
    ours = [p for p in points if p.get("train_s") and p.get(metric) is not None]
    paper = [p for p in paper_points if p.get("speedup") and p.get(metric) is not None]
    if not ours and not paper:
        return None
    label = "mAP (%)" if metric == "map" else "top-1 (%)"
    methods = list(dict.fromkeys([p["method"] for p in ours] + [p["method"] for p in paper]))
    palette = dict(zip(methods, sns.color_palette(PALETTE, len(methods))))
    panels = [x for x in (("ours", ours), ("paper", paper)) if x[1]]
    width, height = 6.2 * len(panels), 4.6
    fig = Figure(figsize=(width, height), dpi=90)
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    _margins(fig, width, height, wspace=0.25)
    for ax, (which, pts) in zip(axes, panels):
        df = pd.DataFrame(list(pts))
        if which == "ours":
            div, unit = _time_unit(df["train_s"].tolist())
            df["x"] = df["train_s"] / div
            ax.set_xlabel(f"measured training time ({unit})")
            ax.set_title("ours (measured)", fontsize=11)
        else:
            df["x"] = 1.0 / df["speedup"]
            ax.set_xlabel("training time relative to the baseline (1 / paper speedup)")
            ax.set_title("paper (tabulated points)", fontsize=11)
        df = df.sort_values(["method", "x"])
        sns.lineplot(data=df, x="x", y=metric, hue="method", style="method", markers=True, dashes=False,
                     estimator=None, sort=False, palette=palette, ax=ax, markersize=8)
        if f"{metric}_std" in df:  # ± one standard deviation over seeds, where a run has several
            bars = df[df[f"{metric}_std"].notna()]
            for _, p in bars.iterrows():
                ax.errorbar(p["x"], p[metric], yerr=p[f"{metric}_std"], fmt="none", capsize=3, linewidth=1,
                            ecolor=palette[p["method"]])
        for _, p in df.iterrows():
            if p.get("epochs_x") is not None and p["epochs_x"] == p["epochs_x"]:
                ax.annotate(f"{p['epochs_x']:.3g}×", (p["x"], p[metric]), textcoords="offset points",
                            xytext=(5, 5), fontsize=8)
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8, title=None)
    return _png(fig)


def convergence_figure(points: Sequence[Mapping[str, Any]]) -> bytes | None:
    """Top-1 of the baseline against its epochs: validation (± std over seeds) and training videos; None with
    fewer than two epoch settings."""
    if len(points) < 2:
        return None
    width, height = 6.2, 4.2
    fig = Figure(figsize=(width, height), dpi=90)
    ax = fig.subplots()
    _margins(fig, width, height)
    colors = sns.color_palette(PALETTE, 2)
    epochs = [float(p["epochs"]) for p in points]
    ax.errorbar(epochs, [p["top1"] for p in points], yerr=[p.get("top1_std") or 0.0 for p in points],
                marker="o", capsize=3, color=colors[0], label="validation")
    train = [(float(p["epochs"]), p["train_top1"]) for p in points if p.get("train_top1") is not None]
    if train:
        ax.plot(*zip(*train), marker="s", linestyle="--", color=colors[1], label="training videos")
    ax.set_xscale("log", base=2)
    ax.set_xticks(epochs, [f"{e:g}" for e in epochs])
    ax.set_xlabel("epochs")
    ax.set_ylabel("top-1 (%)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    return _png(fig)


def data_wait_figure(rows: Sequence[Mapping[str, Any]]) -> bytes | None:
    """Data-wait share of the training wall-clock: a bar per run (whole run), a dot per phase."""
    df = pd.DataFrame([r for r in rows if r.get("data_wait_share") is not None])
    if df.empty:
        return None
    df["share (%)"] = 100 * df["data_wait_share"].astype(float)
    whole, phases = df[df["phase"] == "all"], df[df["phase"] != "all"]
    runs = list(dict.fromkeys(df["variant"]))
    width, height = 8.0, max(1.9, 0.8 + 0.32 * len(runs))
    fig = Figure(figsize=(width, height), dpi=90)
    ax = fig.subplots()
    left = min(3.2, 0.3 + 0.075 * max(len(str(r)) for r in runs))  # room for the run names
    _margins(fig, width, height, left=left, top=0.15, bottom=0.5)
    sns.barplot(data=whole, x="share (%)", y="variant", order=runs, color="#a6c8e8", ax=ax, label="whole run")
    if not phases.empty:
        # seaborn jitters with numpy's global RNG: a fixed seed, the caller's state restored after, keeps the same
        # records giving the same bytes.
        saved = np.random.get_state()
        np.random.seed(0)
        try:
            sns.stripplot(data=phases, x="share (%)", y="variant", order=runs, color="#1d2330", size=4, jitter=0.15,
                          ax=ax, label="one phase")
        finally:
            np.random.set_state(saved)
    ax.set_xlim(0, 100)
    ax.set_xlabel("data wait (% of training wall-clock)")
    ax.set_ylabel("")
    ax.grid(True, axis="x", alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()
    unique = dict(zip(labels, handles))
    ax.legend(unique.values(), unique.keys(), fontsize=8, loc="lower right")
    return _png(fig)
