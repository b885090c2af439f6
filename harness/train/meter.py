"""Honest measurement: per phase, time waiting for data vs computing, clips, FLOPs, peak memory."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass
class PhaseMeter:
    """What one phase of the Plan cost (summed over its iterations)."""

    phase: int
    iterations: int = 0
    clips: int = 0  # all ranks
    data_wait_s: float = 0.0  # blocked waiting for the loader
    compute_s: float = 0.0  # batch on device until the optimizer step finished (synchronised)
    forward_gflops: float = 0.0  # all ranks, fvcore count per clip × clips
    peak_memory_gib: float = 0.0
    per_gpu_batches: list[int] = field(default_factory=list)  # distinct clips per GPU (short cycle: several)
    bn_splits: int = 1  # the BN layout the phase ran with: sub-batches per GPU, GPUs synchronised
    bn_sync: int = 1

    @property
    def wall_s(self) -> float:
        return self.data_wait_s + self.compute_s


@dataclass
class RunMeter:
    """Per-phase meters of a run; survives checkpoints as a plain dict."""

    phases: dict[int, PhaseMeter] = field(default_factory=dict)
    eval_s: float = 0.0

    def add(self, phase: int, data_s: float, compute_s: float, clips: int, gflops: float) -> None:
        m = self.phases.setdefault(phase, PhaseMeter(phase))
        m.iterations += 1
        m.clips += clips
        m.data_wait_s += data_s
        m.compute_s += compute_s
        m.forward_gflops += gflops

    def note_layout(self, phase: int, per_gpu_batch: int, bn_splits: int, bn_sync: int) -> None:
        """The per-GPU batch and BN layout an iteration ran with (the record shows what ran, not what was planned)."""
        m = self.phases.setdefault(phase, PhaseMeter(phase))
        if per_gpu_batch not in m.per_gpu_batches:
            m.per_gpu_batches = sorted([*m.per_gpu_batches, per_gpu_batch])
        m.bn_splits, m.bn_sync = bn_splits, bn_sync

    def note_memory(self, phase: int, gib: float) -> None:
        m = self.phases.setdefault(phase, PhaseMeter(phase))
        m.peak_memory_gib = max(m.peak_memory_gib, gib)

    def to_dict(self) -> dict:
        return {"phases": {str(k): asdict(v) for k, v in sorted(self.phases.items())}, "eval_s": self.eval_s}

    @classmethod
    def from_dict(cls, d: dict) -> RunMeter:
        return cls({int(k): PhaseMeter(**v) for k, v in d["phases"].items()}, d["eval_s"])

    def summary(self) -> dict:
        """Per-phase rows (with clips/s and data-wait share) and totals, for the run record."""
        rows = []
        for m in self.phases.values():
            wall = m.wall_s
            rows.append({**asdict(m), "wall_s": wall, "clips_per_s": m.clips / wall if wall else 0.0,
                         "data_wait_share": m.data_wait_s / wall if wall else 0.0})
        data = sum(m.data_wait_s for m in self.phases.values())
        compute = sum(m.compute_s for m in self.phases.values())
        return {
            "phases": rows,
            "iterations": sum(m.iterations for m in self.phases.values()),
            "clips": sum(m.clips for m in self.phases.values()),
            "train_s": data + compute,
            "data_wait_s": data,
            "compute_s": compute,
            "data_wait_share": data / (data + compute) if data + compute else 0.0,
            "eval_s": self.eval_s,
            "forward_gflops": sum(m.forward_gflops for m in self.phases.values()),
            "peak_memory_gib": max((m.peak_memory_gib for m in self.phases.values()), default=0.0),
        }
