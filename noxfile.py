"""Developer and user entry points: `nox -s tests`, `nox -s lint`, `nox -s reproduce -- --suite NAME`.

Sessions install the project into their own virtualenv with pip (not uv: uv ignores the
local PyTorch wheels of our machines and downloads several GB).
"""

import hashlib
import os
from pathlib import Path

import nox

nox.options.sessions = ["tests"]
nox.options.default_venv_backend = "virtualenv"


def _envdir() -> str:
    """Where the sessions' virtualenvs live: outside the repository, one folder per checkout.

    Inside the tree (nox's default `.nox/`) they put thousands of third-party files, PyTorch's among them, under
    the repository's root, where tools that scan the project's code (linters, security checks) read them as ours.
    `NOX_ENVDIR` overrides the place.
    """
    if os.environ.get("NOX_ENVDIR"):
        return os.environ["NOX_ENVDIR"]
    checkout = Path(__file__).resolve().parent
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return str(cache / "multigrid-harness" / "nox" / hashlib.sha1(str(checkout).encode()).hexdigest()[:12])


nox.options.envdir = _envdir()


@nox.session
def tests(session: nox.Session) -> None:
    """Lint and the layer rule, then the unit and integration tests (CPU only; GPU tests skip without a GPU)."""
    session.install("-e", ".[test,lint]")
    session.run("ruff", "check", ".")
    session.run("lint-imports")  # the layer rule of docs/design.md ([tool.importlinter] in pyproject.toml)
    # Benchmarks run once, untimed, as tests here; `nox -s bench` times them.
    session.run("pytest", "--benchmark-disable", *(session.posargs or ["tests"]))


@nox.session
def lint(session: nox.Session) -> None:
    """ruff over the whole tree, then the layer rule (lint-imports reads the code; it needs no install of it)."""
    session.install("ruff>=0.5", "import-linter>=2,<3")
    session.run("ruff", "check", ".")
    session.run("lint-imports")


@nox.session
def docs(session: nox.Session) -> None:
    """docs/ and the reports as one static site in site/ (MkDocs); open site/index.html."""
    session.install("-e", ".[docs]")
    session.run("mkdocs", "build", *session.posargs)


@nox.session
def bench(session: nox.Session) -> None:
    """CPU micro-benchmarks (pytest-benchmark); numbers saved under .benchmarks/."""
    session.install("-e", ".[test]")
    session.run("pytest", "tests/benchmarks", "--benchmark-only", "--benchmark-autosave", *session.posargs)


@nox.session
def reproduce(session: nox.Session) -> None:
    """Run a suite and write its report: `nox -s reproduce -- [--suite NAME] [--scale S] [key=value ...]`.

    Default: the `kinetics_ablation` suite (Tables 1a/1b) at `smoke` scale on a CPU, `proxy` with a GPU.
    Runs that already have a record in results/ are not redone; the report lands in reports/NAME/.
    """
    session.install("-e", ".")
    session.run("harness", "reproduce", *session.posargs)
