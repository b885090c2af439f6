"""The annotation files of a synthetic dataset, in the layout of the dataset its kind stands for (see
:mod:`harness.data.annotations`), and the lists of the videos that show another class or hide their object.

- ``kinetics`` (``data.name=synthetic``): ``train.csv`` and ``val.csv`` (``train/<class>/train_000123.mp4 <label>``
  lines), ``classes.txt``, ``noisy_labels.csv`` (``path label shown_label``) and ``hidden_videos.csv``
  (``path label``).
- ``ssv2`` (``data.name=ssv2``): ``something-something-v2-labels.json``, ``-train.json`` and ``-validation.json``
  for the videos ``20bn-something-something-v2/{id}.webm``; the noisy and hidden lists name videos by id.
- ``charades`` (``data.name=charades``, ``data.num_classes=157``, scored by mAP): ``Charades_v1_train.csv`` and
  ``Charades_v1_test.csv`` (``id,...,actions,length`` rows, actions like ``c002 0.40 1.20;c000 0.00 0.90``) and
  ``Charades_v1_classes.txt`` for the videos ``Charades_v1/{id}.mp4``.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from harness.data.synth.classes import class_names, ssv2_template
from harness.data.synth.config import SynthConfig
from harness.data.synth.videos import charades_actions, is_hidden, shown_label, video_id, video_label, video_path
from harness.io import write_text_atomic

KINETICS_DONE = "val.csv"  # the file a Kinetics-layout dataset is written with last


def write_annotations(out: Path, cfg: SynthConfig, videos: list[tuple[str, int]]) -> None:
    """Write the annotation files of `videos` ((split, index) pairs) of a dataset of `cfg.kind` into `out`."""
    {"kinetics": _write_kinetics, "ssv2": _write_ssv2, "charades": _write_charades}[cfg.kind](out, cfg, videos)


def _write_kinetics(out: Path, cfg: SynthConfig, videos: list[tuple[str, int]]) -> None:
    """`{split}.csv` (`path label` lines), `classes.txt` and the lists of noisy and hidden videos."""
    names = class_names(cfg.classes)
    labelled = [(s, i, video_label(s, i, cfg)) for s, i in videos]
    lists = {split: "".join(f"{video_path(s, i, names[label])} {label}\n" for s, i, label in labelled if s == split)
             for split in ("train", "val")}
    write_text_atomic(out / "train.csv", lists["train"])
    write_text_atomic(out / "classes.txt", "".join(f"{n}\n" for n in names))
    if cfg.label_noise:
        noisy = [(video_path(s, i, names[label]), label, shown_label(s, i, label, cfg)) for s, i, label in labelled]
        write_text_atomic(out / "noisy_labels.csv", "".join(f"{p} {label} {shown}\n" for p, label, shown in noisy
                                                             if shown != label))
    if cfg.hidden:
        write_text_atomic(out / "hidden_videos.csv", "".join(f"{video_path(s, i, names[label])} {label}\n"
                                                             for s, i, label in labelled if is_hidden(s, i, cfg)))
    # Last: `harness reproduce` takes a val.csv as the sign of a finished dataset (KINETICS_DONE), so a generation
    # stopped before it is taken up again, not used without its class names and lists.
    write_text_atomic(out / KINETICS_DONE, lists["val"])


def _write_ssv2(out: Path, cfg: SynthConfig, videos: list[tuple[str, int]]) -> None:
    """SSv2's labels JSON (template without brackets → index, as a string as published), its train and
    validation JSONs (one {id, label, template, placeholders} entry a line) and the lists of noisy and hidden
    videos (`id label [shown_label]` lines)."""
    labels = {ssv2_template(k).replace("[", "").replace("]", ""): str(k) for k in range(cfg.classes)}
    write_text_atomic(out / "something-something-v2-labels.json", json.dumps(labels, indent=1) + "\n")
    for split, name in (("train", "train"), ("val", "validation")):
        entries = []
        for s, i in videos:
            if s == split:
                label = video_label(s, i, cfg)
                template = ssv2_template(label)
                # The placeholder names no object: the object is drawn per video and says nothing of the class.
                entries.append({"id": video_id(s, i, cfg), "label": template.replace("[something]", "something"),
                                "template": template, "placeholders": ["something"]})
        body = ",\n".join(json.dumps(e) for e in entries)
        write_text_atomic(out / f"something-something-v2-{name}.json", f"[\n{body}\n]\n" if entries else "[]\n")
    labelled = [(video_id(s, i, cfg), s, i, video_label(s, i, cfg)) for s, i in videos]
    if cfg.label_noise:
        write_text_atomic(out / "noisy_labels.csv", "".join(f"{v} {label} {shown_label(s, i, label, cfg)}\n"
                                                            for v, s, i, label in labelled
                                                            if shown_label(s, i, label, cfg) != label))
    if cfg.hidden:
        write_text_atomic(out / "hidden_videos.csv", "".join(f"{v} {label}\n" for v, s, i, label in labelled
                                                             if is_hidden(s, i, cfg)))


CHARADES_HEADER = ("id", "subject", "scene", "quality", "relevance", "verified", "script", "objects",
                   "descriptions", "actions", "length")


def _write_charades(out: Path, cfg: SynthConfig, videos: list[tuple[str, int]]) -> None:
    """Charades' train and test CSVs (the official header; id, actions and length filled in) and its class list
    (`c000 name` lines)."""
    names = class_names(cfg.classes)
    write_text_atomic(out / "Charades_v1_classes.txt", "".join(f"c{k:03d} {n}\n" for k, n in enumerate(names)))
    for split, name in (("train", "Charades_v1_train.csv"), ("val", "Charades_v1_test.csv")):
        text = io.StringIO()
        writer = csv.writer(text, lineterminator="\n")
        writer.writerow(CHARADES_HEADER)
        for s, i in videos:
            if s == split:
                # Times in seconds at the frames' own times, two decimals as Charades writes them.
                actions = ";".join(f"c{label:03d} {first / cfg.fps:.2f} {last / cfg.fps:.2f}"
                                   for label, first, last in charades_actions(s, i, cfg))
                row = {"id": video_id(s, i, cfg), "actions": actions, "length": f"{cfg.frames / cfg.fps:.2f}"}
                writer.writerow([row.get(column, "") for column in CHARADES_HEADER])
        write_text_atomic(out / name, text.getvalue())
