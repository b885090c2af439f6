"""The settings of synthetic video: the Charades-like kind's length and the options it refuses."""

from __future__ import annotations

import pytest

from harness.data.synth.config import preset_config
from harness.spec import SpecError


def test_charades_kind_is_longer_by_default_and_single_label_options_are_refused():
    assert preset_config("smoke", kind="charades").frames == 3 * preset_config("smoke").frames
    assert preset_config("smoke", kind="charades", frames=10).frames == 10
    with pytest.raises(SpecError, match="charades"):
        preset_config("smoke", kind="charades", hidden=0.2)
    with pytest.raises(SpecError, match="Did you mean 'ssv2'"):
        preset_config("smoke", kind="ssv3")
