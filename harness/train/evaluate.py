"""Multi-view evaluation (the reference's test protocol, PySlowFast tools/test_net.py): top-1/top-5 for single-label
data, mAP for multi-label."""

from __future__ import annotations

import torch
import torch.distributed as dist
from torch import nn


def topk_accuracy(scores: torch.Tensor, labels: torch.Tensor, ks: tuple[int, ...] = (1, 5)) -> dict[str, float]:
    """Percent of rows whose label is among the k highest scores."""
    k_max = min(max(ks), scores.shape[1])
    top = scores.topk(k_max, dim=1).indices
    hits = top.eq(labels.view(-1, 1))
    return {f"top{k}": 100.0 * hits[:, : min(k, k_max)].any(1).float().mean().item() for k in ks}


def mean_average_precision(scores: torch.Tensor, targets: torch.Tensor) -> float:
    """Percent mAP over classes that have at least one positive (as the Charades evaluation does)."""
    aps = []
    for c in range(scores.shape[1]):
        positives = targets[:, c] > 0
        n_pos = int(positives.sum())
        if n_pos == 0:
            continue
        order = scores[:, c].argsort(descending=True)
        hits = positives[order].float()
        precision = hits.cumsum(0) / torch.arange(1, len(hits) + 1, dtype=torch.float32)
        aps.append((precision * hits).sum().item() / n_pos)
    return 100.0 * sum(aps) / len(aps) if aps else 0.0


@torch.no_grad()
def evaluate(model: nn.Module, loader, num_videos: int, num_classes: int, multilabel: bool,
             prepare, autocast, device: torch.device, distributed: bool, on_failures=None) -> dict[str, float]:
    """Aggregate every view of every video (softmax mean, or sigmoid max for multi-label) and score.

    A video is scored only if every one of its views could be read: an unreadable video, or a cut-off one whose
    later views could not be read, is left unscored (`videos_scored` says how many were), rather than scored on
    the views it kept; `on_failures` receives the (path, reason) pairs of the views that failed."""
    was_training = model.training
    model.eval()
    agg = torch.full((num_videos, num_classes), -1.0 if multilabel else 0.0, device=device)
    seen = torch.zeros(num_videos, device=device)
    failed = torch.zeros(num_videos, device=device)  # views that could not be read, per video
    labels = torch.zeros((num_videos, num_classes) if multilabel else (num_videos,), device=device,
                         dtype=torch.float32 if multilabel else torch.long)
    for batch in loader:
        if on_failures is not None and batch["failures"]:
            on_failures(batch["failures"])
        with autocast:
            logits = model(prepare(batch["clips"]))
        probs = logits.float().sigmoid() if multilabel else logits.float().softmax(1)
        video = batch["video"].to(device)
        valid = batch["valid"].to(device)
        failed.index_add_(0, video, (~valid).float())
        probs, video = probs[valid], video[valid]
        if multilabel:
            agg.index_reduce_(0, video, probs, "amax", include_self=True)
        else:
            agg.index_add_(0, video, probs)
        seen.index_add_(0, video, torch.ones_like(video, dtype=torch.float32))
        labels[batch["video"].to(device)] = batch["labels"].to(device)
    if distributed:
        dist.all_reduce(agg, op=dist.ReduceOp.MAX if multilabel else dist.ReduceOp.SUM)
        dist.all_reduce(seen)
        dist.all_reduce(failed)
        dist.all_reduce(labels, op=dist.ReduceOp.MAX)
    model.train(was_training)
    scored = (seen > 0) & (failed == 0)
    result = {"videos": int(num_videos), "videos_scored": int(scored.sum())}
    if multilabel:
        result["map"] = mean_average_precision(agg[scored].cpu(), labels[scored].cpu())
    else:
        result.update(topk_accuracy(agg[scored].cpu(), labels[scored].cpu()))
    return result
