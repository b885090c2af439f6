"""Suites and scales looked up by name: an unknown name or key is refused naming the file and the fix."""

from __future__ import annotations

import pytest

from harness.spec import SpecError
from harness.suite import list_scales, list_suites, load_scale, load_suite
from harness.suite.yaml_file import read_named_mapping


def test_an_unknown_suite_or_scale_gets_a_did_you_mean_and_the_list():
    with pytest.raises(SpecError, match=r"Unknown suite 'kinetics_ablatio'\. Did you mean 'kinetics_ablation'\? "
                                        r"Suites: .*kinetics_ablation.*\.$") as err:
        load_suite("kinetics_ablatio")
    assert str(err.value).endswith(f"Suites: {', '.join(list_suites())}.")
    with pytest.raises(SpecError, match=r"Unknown scale 'smok'\. Did you mean 'smoke'\? Scales: ") as err:
        load_scale("smok")
    assert str(err.value).endswith(f"Scales: {', '.join(list_scales())}.")


def test_a_key_outside_the_allowed_ones_names_the_file_and_the_allowed_keys(tmp_path):
    (tmp_path / "tiny.yaml").write_text("description: a scale\nframes_factr: 0.5\n", encoding="utf-8")
    with pytest.raises(SpecError) as err:
        read_named_mapping("scale", tmp_path, ["tiny"], "tiny", {"description", "frames_factor"})
    assert str(err.value) == (f"{tmp_path / 'tiny.yaml'}: unknown key(s) ['frames_factr']; allowed: "
                              f"['description', 'frames_factor'].")
    path, data = read_named_mapping("scale", tmp_path, ["tiny"], "tiny", {"description", "frames_factr"})
    assert path == tmp_path / "tiny.yaml" and data == {"description": "a scale", "frames_factr": 0.5}
