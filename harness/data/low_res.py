"""Copies of a dataset at smaller short sides, for the training clips whose scale jitter asks for fewer pixels.

Why: a clip of multigrid's coarse shapes may be cropped from frames scaled to a short side as small as 128 pixels
(a 112-pixel crop draws its short side from [128, 340] under the paper's rules), yet a decoder still decodes every
frame at the stored size, 256 or more, and decoding is most of a loader worker's time. A second copy made by
``harness data prepare --short-side 160`` holds the same videos at ≤ (160/256)² of the pixels; a clip whose drawn
short side is at most 160 decodes it instead. Under the paper's jitter that is a minority of the coarse clips, so
the gain is a few percent at the 112-pixel shapes (results/data_bench/kinetics_like_low_res_h200.json,
kinetics_like_low_res192_h200.json).

The clip's plan (which frames, the short-side draw, the crop box, the flip) stays the one drawn from the full
copy's header, so a seed gives the same clips whichever copy decodes them: the box is scaled onto the smaller
frames, and the crop is resized once to the output size.
A video missing from a smaller copy, or unreadable there, is read from the full copy.

A smaller copy may also keep fewer frames (``--frame-step K``, every K-th source frame): multigrid's coarse shapes
take few frames far apart (8 frames 2 to 8 source frames apart at 8x112 in the SlowFast 8x8 recipe), yet a copy
keeping every other frame still decodes every frame of their span. Such a copy serves a clip only where its frames
nearest the plan's times are the full copy's moved by one constant number of source frames (at most K/2), so the
clip keeps its spacing, hence its motion, and starts a fraction of a stride apart; other clips (e.g. strides that
are not multiples of K) go to the next copy that serves them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.data.clip_plan import nearest_frame_indices
from harness.data.transforms import CropBox
from harness.io import read_json_object
from harness.spec import SpecError


@dataclass(frozen=True)
class LowResCopy:
    """A copy of the dataset (made by `harness data prepare`) whose videos have a short side of at most
    `short_side` pixels."""

    root: Path
    short_side: int
    frame_step: int = 1  # every frame_step-th source frame kept (harness data prepare --frame-step)


def open_low_res_copies(folders: tuple[str, ...] | list[str], root: str | Path) -> tuple[LowResCopy, ...]:
    """The copies in `folders`, smallest first (of two at one short side, the one keeping fewer frames first);
    SpecError naming the folder and the fix where one is not a finished `harness data prepare` copy with a short
    side, is `root` itself, or repeats another's short side and frame step."""
    copies = []
    for folder in folders:
        path = Path(folder).expanduser()
        manifest = path / "prepare.json"
        try:
            record = read_json_object(manifest)
            settings = record.get("settings") or {}
        except (OSError, ValueError):
            record, settings = {}, None
        if not isinstance(settings, dict):
            raise SpecError(f"data.low_res_copies: {path} holds no readable prepare.json; make the copy with "
                            f"harness data prepare data.root={root} --short-side N --out {path}.")
        short = settings.get("short_side")
        if not isinstance(short, int) or short < 2:
            raise SpecError(f"data.low_res_copies: {path} was prepared without --short-side, so its frames are no "
                            f"smaller than data.root's; prepare it again with --short-side N (e.g. 160).")
        if not record.get("complete"):
            raise SpecError(f"data.low_res_copies: {path} is not finished; run the same harness data prepare "
                            f"command again, it resumes.")
        if path.resolve() == Path(root).expanduser().resolve():
            raise SpecError(f"data.low_res_copies: {path} is data.root itself; list only the smaller copies.")
        step = settings.get("frame_step") or 1
        copies.append(LowResCopy(path, short, int(step)))
    copies.sort(key=lambda c: (c.short_side, -c.frame_step))
    kinds = [(c.short_side, c.frame_step) for c in copies]
    if len(set(kinds)) != len(kinds):
        raise SpecError(f"data.low_res_copies: two copies have the same short side and frame step ((short side, "
                        f"frame step): {kinds}); keep one of each.")
    return tuple(copies)


def same_clip_moved(times: Sequence[float], fps: float, frame_step: int, copy_step: int) -> bool:
    """Whether a copy keeping every `copy_step`-th source frame gives the clip at `times` that the full copy
    (every `frame_step`-th; `fps` the source's rate) gives, moved by one constant number of source frames."""
    if copy_step == frame_step:
        return True
    full = [i * frame_step for i in nearest_frame_indices(times, fps / frame_step)]
    kept = [i * copy_step for i in nearest_frame_indices(times, fps / copy_step)]
    return len({k - f for k, f in zip(kept, full)}) == 1


def pick_copy(copies: tuple[LowResCopy, ...], short_side: int, times: Sequence[float] = (), fps: float = 30.0,
              frame_step: int = 1) -> LowResCopy | None:
    """The smallest copy that still has the drawn `short_side` in pixels (so its crop is never enlarged more
    than the full copy's would be) and serves the clip at `times` (:func:`same_clip_moved`; the full copy keeps
    every `frame_step`-th frame of a source at `fps`); None where none does."""
    return next((c for c in copies if c.short_side >= short_side
                 and same_clip_moved(times, fps, frame_step, c.frame_step)), None)


def scale_box(box: CropBox, frame: tuple[int, int], smaller: tuple[int, int]) -> CropBox | None:
    """`box`, drawn on frames of size `frame` (height, width), on the same frames at size `smaller`; None where
    the two sizes are not the same picture scaled (their aspect ratios differ by more than a pixel's rounding)."""
    (h, w), (sh, sw) = frame, smaller
    ry, rx = sh / h, sw / w
    if abs(ry - rx) * max(h, w) > 2:
        return None
    r = min(ry, rx)
    size = max(1, min(round(box.size * r), sh, sw))
    top = min(max(0, round(box.top * ry)), sh - size)
    left = min(max(0, round(box.left * rx)), sw - size)
    return CropBox(top, left, size)
