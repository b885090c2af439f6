"""Retired keys and values: the error that says what to use instead, and how records' specs that hold them load."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Retired:
    """A retired key or value: what the harness uses instead, and (a key) the old default that records' specs hold."""

    instead: str
    default: Any = None


# Retired keys ("section.key") and values ("section.key=value"): setting one is an error that says what to use
# instead; the measurements that retired them are in docs/performance.md. Records' specs are read back without a
# retired key at its old default (spec_from_dict) and with retired values as they ran (spec_from_record).
_AUTO_BN = "use train.sub_batch_bn=auto (cuDNN per block or the interleaved layout, as measured) or triton"
RETIRED: dict[str, Retired] = {
    "data.decoder": Retired("PyAV decodes every clip, in the loader's workers; remove the setting", default="pyav"),
    "train.step=compile": Retired("use train.step=auto (CUDA graphs, compiled where compiling pays) or cuda_graphs"),
    **{f"train.sub_batch_bn={v}": Retired(_AUTO_BN) for v in ("blocks", "interleaved", "fused", "compiled")},
    "train.sub_batch_bn=cuda_cpp": Retired("use train.sub_batch_bn=triton (as fast under CUDA graphs) or auto"),
    "train.plain_bn_impl=cuda_cpp": Retired("use train.plain_bn_impl=triton or cudnn"),
}


def retired_message(setting: str) -> str:
    """What a SpecError says of a retired key or value (a key of RETIRED)."""
    return (f"'{setting}' was retired: {RETIRED[setting].instead}. The measurements that retired it are in "
            f"docs/performance.md (Retired).")


def without_retired_defaults(raw: dict[str, Any]) -> dict[str, Any]:
    """A copy of a nested spec dict without the retired keys that hold their old default (committed records' specs
    hold them); a retired key at another value stays, for building to refuse."""
    out = {k: dict(v) if isinstance(v, dict) else v for k, v in raw.items()}
    for setting, retired in RETIRED.items():
        section, _, key = setting.partition(".")
        if "=" not in setting and isinstance(out.get(section), dict) and out[section].get(key, object()) == \
                retired.default:
            del out[section][key]
    return out
