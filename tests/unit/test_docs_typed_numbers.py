"""No measured number is typed by hand: prose not generated from records names none, and points to the record or
generated page that holds it instead.

Where the test looks: the suite files (suites/**/*.yaml, comments and values alike), every description and help
text of the `harness` parsers (what docs/usage.md renders), results/README.md, benchmarks/README.md, the README
outside its generated block, the hand-written docs pages, and the comments and docstrings of harness/ and
benchmarks/ (Python, shell scripts and job lists).

A typed measurement is any of these (MEASUREMENTS holds one pattern each):
- a speed factor: a number with x or × that a word makes a measurement ("1.3x faster", "predicts 3.8x", "took 1.2x
  their predicted compute"); a factor that names a setting ("multigrid 1.5×", "baseline_1.0x", "x 1.25"), a shape
  ("16x224") or an architecture ("2× the fast width") is none;
- a relative difference: a percentage followed by a compared quantity ("20% faster", "~3% more bytes", "45% top-1");
  a share that sets something ("30-70% of the video", "at most 2% of the run's steps", "the 95% lower bound") is
  none;
- an approximate quantity with a unit ("about 110 s", "~40%", "≈ 42 GB"): "about" says it was observed, not set; a
  setting or a count is written without it ("60 s left", "250 frames") and a derivation exactly ("(160/256)²");
- an accuracy or a loss ("loss 2.2", "top-1 of 45%", "a gain of 1.2 points"): a threshold in whole points ("at
  most 3 points") is a rule, not a result;
- a rate that only a measurement has (ms per step, s/step, steps/s, clips/s, TFLOP/s, GPU-hours);
- a GPU model named as evidence ("on an H100", "its H100 reference", "recorded on H100s"): a card's name in quotes
  is a value (the name CUDA reports, e.g. "NVIDIA H200"); CARD_DATA lists the files where card names are data.
A number published by the paper (or another paper, or a datasheet) may be quoted where its sentence names the
source before it ("Paper: multigrid 5.7× faster", "Source: Li et al., …", "the paper reports …"), or where "the
paper's" stands right before it ("the paper's 3.4× fewer iterations"); "at the paper's shapes, steps run 1.3x
faster" is a measurement of the harness.
docs/usage.md is read through its parsers; docs/performance.md, the README's block and the reports are generated
from the records and not read here.
"""

from __future__ import annotations

import argparse
import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

from harness.cli import build_parser
from harness.report.readme import BEGIN, END

ROOT = Path(__file__).resolve().parents[2]

