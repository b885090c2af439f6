"""Compose a RunSpec from the Hydra configs in ``suites/`` and ``key=value`` overrides.

The defaults of every key come from the RunSpec dataclasses (one source of truth); a
recipe file (``suites/recipe/NAME.yaml``) overrides them; command-line overrides come last.
Override keys are checked before Hydra sees them, so a typo gets a "did you mean".
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path

from harness.io import unreadable_reason
from harness.paths import suites_dir
from harness.spec import RunSpec, SpecError, check_key, did_you_mean, spec_from_dict

DEFAULT_RECIPE = "k400_slowfast_r50_8x8"


def recipes() -> list[str]:
    """Names of the recipes in suites/recipe/."""
    return sorted(p.stem for p in (suites_dir() / "recipe").glob("*.yaml"))


def _check_overrides(overrides: Sequence[str]) -> None:
    for item in overrides:
        if "=" not in item:
            raise SpecError(f"Override '{item}' is not of the form key=value (e.g. solver.base_lr=0.2).")
        key = item.split("=", 1)[0].lstrip("+~")
        if key == "recipe":
            name = item.split("=", 1)[1]
            if name not in recipes():
                raise SpecError(f"Unknown recipe '{name}'.{did_you_mean(name, recipes())} "
                                f"Known recipes: {', '.join(recipes())}.")
            continue
        check_key(key)


@functools.lru_cache(maxsize=64)
def _recipe_tree(recipe: str) -> dict:
    """The config tree of one recipe as Hydra composes it (defaults, recipe file, its own defaults list)."""
    import yaml
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.core.config_store import ConfigStore
    from hydra.core.global_hydra import GlobalHydra
    from hydra.errors import HydraException
    from omegaconf import DictConfig, OmegaConf, open_dict

    ConfigStore.instance().store(name="_defaults", node=RunSpec().to_dict())
    # Inside a Hydra app (python -m harness.launch) Hydra is initialised already: step aside, then restore it.
    outer = GlobalHydra.instance().hydra if GlobalHydra.instance().is_initialized() else None
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=str(suites_dir()), version_base="1.3"):
            cfg = hydra_compose(config_name="config", overrides=[f"recipe={recipe}"])
    except HydraException as err:
        raise SpecError(f"Could not compose recipe '{recipe}': {err}") from err
    except yaml.YAMLError as err:  # an edited config file: the parser's message names the file, line and column
        raise SpecError(f"Could not compose recipe '{recipe}': a config file is not valid YAML: {err}") from None
    except UnicodeDecodeError as err:  # saved by an editor in a legacy encoding
        files = [suites_dir() / "config.yaml", suites_dir() / "recipe" / f"{recipe}.yaml"]
        bad = next((f for f in files if not _is_utf8(f)), files[-1])
        raise SpecError(f"Could not compose recipe '{recipe}': {bad} is not UTF-8 text ({err.reason} at byte "
                        f"{err.start}); re-save it as UTF-8.") from None
    except OSError as err:  # a config file Hydra reads (config.yaml, the recipe, its defaults) the system refuses
        if err.filename is None:  # Hydra's own OSError for a file that holds a single value, not keys
            raise SpecError(f"Could not compose recipe '{recipe}': {err}. {suites_dir() / 'recipe' / f'{recipe}.yaml'} "
                            f"must hold a mapping of keys (solver:, data:, ...).") from None
        raise SpecError(f"Could not compose recipe '{recipe}': {err.filename} {unreadable_reason(err.filename, err)}"
                        ) from None
    finally:
        if outer is not None:
            GlobalHydra.instance().clear()
            GlobalHydra.instance().initialize(outer)
    path = suites_dir() / "recipe" / f"{recipe}.yaml"
    if isinstance(cfg.get("recipe"), DictConfig):
        # Hydra puts a config group's file under its group's key unless the file says otherwise.
        raise SpecError(f"{path} lacks its first line '# @package _global_': without it its keys are read as "
                        f"'recipe.solver', 'recipe.data', ... Add that line.")
    if not isinstance(cfg.get("recipe"), str | None):
        raise SpecError(f"{path} must hold a mapping of keys (solver:, data:, ...), got {cfg.get('recipe')}.")
    with open_dict(cfg):
        cfg["recipe"] = cfg.get("recipe") or recipe
    tree = OmegaConf.to_container(cfg, resolve=False)
    # The defaults are RunSpec's own keys: an unknown one comes from the recipe file, which the message then names
    # (the key alone would send the user looking through their overrides).
    for key in [f"{k}.{sub}" if isinstance(v, dict) else k for k, v in tree.items()
                for sub in (v if isinstance(v, dict) else [None])]:
        try:
            check_key(key)
        except SpecError as err:
            raise SpecError(f"{path}: {err}") from None
    return tree


def _is_utf8(path: Path) -> bool:
    try:
        path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    return True


def compose(overrides: Sequence[str] = (), count_shape_costs: bool = True) -> RunSpec:
    """The validated RunSpec of a recipe (`recipe=NAME`, default the paper's default) with `overrides`.

    Hydra composes each recipe once (cached); the `key=value` overrides are then merged with
    OmegaConf's dot-list parser (YAML values: lists as [a,b], null, true/false), which is what makes
    composing the hundreds of suite runs fast. Under multigrid.batch_rule=flops the shapes' costs that the
    spec does not give are counted (fvcore, once per model and shape), unless `count_shape_costs` is False.
    """
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    overrides = list(overrides)
    _check_overrides(overrides)
    recipe = DEFAULT_RECIPE
    rest = []
    for item in overrides:
        key, value = item.split("=", 1)
        if key.lstrip("+") == "recipe":
            recipe = value
        else:
            rest.append(f"{key.lstrip('+')}={value}")
    cfg = OmegaConf.merge(OmegaConf.create(_recipe_tree(recipe)), _parse_overrides(rest))
    try:
        tree = OmegaConf.to_container(cfg, resolve=True)
    except OmegaConfBaseException as err:  # e.g. ${x} naming no key, ${oc.env:VAR} of a variable not set
        raise SpecError(f"'{err.full_key}' could not be resolved: {str(err).splitlines()[0]}. A value with ${{...}} "
                        f"is an OmegaConf interpolation; fix it, or give the value itself.") from None
    spec = spec_from_dict(tree)
    if count_shape_costs and spec.multigrid.batch_rule == "flops":
        from harness.models.flops import with_shape_costs  # torch and the model: only for the rule that counts

        spec = with_shape_costs(spec)
    return spec


def _parse_overrides(items: Sequence[str]):
    """The `key=value` overrides as an OmegaConf tree; SpecError naming the override whose value is no YAML (an
    unclosed bracket or quote, a stray '@' or '%'), found by parsing them one by one only where parsing all
    fails."""
    import yaml
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    try:
        return OmegaConf.from_dotlist(list(items))
    except (yaml.YAMLError, OmegaConfBaseException):
        for item in items:
            try:
                OmegaConf.from_dotlist([item])
            except (yaml.YAMLError, OmegaConfBaseException) as err:
                problem = str(err).splitlines()[0]
                raise SpecError(f"Override '{item}': its value cannot be parsed ({problem}). Close its brackets "
                                f"and quotes (e.g. data.jitter=[128,160]), or quote a string that holds them "
                                f"(key='[x').") from None
        raise
