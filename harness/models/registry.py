"""A small, strict model registry: duplicate names are errors, unknown names get a "did you mean"."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

from torch import nn

from harness.spec import SpecError, did_you_mean


@dataclass(frozen=True)
class ModelEntry:
    """A registered model factory and what the harness needs to know about it."""

    name: str
    factory: Callable[..., nn.Module]
    min_frames: int  # the smallest clip length it accepts (e.g. α for SlowFast)
    default_frames: int  # the clip length it was published with (for `harness flops`)
    paper: bool  # one of the paper's architectures (vs. a wrapped torchvision model)
    description: str


_REGISTRY: dict[str, ModelEntry] = {}


def register_model(name: str, *, min_frames: int = 1, default_frames: int = 16, paper: bool = False,
                   description: str = ""):
    """Decorator registering `factory(num_classes, dropout, width) -> nn.Module` under `name`."""

    def add(factory: Callable[..., nn.Module]) -> Callable[..., nn.Module]:
        if name in _REGISTRY:
            raise ValueError(f"model '{name}' is registered twice ({_REGISTRY[name].factory} and {factory})")
        _REGISTRY[name] = ModelEntry(name, factory, min_frames, default_frames, paper,
                                    description or (factory.__doc__ or "").strip())
        return factory

    return add


def list_models(paper_only: bool = False) -> list[str]:
    return sorted(n for n, e in _REGISTRY.items() if e.paper or not paper_only)


def get_entry(name: str) -> ModelEntry:
    if name not in _REGISTRY:
        raise SpecError(f"Unknown model '{name}' (model.name).{did_you_mean(name, _REGISTRY)} "
                        f"Known models: {', '.join(list_models())}; or set model.target=pkg.module:factory.")
    return _REGISTRY[name]


def load_target(target: str) -> Callable[..., nn.Module]:
    """Import a user factory given as 'pkg.module:factory'."""
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise SpecError(f"'model.target' must look like 'pkg.module:factory', got '{target}'.")
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise SpecError(f"'model.target': cannot import module '{module_name}': {err}. Install its package or add "
                        f"the folder that holds it to PYTHONPATH.") from err
    if not hasattr(module, attr):
        raise SpecError(f"'model.target': module '{module_name}' has no attribute '{attr}'."
                        + did_you_mean(attr, [a for a in dir(module) if not a.startswith("_")]))
    return getattr(module, attr)
