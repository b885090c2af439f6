"""The text of a `harness data bench` record: its table of clips/s per shape and path, and whether each loader path
keeps up with what the trainer consumes."""

from __future__ import annotations

from typing import Any

from harness.provenance import provenance_of


def _rate(clips_per_s: float | None) -> str:
    return "failed" if clips_per_s is None else f"{clips_per_s:.1f}"


def format_bench(record: dict[str, Any]) -> str:
    """A table of a benchmark record (with the cache's columns, `cache` and `c w=N`, when it measured one)."""
    workers = list(record["shapes"][0]["loader_clips_per_s"]) if record["shapes"] else []
    cached = bool(record.get("cache"))
    head = f"{'t':>4} {'s':>4} {'batch':>6} {'decode':>9} {'resample':>9} " + " ".join(
        f"{'w=' + w:>9}" for w in workers)
    if cached:
        head += f" {'cache':>9} " + " ".join(f"{'c w=' + w:>9}" for w in workers)
    cores = provenance_of(record)["hardware"].get("cpu_count", "?")
    planned = record.get("planned_shapes") or len(record["shapes"])
    cut = f", {len(record['shapes'])} of {planned} shapes (cut off)" if planned > len(record["shapes"]) else ""
    lines = [f"loader clips/s on {cores} cores ({record['dataset']['videos']} videos{cut})"
             + (f"; cache {record['cache']['folder']}" if cached else ""), head]
    for r in record["shapes"]:
        line = (f"{r['t']:>4} {r['s']:>4} {r['per_gpu_batch']:>6} {r['decode_clips_per_s']:>9.1f} "
                f"{r['resample_clips_per_s']:>9.1f} "
                + " ".join(f"{_rate(r['loader_clips_per_s'][w]):>9}" for w in workers))
        if cached:
            line += f" {r['cache_read_clips_per_s']:>9.1f} " + " ".join(
                f"{_rate(r['cache_loader_clips_per_s'][w]):>9}" for w in workers)
        lines.append(line)
    shapes = [f"{r['t']}x{r['s']}" for r in record["shapes"]]
    if record.get("paths"):
        lines.append("best loader clips/s per path (" + ", ".join(shapes) + "):")
    for path in record.get("paths", []):
        ratio = path["storage_ratio"]
        rates = {(p["t"], p["s"]): _rate(p["clips_per_s"]) for p in path["shapes"]}
        lines.append(f"  {path['name']:<21} storage {'?' if ratio is None else f'{ratio:.2f}x'}: "
                     + ", ".join(rates.get((r["t"], r["s"]), "-") for r in record["shapes"]))
    for r in record["shapes"]:
        for name, error in r.get("errors", {}).items():
            lines.append(f"  {r['t']}x{r['s']} {name}: {error}")
    skipped = {s["path"]: s["reason"] for r in record["shapes"] for s in r.get("skipped_videos", [])}
    if skipped:
        lines.append(f"  {len(skipped)} unusable video(s) skipped, as the loader skips them ('harness data check' "
                     f"lists every one):")
        lines += [f"    {path}: {reason}" for path, reason in sorted(skipped.items())]
    if any(r.get("consumer_clips_per_s") for r in record["shapes"]):
        lines.append("  the trainer consumes: " + ", ".join(
            "?" if r.get("consumer_clips_per_s") is None else f"{r['consumer_clips_per_s']:.1f}"
            for r in record["shapes"]))
        lines += [f"  {line}" for line in keeping_up(record)]
    return "\n".join(lines)


def keeping_up(record: dict[str, Any]) -> list[str]:
    """Per loader path of a record with the trainer's consumption: at how many of the shapes it measured it
    delivers at least what the trainer consumes, and how much of it at the others (a shape it did not measure, or
    whose consumption is unknown, counts as neither)."""
    consumed = {(r["t"], r["s"]): r.get("consumer_clips_per_s") for r in record["shapes"]}
    lines = []
    for path in record.get("paths", []):
        pairs = [(f"{p['t']}x{p['s']}", p["clips_per_s"], consumed.get((p["t"], p["s"]))) for p in path["shapes"]]
        pairs = [(shape, rate, need) for shape, rate, need in pairs if rate is not None and need]
        if not pairs:
            continue
        # percent rounded down: 99.6% of what the trainer consumes is short, and reads so
        short = [f"{shape} at {int(100 * rate / need)}%" for shape, rate, need in pairs if rate < need]
        lines.append(f"{path['name']} keeps up at {len(pairs) - len(short)} of {len(pairs)} shapes"
                     + (f"; short: {', '.join(short)}" if short else ""))
    return lines
