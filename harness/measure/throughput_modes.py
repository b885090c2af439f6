"""The modes and default recipes of `harness throughput` and how a record row names its setting, apart from the
measurement (which imports torch), so that the command line and the reports are built without importing it."""

MODES = ("plain", "eager", "eager_autotuned", "cuda_graphs", "compile_graphs")
DEFAULT_RECIPES = ("k400_slowfast_r50_8x8", "k400_i3d_r50")


def row_setting(row: dict) -> str:
    """A record row's step mode with the model settings that differ from the defaults, e.g. `cuda_graphs, stem 8`."""
    parts = [row["mode"]]
    if row.get("pad_stem_channels"):
        parts.append(f"stem {row['pad_stem_channels']}")
    if row.get("plain_bn_impl", "cudnn") != "cudnn":
        parts.append(f"{row['plain_bn_impl']} BN")
    return ", ".join(parts)


def as_it_is(row: dict, mode: str) -> bool:
    """Whether a record row times `mode` on the model as it is (stems unpadded, cuDNN's BN): what the other rows are
    set against."""
    return row["mode"] == mode and not row.get("pad_stem_channels") and row.get("plain_bn_impl", "cudnn") == "cudnn"
