"""The classes of synthetic video: Kinetics-like classes need both appearance and motion."""

from __future__ import annotations

from harness.data.synth.classes import class_names, class_table


def test_classes_need_appearance_and_motion():
    for k in (4, 6, 24, 400):
        table = class_table(k)
        assert len(set(table)) == k
        assert len({a for a, _ in table}) >= 2 and len({m for _, m in table}) >= 2
    assert len(set(class_names(400))) == 400
