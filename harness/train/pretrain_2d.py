"""Pre-train the 2D ResNet-50 on single frames of a video dataset: a stand-in for ImageNet weights.

Table 2a's ImageNet rows inflate a torchvision ResNet-50 (`model.pretrained`); nothing is downloaded, so at smoke
and proxy scale the weights are made here, from frames of the scale's own synthetic training videos. Such weights
test the pre-trained path (inflation, its BN statistics and starting point under either schedule), not what
ImageNet's images teach: they have seen the very classes the video model is then trained on.

Each training image is a one-frame clip from the project's dataset (`VideoClipDataset` with a ClipRequest of
t = 1): the same decoding or frame cache, short-side jitter, random crop and flip as the video runs, normalised
as the video runs normalise, so the inflated network starts from the input statistics it will see.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.utils.data import DataLoader
from torchvision.models.resnet import Bottleneck
from tqdm import tqdm

from harness.data.clip_dataset import VideoClipDataset, collate_clips
from harness.data.sampler import ClipRequest
from harness.data.transforms import normalize
from harness.data.worker_memory import loader_worker_init
from harness.device import pick_device, use_bf16, use_channels_last
from harness.io import write_atomic, write_json_atomic
from harness.models.resnet2d import backbone_state, resnet50_2d
from harness.provenance import provenance
from harness.spec import RunSpec, SpecError

MIN_SIZE = 32  # ResNet-50 downsamples 32×: a smaller frame leaves the last stage less than one pixel of input
WARMUP_SHARE = 0.05  # linear warm-up over this share of the iterations, then a cosine decay to zero
# ImageNet's ResNet-50 recipe: 0.1 per 256 images, scaled linearly with the batch (Goyal et al., 2017). A peak of 0.1
# at 64 frames (four times this rule) left the network near chance after 1,000 iterations: its loss blew up early in
# the warm-up, as zero_init_residuals guards against.
LR_PER_256 = 0.1


@dataclass(frozen=True)
class PretrainSettings:
    """How long and on what the 2D network trains. `size` is the frame crop in pixels."""

    iterations: int = 200
    batch: int = 32
    size: int = 112
    lr: float | None = None  # peak learning rate; None: LR_PER_256 per 256 frames, scaled to the batch
    seed: int = 0

    @property
    def peak_lr(self) -> float:
        return self.lr if self.lr is not None else LR_PER_256 * self.batch / 256

    def check(self, where: str = "--") -> PretrainSettings:
        """Self, or SpecError naming the setting (`where` prefixes it: '--' for flags, a scale's key otherwise)."""
        if self.iterations < 1:
            raise SpecError(f"{where}iterations must be at least 1, got {self.iterations}.")
        if self.batch < 2:
            raise SpecError(f"{where}batch must be at least 2 (BatchNorm needs two frames), got {self.batch}.")
        if self.size < MIN_SIZE:
            raise SpecError(f"{where}size must be at least {MIN_SIZE} pixels (ResNet-50 downsamples 32×), "
                            f"got {self.size}.")
        if self.lr is not None and not (self.lr > 0 and math.isfinite(self.lr)):
            raise SpecError(f"{where}lr must be a positive number, got {self.lr}.")
        return self


def settings_from_mapping(data: dict[str, Any], where: str) -> PretrainSettings:
    """PretrainSettings from a scale's `pretrain_2d` mapping; SpecError naming an unknown key."""
    known = set(PretrainSettings.__dataclass_fields__)
    unknown = sorted(set(data) - known)
    if unknown:
        raise SpecError(f"{where}: unknown key(s) {unknown}; allowed: {sorted(known)}.")
    return PretrainSettings(**data).check(f"{where}.")


def sidecar_path(weights: Path) -> Path:
    """The JSON beside a weights file that says what it was trained on."""
    return weights.with_name(weights.name + ".json")


def _requests(size: int, jitter: tuple[int, int], settings: PretrainSettings,
              dataset_size: int) -> list[list[ClipRequest]]:
    """Every iteration's batch of one-frame requests: videos in a seeded random order, epoch after epoch."""
    gen = torch.Generator().manual_seed(settings.seed)
    order: list[int] = []
    batches = []
    for it in range(settings.iterations):
        while len(order) < settings.batch:
            order += torch.randperm(dataset_size, generator=gen).tolist()
        picks, order = order[: settings.batch], order[settings.batch:]
        batches.append([ClipRequest(v, 1, size, (1, 1), jitter, (settings.seed, it, k)) for k, v in enumerate(picks)])
    return batches


def zero_init_residuals(net: nn.Module) -> None:
    """Start every bottleneck as the identity: its last BN's scale at zero (Goyal et al., 2017), which keeps the
    first iterations of a deep network from blowing its activations up."""
    for block in net.modules():
        if isinstance(block, Bottleneck):
            nn.init.zeros_(block.bn3.weight)


def _lr_at(it: int, settings: PretrainSettings) -> float:
    warmup = max(1, int(settings.iterations * WARMUP_SHARE))
    if it < warmup:
        return settings.peak_lr * (it + 1) / warmup
    progress = (it - warmup) / max(1, settings.iterations - warmup)
    return settings.peak_lr * 0.5 * (1 + math.cos(math.pi * progress))


def pretrain_2d(spec: RunSpec, out: Path, settings: PretrainSettings, device: str | None = None,
                progress: bool = True) -> dict[str, Any]:
    """Train `resnet50_2d(spec.data.num_classes, spec.model.width)` on frames of `spec.data`'s training videos and
    write its backbone state dict to `out` (atomically; the JSON sidecar first, so a weights file always has
    one). Returns the sidecar's contents."""
    settings.check()
    out = Path(out)
    dataset = VideoClipDataset.from_spec(spec, "train")
    if dataset.records[0].multilabel:
        raise SpecError(f"data.name={spec.data.name} is multi-label; 2D pre-training needs a dataset with one class "
                        f"per video (e.g. the Kinetics-like synthetic data).")
    # The recipe's short-side jitter, in proportion to the frame size (at the recipe's crop it is the recipe's).
    scale = settings.size / spec.data.crop_size
    jitter = tuple(max(settings.size, round(j * scale)) for j in spec.data.jitter)
    dev = pick_device(device)
    bf16, channels_last = use_bf16(dev), use_channels_last(dev)
    memory_format = torch.channels_last if channels_last else torch.contiguous_format
    torch.manual_seed(settings.seed)
    net = resnet50_2d(dataset.num_classes, spec.model.width).to(dev, memory_format=memory_format)
    zero_init_residuals(net)
    optimizer = torch.optim.SGD(net.parameters(), lr=settings.peak_lr, momentum=0.9, weight_decay=1e-4, nesterov=True)
    workers = spec.train.num_workers
    loader = DataLoader(dataset, batch_sampler=_requests(settings.size, jitter, settings, len(dataset)),
                        collate_fn=collate_clips, num_workers=workers, pin_memory=dev.type == "cuda",
                        worker_init_fn=loader_worker_init)
    # Train top-1 over the last tenth of the iterations (at least one batch): the frames as trained on.
    window = max(1, settings.iterations // 10)
    correct = seen = 0
    loss = torch.zeros(())
    started = time.perf_counter()
    net.train()
    with tqdm(total=settings.iterations, unit="it", desc="pre-training 2D ResNet-50", disable=not progress,
              dynamic_ncols=True) as bar:
        for it, batch in enumerate(loader):
            for group in optimizer.param_groups:
                group["lr"] = _lr_at(it, settings)
            # One-frame clips N×C×1×H×W, normalised as the video runs are, then the frame: N×C×H×W.
            x = normalize(batch["clips"].to(dev, non_blocking=True))[:, :, 0].contiguous(memory_format=memory_format)
            y = batch["labels"].to(dev, non_blocking=True)
            with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=bf16):
                logits = net(x)
            loss = nn.functional.cross_entropy(logits.float(), y)
            if not torch.isfinite(loss):
                raise SpecError(f"2D pre-training diverged at iteration {it} (loss {loss.item()}): lower --lr "
                                f"(now {settings.peak_lr:g}).")
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            if it >= settings.iterations - window:
                correct += int((logits.argmax(1) == y).sum())
                seen += len(y)
            bar.update()
            bar.set_postfix(loss=f"{loss.item():.3f}")
    meta = {
        "what": "torchvision ResNet-50 backbone (no fc) pre-trained on single frames of video by "
                "'harness models pretrain-2d': a stand-in for ImageNet weights, not ImageNet",
        "weights": out.name,
        "dataset": {"name": spec.data.name, "root": str(spec.data.root), "cache": spec.data.cache,
                    "num_classes": dataset.num_classes, "train_videos": len(dataset)},
        "width": spec.model.width,
        "settings": {**asdict(settings), "lr": settings.peak_lr},
        "jitter": list(jitter),
        "device": str(dev),
        "final_train_top1": 100.0 * correct / seen,
        "final_train_top1_iterations": window,
        "final_loss": float(loss.detach()),
        "train_s": round(time.perf_counter() - started, 2),
        "provenance": provenance(),
    }
    write_json_atomic(sidecar_path(out), meta)
    state = backbone_state(net)
    write_atomic(out, lambda tmp: torch.save(state, tmp))
    return meta
