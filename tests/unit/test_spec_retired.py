"""Retired keys and values (harness.spec.RETIRED): an error where a user sets one, read back from records' specs."""

from __future__ import annotations

import pytest

from harness.config import compose
from harness.results import _hashed_settings, run_id
from harness.spec import RETIRED, RunSpec, SpecError, check_key, spec_from_dict, spec_from_record


@pytest.mark.parametrize("override", ["data.decoder=nvdec", "data.decoder=pyav", "+data.decoder=torchcodec"])
def test_a_retired_key_on_the_command_line_says_it_was_retired_and_where_the_findings_are(override):
    with pytest.raises(SpecError, match=r"'data.decoder' was retired: PyAV decodes every clip.* docs/performance.md"):
        compose([override])


def test_a_retired_key_in_a_config_file_is_refused_by_its_key():
    with pytest.raises(SpecError, match="'data.decoder' was retired"):
        check_key("data.decoder")


def test_a_records_spec_at_a_retired_keys_old_default_loads_and_keeps_its_run_id():
    spec = RunSpec()
    old = spec.to_dict()
    old["data"]["decoder"] = "pyav"  # what records made before the retirement hold
    assert spec_from_dict(old) == spec_from_record(old) == spec
    assert run_id(spec_from_dict(old)) == run_id(spec)
    assert _hashed_settings(old) == _hashed_settings(spec.to_dict())  # raw record specs, as reproduce compares them


def test_a_records_spec_at_another_value_of_a_retired_key_is_refused():
    old = RunSpec().to_dict()
    old["data"]["decoder"] = "nvdec"
    with pytest.raises(SpecError, match="'data.decoder' was retired"):
        spec_from_dict(old)


def test_every_retired_entry_says_what_to_use_instead():
    for setting, retired in RETIRED.items():
        assert retired.instead and (("=" in setting) == (retired.default is None)), setting


RETIRED_VALUES = [setting for setting in RETIRED if "=" in setting]


@pytest.mark.parametrize("setting", RETIRED_VALUES)
def test_a_retired_value_is_refused_with_what_to_use_instead(setting):
    with pytest.raises(SpecError, match=rf"'{setting}' was retired: use .* docs/performance.md"):
        compose([setting])


@pytest.mark.parametrize("setting", RETIRED_VALUES)
def test_a_records_spec_with_a_retired_value_reads_back_as_it_ran(setting):
    key, value = setting.split("=")
    section, name = key.split(".")
    old = RunSpec().to_dict()
    old[section][name] = value
    spec = spec_from_record(old)
    assert getattr(getattr(spec, section), name) == value and spec.to_dict() == old
    with pytest.raises(SpecError, match="was retired"):
        spec_from_dict(old)
