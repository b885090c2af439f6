"""Where PyAV's clip rate stops growing with processes: each stage of reading a random training clip, timed alone.

Usage: python benchmarks/pyav_scaling.py VIDEO_DIR --out OUT_DIR --seconds SECONDS [--processes N ...]

For each process count, that many processes read random clips (32 frames at stride 2 from a random window, the
baseline's sampling) from the videos under VIDEO_DIR for a fixed time, in three stages that add one step each:
  demux   - seek and read packets only (the file system and the container parser),
  decode  - seek, demux and decode to frames without colour conversion (FFmpeg's decoder),
  harness - the project's read_clip (decode, RGB conversion, frame pick), as the DataLoader's workers run it.
Clips/s per stage and count, and each count's speedup over the first, go to OUT_DIR/pyav_scaling.json with the
host's core and thread counts (results/loader/pyav_scaling_<card>.json): a stage that scales while the next does
not names the step that does not. The record is written after every point; points that would end past SECONDS are
left out. No GPU needed.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import random
import sys
import time
from pathlib import Path

import av

from harness.data.decode import read_clip
from harness.provenance import provenance

SECONDS = 8.0
FRAMES, STRIDE, FPS = 32, 2, 30.0


def _window(duration: float, rng: random.Random) -> list[float]:
    span = FRAMES * STRIDE / FPS
    start = rng.uniform(0.0, max(0.0, duration - span))
    return [start + i * STRIDE / FPS for i in range(FRAMES)]


def _packets(path: str, times: list[float], decode: bool) -> None:
    with av.open(path) as container:
        stream = container.streams.video[0]
        stream.thread_count = 1
        container.seek(int(times[0] / float(stream.time_base)), stream=stream, backward=True)
        for packet in container.demux(stream):
            if packet.pts is not None and packet.pts * float(stream.time_base) > times[-1]:
                break
            if decode:
                packet.decode()


def _worker(stage: str, videos: list[tuple[str, float]], seed: int, out: mp.Queue) -> None:
    rng, count = random.Random(seed), 0
    end = time.perf_counter() + SECONDS
    while time.perf_counter() < end:
        path, duration = rng.choice(videos)
        times = _window(duration, rng)
        if stage == "harness":
            read_clip(path, times)
        else:
            _packets(path, times, decode=stage == "decode")
        count += 1
    out.put(count)


def _rate(stage: str, videos: list[tuple[str, float]], processes: int) -> float:
    queue: mp.Queue = mp.Queue()
    procs = [mp.Process(target=_worker, args=(stage, videos, 1000 + i, queue)) for i in range(processes)]
    for p in procs:
        p.start()
    total = sum(queue.get() for _ in procs)
    for p in procs:
        p.join()
    return total / SECONDS


def _cpu_facts() -> dict[str, int | None]:
    cores = {(line.split(":")[1].strip()) for line in Path("/proc/cpuinfo").read_text().splitlines()
             if line.startswith("core id")}
    packages = {(line.split(":")[1].strip()) for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("physical id")}
    return {"logical_cpus": os.cpu_count(), "usable_cpus": len(os.sched_getaffinity(0)),
            "core_ids_per_package": len(cores) or None, "packages": len(packages) or None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("videos", type=Path, metavar="VIDEO_DIR", help="a folder of .mp4 videos (its first 200)")
    parser.add_argument("--out", type=Path, required=True, metavar="OUT_DIR", help="writes OUT_DIR/pyav_scaling.json")
    parser.add_argument("--seconds", type=float, required=True, help="the time budget; the points past it are skipped")
    parser.add_argument("--processes", type=int, nargs="+", metavar="N",
                        help="process counts (default 1 2 4 8 and the usable CPUs less one)")
    args = parser.parse_args()
    deadline = time.monotonic() + args.seconds
    counts = args.processes or [1, 2, 4, 8, max(1, len(os.sched_getaffinity(0)) - 1)]
    videos = []
    for path in sorted(args.videos.rglob("*.mp4"))[:200]:
        with av.open(str(path)) as c:
            videos.append((str(path), float(c.duration or 0) / av.time_base))
    if not videos:
        sys.exit(f"no .mp4 videos under {args.videos}")
    args.out.mkdir(parents=True, exist_ok=True)
    out_path = args.out / "pyav_scaling.json"
    result = {"videos": len(videos), "seconds_per_point": SECONDS, "cpu": _cpu_facts(), "stages": {},
              "provenance": provenance()}  # the host's hardware, the versions and the commit it ran at
    for stage in ("demux", "decode", "harness"):
        rates = {}
        for n in counts:
            if time.monotonic() + SECONDS + 2 > deadline:  # a point's processes start in about a second
                print(f"no time left for {stage} at {n} processes", flush=True)
                break
            rates[n] = _rate(stage, videos, n)
        if not rates:
            break
        first = next(iter(rates.values()))
        result["stages"][stage] = [{"processes": n, "clips_per_s": r, "speedup": r / first} for n, r in rates.items()]
        out_path.write_text(json.dumps(result, indent=1))
        print(stage, "  ".join(f"{n}: {r:.1f}/s" for n, r in rates.items()), flush=True)

if __name__ == "__main__":
    main()