NUM = r"\d+(?:[.,]\d+)?"
RANGE = rf"{NUM}(?:\s*(?:-|–|to)\s*{NUM})?"
APPROX = r"(?:about|around|roughly|nearly|almost|some|~|≈)"
CARD = r"(?:P100|H100|H200|H20|A100|A10G?|V100|B200|GB200|L40S?|L4|T4)s?"
MEASUREMENTS = {
    "speed factor": rf"\b{RANGE}\s*[x×]\s+(?:(?:their|its|the)\s+)?(?:faster|slower|quicker|speed|predicted|as fast"
                    rf"|as slow|at paper scale)"
                    rf"|\b(?:speedups?|speed-ups?|predicts?|predicted|took|takes|ran)\s+(?:of\s+)?(?:{APPROX}\s*)?"
                    rf"{RANGE}\s*[x×](?![\w×])",
    "relative difference": rf"\b{RANGE}\s*%\s+(?!(?:lower|upper) bound)(?:faster|slower|quicker|more|fewer"
                           rf"|less|smaller|larger|higher|lower|top-[15]|accuracy|mAP|MFU|busy"
                           rf"|of (?:the )?(?:card's )?peak)\b",
    "approximate quantity": rf"{APPROX}\s*{RANGE}\s*(?:%|(?:ms|s|seconds?|min|minutes?|h|hours?|GiB|GB|MiB|MB|TB"
                            rf"|TFLOP/s|GPU-hours?|points?)\b)",
    "accuracy or loss": rf"\b{RANGE}\s*%\s*(?:of\s+)?top-[15]\b|\btop-[15]\s+(?:of\s+)?{RANGE}\s*%"
                        rf"|\bloss(?:es)?(?:\s+(?:of|had|has|was|went|gone|from|fell|rose|at|is))*\s+{NUM}\b"
                        rf"|[-−+]?\d+\.\d+\s+points?\b",
    "measured rate": rf"\b{NUM}\s*(?:ms(?:/step| per step| a step)|s/step|steps/s|clips/s|it/s|TFLOP/s"
                     rf"|GPU-hours?)(?!\w)",
    "card as evidence": rf"(?<!\w){CARD}(?!\w)",
}
PATTERNS = {name: re.compile(pattern) for name, pattern in MEASUREMENTS.items()}
# A published number: its sentence names the source before it ("Paper:", "Source: … et al."), or "the paper's" (or
# "published") stands right before it; "the paper's shapes, … 1.3x faster" is the harness's measurement.
PUBLISHED = re.compile(r"(?:\b[Pp]aper(?::|\s+(?:reports?|gives?|states?|says)\b)|\b[Ss]ource:|\bdatasheets?\b"
                       r"|\bet al\.)(?:(?!\.\s).)*$|(?:\bpaper's|\bpublished)[^.,;:\n]{0,30}$", re.DOTALL)
# A quoted span is a value, not prose: a card's name as CUDA reports it, e.g. "NVIDIA H200".
QUOTED = re.compile(r"\"[^\"\n]*\"|(?<!\w)'[^'\n]*'(?!\w)")
# Where card names are data: mfu.py's table of each card's dense-bf16 peak (from its datasheet), the index of the
# records, which names the card each record was made on as their file names do, and the performance page's
# generator, whose findings select records by card.
CARD_DATA = {"harness/measure/mfu.py", "results/README.md", "harness/report/performance_page.py"}
# Pages made from the records by a generator (usage.md from the parsers, read through them here).
GENERATED = {"docs/usage.md", "docs/performance.md"}


def typed_measurements(text: str, cards: bool = True) -> Iterator[tuple[str, str]]:
    """(pattern name, the words around it) for every typed measurement in `text`; `cards` False: card names are data
    there."""
    for name, pattern in PATTERNS.items():
        if name == "card as evidence" and not cards:
            continue
        prose = QUOTED.sub(lambda quoted: " " * len(quoted.group()), text) if name == "card as evidence" else text
        for match in pattern.finditer(prose):
            if PUBLISHED.search(prose[max(0, match.start() - 400):match.start()]):
                continue
            yield name, " ".join(prose[max(0, match.start() - 40):match.end() + 20].split())


def python_prose(path: Path) -> Iterator[tuple[int, str]]:
    """(line, text) of every comment and docstring of a Python file."""
    source = path.read_text(encoding="utf-8")
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(
                    first.value.value, str):
                yield first.lineno, first.value.value


def hash_comments(path: Path) -> Iterator[tuple[int, str]]:
    """(line, text) of every `#` comment of a shell script or job list (the shebang aside)."""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("#!"):
            continue
        code, sep, comment = line.partition("#")
        if sep and not code.rstrip().endswith(("$", "{")):  # ${#x}, $# are shell, not comments
            yield number, comment


def parser_texts(parser: argparse.ArgumentParser, name: str = "harness") -> Iterator[tuple[str, str]]:
    """(command and flag, text) of every description and help of `parser` and the commands below it, as help shows
    them (`%%` as `%`)."""
    yield name, (parser.description or "").replace("%%", "%")
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                yield f"{name} {choice.dest}", (choice.help or "").replace("%%", "%")
            for sub_name, sub in action.choices.items():
                yield from parser_texts(sub, f"{name} {sub_name}")
        elif action.help not in (None, argparse.SUPPRESS):
            yield f"{name} {'/'.join(action.option_strings) or action.dest}", action.help.replace("%%", "%")


def prose() -> Iterator[tuple[str, str]]:
    """(where, text) of every piece of hand-written prose the rule covers."""
    for path in sorted((ROOT / "suites").rglob("*.yaml")):
        yield str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")
    for where, text in parser_texts(build_parser()):
        yield f"help of `{where}`", text
    before, _, block = (ROOT / "README.md").read_text(encoding="utf-8").partition(BEGIN)
    yield "README.md (outside the generated block)", before + block.partition(END)[2]
    for page in ("results/README.md", "benchmarks/README.md", *(f"docs/{p.name}" for p in
                                                               sorted((ROOT / "docs").glob("*.md")))):
        if page not in GENERATED:
            yield page, (ROOT / page).read_text(encoding="utf-8")
    for folder in ("harness", "benchmarks"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for line, text in python_prose(path):
                yield f"{path.relative_to(ROOT)}:{line}", text
    for path in sorted([*(ROOT / "benchmarks").rglob("*.sh"), *(ROOT / "benchmarks").rglob("*.txt")]):
        for line, text in hash_comments(path):
            yield f"{path.relative_to(ROOT)}:{line}", text


def test_no_prose_of_the_project_types_a_measured_number():
    found = [f"{where}: {name}: …{words}…" for where, text in prose()
             for name, words in typed_measurements(text, cards=where.split(":")[0] not in CARD_DATA)]
    assert not found, ("measured numbers typed by hand (name the record or generated page that holds them "
                       "instead; the rule is this module's docstring):\n" + "\n".join(found))


def test_the_patterns_catch_measurements():
    measured = ["steps run 1.2-1.4x faster", "a clip decodes 1.4-2x faster for some 10% more bytes",
                "~40% fewer frames", "cores ran about 20% faster", "43-45% top-1 at the proxy",
                "near chance (loss 2.2 of 2.48)", "took 1.12-1.26x their predicted compute",
                "compiles in about 46 s on an H100", "whose profile predicts 3.76x at paper scale",
                "about 420 s of steps", "12.5 ms per step", "a gain of 1.2 points", "its H100 reference",
                "recorded on H100s", "≈ 42 GB", "81.0% top-1 at 64 GFLOPs",
                "multigrid 4.5× faster at paper scale on 8 GPUs", "at the paper's shapes, steps run 1.3x faster",
                "its loss had gone from 2.5 to 15"]
    missed = [text for text in measured if not list(typed_measurements(text))]
    assert not missed, f"the patterns miss these measurements: {missed}"


def test_the_patterns_leave_settings_shapes_and_the_papers_numbers():
    settings = ["margin: 1", "max_epoch: 40", "clips of 16x224^2", "kinetics_main 0 baseline_1.0x",
                "Figure 3's 1.0× baseline", "2× the fast width", "each distinct 30-70% of the video",
                "gains at most 3 points of the baseline's top-1", "a compiled step only where its compile time is at "
                "most 2% of the run's predicted steps", "60 s left", "keyframe interval (250 frames)",
                "the paper's \"3.4× fewer iterations\"", "the paper reports 4.5x faster training",
                'e.g. "NVIDIA H200"', "caps validation top-1 at 1 - p", "within 2x the source's storage",
                "the profile's prediction x 1.25", "the one-sided 95% lower bound",
                "Paper: multigrid 5.7× faster.", "Paper: baseline ≈ 112k iterations on 128 P100s",
                "Source: Li et al., CVPR 2022 (200 epochs, LR 1.6e-3 per 512 clips; 81.0% top-1)"]
    flagged = [(text, list(typed_measurements(text))) for text in settings if list(typed_measurements(text))]
    assert not flagged, f"the patterns flag settings, shapes or the paper's numbers: {flagged}"
