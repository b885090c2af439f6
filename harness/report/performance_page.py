"""docs/performance.md, generated: the decision page of the implementation options, every number in it read from
the record it cites. The decisions and their prose are here; each number is looked up by a selector of
harness.report.record_selectors, and each comparison a finding states is checked against its record (`claim`).
`python -m harness.report.performance_page docs/performance.md` writes the page; a test fails where the committed
page differs, and generating fails, naming the file, where a record no longer holds what a finding reads or says."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from harness.io import write_text_atomic
from harness.paths import CHECKOUT
from harness.report.record_selectors import NUMERICS, Records, claim, one
from harness.train.choose import COMPILE_SHARE_LIMIT

COMMAND = "python -m harness.report.performance_page docs/performance.md"
TIE = 0.02  # two step times or GPU-hours this close count as a tie
# auto's sub-batch BN layout: cuDNN per block up to this many groups, the interleaved layout beyond (BLOCK_SPLITS_EAGER
# and BLOCK_SPLITS_GRAPHED of harness.models.bn, which imports torch; a test holds the two equal).
BLOCK_SPLITS = {"eager": 2, "cuda_graphs": 4}
# The run named as an example of auto taking Triton's BN, on a card where its numerics test passed (a test checks that
# harness.train.choose picks it there).
EXAMPLE = {"suite": "kinetics_ablation", "scale": "paper", "variant": "multigrid", "card": "NVIDIA H200"}
SMALL_CLIP = {"t": 8, "s": 112}  # the short cycle's smallest clip, where BN layouts and loader paths are compared
SLOWFAST, I3D = "slowfast_r50_8x8", "i3d_r50"
BN_LAYOUTS = {"blocks": "cuDNN per block", "interleaved": "interleaved", "fused": "fused", "compiled": "compiled",
              "triton": "Triton"}  # the sub-batch modes of a `harness bn-bench` log, as findings name them
PROFILES, THROUGHPUT, DATA = "results/profile", "results/throughput", "results/data_bench"
ABLATION = "kinetics_ablation.json"


def _ms(value: float) -> str:
    return f"{value:.1f}"


def _hours(value: float) -> str:
    return f"{value:.2f}"


def _rate(value: float) -> str:
    return f"{value:,.0f}"


def _clip(t: int, s: int) -> str:
    return f"{t}×{s}² clips"


def _cards(cards: list[str]) -> str:
    return ", ".join(cards) or "none yet"


def _listed(items: list[Any]) -> str:
    words = [str(i) for i in items]
    return ", ".join(words[:-1]) + f" and {words[-1]}" if len(words) > 1 else "".join(words)


def _tie(a: float, b: float) -> bool:
    return abs(a / b - 1) <= TIE


def _table(head: str, rows: Iterator[list[str]]) -> list[str]:
    return [head, "|" + "---|" * head.count(" | ") + "---|", *("| " + " | ".join(row) + " |" for row in rows), ""]


def _paragraph(text: str) -> list[str]:
    return [*textwrap.wrap(text, 118, break_long_words=False, break_on_hyphens=False), ""]


# The sections. A row's last cell is the records its selectors read (Records.cited).


def _auto(rec: Records) -> list[str]:
    passed = "; ".join(f"on an {card}: {', '.join(f'`{path}`' for path in paths)}"
                       for card, paths in rec.passes().items()) or "none yet"
    rec.cited()
    return ["## How `auto` chooses", *_paragraph(
        "`train.step=auto` and `train.sub_batch_bn=auto` take, for the run's planned shapes on its card, the "
        "candidate the committed profiles predict fastest (`harness/train/choose.py`): a compiled step only where "
        f"its compile time is at most {COMPILE_SHARE_LIMIT:.0%} of the run's predicted steps, and a fast path only "
        f"once its numerics test has passed on that card (`{NUMERICS}`; passed {passed}). Without a profile of the "
        "card, the defaults below stay. Every run record says what was chosen and why (`step.choice`).")]


def _step_rows(rec: Records) -> Iterator[list[str]]:
    graphs = rec.hours(f"{PROFILES}/paper_cuda_graphs/{ABLATION}", "H200", "multigrid", step="cuda_graphs")
    eager = rec.hours(f"{PROFILES}/paper/{ABLATION}", "H200", "multigrid", step="eager")
    claim(graphs < eager, f"{PROFILES}/paper_cuda_graphs/{ABLATION}", "CUDA graphs beat eager steps")
    yield ["`cuda_graphs`", "on a GPU (the default there)",
           f"H200, multigrid: {_hours(graphs)} GPU-hours against {_hours(eager)} with eager steps", rec.cited()]

    cards = rec.passed_cards("step=compile_graphs")
    profiled = rec.profiled_cards(cards, "compile_graphs", "auto")
    compiled = {model: rec.step(f"{THROUGHPUT}/h200_compile_graphs_{name}.json", "H200", model=model,
                                mode="compile_graphs", batch=8, pad_stem_channels=8)
                for model, name in ((I3D, "i3d"), (SLOWFAST, "slowfast"))}
    graphed = {model: rec.ms(f"{THROUGHPUT}/h200_step_modes.json", "H200", model=model, mode="cuda_graphs", batch=8)
               for model in compiled}
    pads = {row["pad_stem_channels"] for row in compiled.values()}
    claim(all(compiled[m]["ms_per_step"] < graphed[m] for m in compiled) and len(pads) == 1,
          f"{THROUGHPUT}/h200_step_modes.json", "compiled steps, stems padded alike, beat CUDA graphs")
    yield ["`compile_graphs`",
           f"where its numerics test passed (cards: {_cards(cards)}) and a profile times it (cards: "
           f"{_cards(profiled)}), compiling every planned shape in ≤ {COMPILE_SHARE_LIMIT:.0%} of the run's "
           "predicted steps (one GPU)",
           f"H200, batch 8: I3D {_ms(compiled[I3D]['ms_per_step'])} ms, SlowFast "
           f"{_ms(compiled[SLOWFAST]['ms_per_step'])} ms ({_ms(graphed[I3D])} and {_ms(graphed[SLOWFAST])} ms with "
           f"`cuda_graphs`; the compiled rows with stems padded to {pads.pop()}), after "
           f"{_ms(compiled[I3D]['setup_s'])} and {_ms(compiled[SLOWFAST]['setup_s'])} s of compiling per shape",
           rec.cited()]
    yield ["`eager`", "on a CPU", "portability: graphs need CUDA", rec.cited()]


def _sub_batch_rows(rec: Records) -> Iterator[list[str]]:
    groups = 8
    at = {"model": SLOWFAST, **SMALL_CLIP, "bn_splits": groups}
    blocks = {step: rec.shape_ms(f"{PROFILES}/bn_blocks_experiment/{step}_all_blocks.json", "H200", step, **at)
              for step in ("eager", "cuda_graphs")}
    interleaved = {"eager": rec.shape_ms(f"{PROFILES}/paper/{ABLATION}", "H200", "eager", **at),
                   "cuda_graphs": rec.shape_ms(f"{PROFILES}/paper_cuda_graphs/{ABLATION}", "H200", "cuda_graphs",
                                               **at)}
    claim(groups > max(BLOCK_SPLITS.values()) and all(blocks[k] > interleaved[k] for k in blocks),
          f"{PROFILES}/bn_blocks_experiment/eager_all_blocks.json", f"blocks are slower at {groups} groups")
    yield ["`auto`", "default",
           f"cuDNN per contiguous block of clips up to {BLOCK_SPLITS['eager']} groups ({BLOCK_SPLITS['cuda_graphs']} "
           f"under CUDA graphs), the reference's interleaved layout beyond: at {groups} groups blocks take "
           f"{_ms(blocks['eager'])} ms eager and {_ms(blocks['cuda_graphs'])} ms graphed against "
           f"{_ms(interleaved['eager'])} and {_ms(interleaved['cuda_graphs'])} ms interleaved (H200, "
           f"{_clip(**SMALL_CLIP)}); portable", rec.cited()]

    cards = rec.passed_cards("sub_batch_bn=triton")
    claim(EXAMPLE["card"] in cards, NUMERICS, f"sub_batch_bn=triton passed on an {EXAMPLE['card']}")
    hours = {}
    for card, triton, auto in (("H200", "paper_cuda_graphs_h200_bn_triton", "paper_cuda_graphs_h200_bn_auto"),
                               ("H100", "paper_cuda_graphs_h100_triton", "paper_cuda_graphs_h100")):
        hours[card] = [rec.hours(f"{PROFILES}/{folder}/{ABLATION}", card, "multigrid", step="cuda_graphs",
                                 sub_batch_bn=bn) for folder, bn in ((triton, "triton"), (auto, "auto"))]
        claim(hours[card][0] < hours[card][1], f"{PROFILES}/{triton}/{ABLATION}", f"Triton's BN wins on an {card}")
    same = f"{PROFILES}/paper_cuda_graphs_h200_bn_triton/{ABLATION}"
    claim(rec.commit(same) == rec.commit(f"{PROFILES}/paper_cuda_graphs_h200_bn_auto/{ABLATION}"), same,
          "the H200 pair was profiled at one commit")
    example = f"{EXAMPLE['suite']}'s {EXAMPLE['scale']}-scale {EXAMPLE['variant']} run on an {EXAMPLE['card']}"
    yield ["`triton`",
           f"`auto` takes it where its numerics test passed (cards: {_cards(cards)}) and the "
           f"profiles predict it faster, e.g. for {example}; opt-in elsewhere",
           f"under CUDA graphs, multigrid: {_hours(hours['H200'][0])} GPU-hours against {_hours(hours['H200'][1])} "
           f"with `auto` on an H200 (one commit), {_hours(hours['H100'][0])} against {_hours(hours['H100'][1])} on "
           "an H100", rec.cited()]


def _plain_bn_rows(rec: Records) -> Iterator[list[str]]:
    h100, h200 = f"{THROUGHPUT}/h100_plain_bn_impl.json", f"{THROUGHPUT}/h200_bn_stem.json"

    def pair(path: str, card: str, **fields: Any) -> tuple[float, float]:
        return tuple(rec.ms(path, card, **fields, plain_bn_impl=impl) for impl in ("triton", "cudnn"))

    eager = pair(h100, "H100", model=I3D, mode="eager", batch=8, pad_stem_channels=8)
    plain = pair(h200, "H200", model=I3D, mode="plain", batch=8)
    claim(eager[0] > eager[1] and plain[0] > plain[1], h100, "Triton's plain BN is slower in eager steps")
    yield ["`cudnn`", "default",
           f"portable; in eager steps at batch 8 Triton's is slower (I3D {_ms(eager[0])} against {_ms(eager[1])} ms "
           f"on an H100; {_ms(plain[0])} against {_ms(plain[1])} ms in the plain loop on an H200)", rec.cited()]

    graphs = {(card, batch): pair(path, card, model=I3D, mode="cuda_graphs", batch=batch, **pad)
              for card, path, pad in (("H100", h100, {"pad_stem_channels": 8}), ("H200", h200, {}))
              for batch in (8, 32)}
    slowfast = pair(h200, "H200", model=SLOWFAST, mode="cuda_graphs", batch=8)
    claim(all(t < c for t, c in [*graphs.values(), slowfast]), h200, "Triton's plain BN wins under CUDA graphs")
    gains = sorted(c / t for (card, _), (t, c) in graphs.items() if card == "H100")
    yield ["`triton`", "opt-in, with CUDA graphs",
           f"I3D under CUDA graphs, H100: {_ms(graphs['H100', 8][0])} against {_ms(graphs['H100', 8][1])} ms at "
           f"batch 8, {_ms(graphs['H100', 32][0])} against {_ms(graphs['H100', 32][1])} ms at batch 32 "
           f"({gains[0]:.2f}–{gains[-1]:.2f}×); H200: {_ms(graphs['H200', 8][0])} against "
           f"{_ms(graphs['H200', 8][1])} ms and {_ms(graphs['H200', 32][0])} against {_ms(graphs['H200', 32][1])} ms "
           f"(SlowFast {_ms(slowfast[0])} against {_ms(slowfast[1])} ms at batch 8)", rec.cited()]


def _stem_rows(rec: Records) -> Iterator[list[str]]:
    def padded(model: str) -> dict[str, tuple[float, float]]:
        """card -> (step ms with stems padded to 8, without) under CUDA graphs at batch 8."""
        return {card: tuple(rec.ms(path, card, model=model, mode="cuda_graphs", batch=8, pad_stem_channels=pad)
                            for pad in (8, 0))
                for card, path in (("H100", f"{THROUGHPUT}/h100_stem_padding.json"),
                                   ("H200", f"{THROUGHPUT}/h200_bn_stem.json"))}

    slowfast = padded(SLOWFAST)
    claim(all(_tie(*pair) for pair in slowfast.values()), f"{THROUGHPUT}/h200_bn_stem.json",
          "padding SlowFast's stem is a tie")
    yield ["`0`", "default",
           f"SlowFast's steps tie (within {TIE:.0%}) with padding under CUDA graphs: {_ms(slowfast['H100'][0])} "
           f"against {_ms(slowfast['H100'][1])} ms (H100, batch 8), {_ms(slowfast['H200'][0])} against "
           f"{_ms(slowfast['H200'][1])} ms (H200)", rec.cited()]
    i3d = padded(I3D)
    claim(all(p < u and not _tie(p, u) for p, u in i3d.values()), f"{THROUGHPUT}/h200_bn_stem.json",
          "padding I3D's stem wins")
    yield ["`8`", "opt-in",
           f"I3D under CUDA graphs, batch 8: {_ms(i3d['H100'][0])} against {_ms(i3d['H100'][1])} ms (H100), "
           f"{_ms(i3d['H200'][0])} against {_ms(i3d['H200'][1])} ms (H200)", rec.cited()]


def _loader_rows(rec: Records) -> Iterator[list[str]]:
    rec.cite(f"{DATA}/proxy_h200.json")
    yield ["frame cache (`data.cache`)", "the proxy's synthetic video: small enough to decode once",
           "multigrid's large batches of small clips need more clips per second than decoding gives", rec.cited()]
    paths = f"{DATA}/kinetics_like_paths_h200.json"
    prepared, source = (rec.loader_shape(paths, "H200", name, **SMALL_CLIP) for name in ("pyav_prepared", "pyav"))
    claim(prepared["clips_per_s"] > source["clips_per_s"] and prepared["workers"] == source["workers"], paths,
          "the prepared copy loads faster")
    yield ["PyAV on a prepared copy (`harness data prepare`)", "real datasets",
           f"{_rate(prepared['clips_per_s'])} against {_rate(source['clips_per_s'])} clips/s on the source videos "
           f"({_clip(**SMALL_CLIP)}, {prepared['workers']} workers, H200 host)", rec.cited()]
    low_res = f"{DATA}/kinetics_like_low_res_h200.json"
    small, full = (rec.loader_shape(low_res, "H200", name, **SMALL_CLIP)
                   for name in ("pyav_prepared_low_res", "pyav_prepared"))
    claim(small["clips_per_s"] > full["clips_per_s"] and small["workers"] == full["workers"], low_res,
          "low-resolution copies load faster")
    yield ["prepared low-resolution copies (`data.low_res_copies`)", "the short cycle's small shapes",
           f"{_rate(small['clips_per_s'])} against {_rate(full['clips_per_s'])} clips/s from the prepared copy alone "
           f"({_clip(**SMALL_CLIP)}, {small['workers']} workers)", rec.cited()]


def _retired_rows(rec: Records) -> Iterator[list[str]]:
    yield from _retired_decoders(rec)
    compile_ms = _compile_pairs(rec)
    claim(all(c > g for c, g in compile_ms.values()), f"{THROUGHPUT}/h200_compile.json",
          "compiled steps without graphs are slower")
    yield ["`train.step=compile`",
           f"slower than `compile_graphs` at a like compile time: H100, batch 8, I3D "
           f"{_ms(compile_ms['H100', I3D][0])} against {_ms(compile_ms['H100', I3D][1])} ms, SlowFast "
           f"{_ms(compile_ms['H100', SLOWFAST][0])} against {_ms(compile_ms['H100', SLOWFAST][1])} ms; H200 (stems "
           "padded in the `compile_graphs` rows only) I3D "
           f"{_ms(compile_ms['H200', I3D][0])} against {_ms(compile_ms['H200', I3D][1])} ms, SlowFast "
           f"{_ms(compile_ms['H200', SLOWFAST][0])} against {_ms(compile_ms['H200', SLOWFAST][1])} ms", rec.cited()]
    yield _retired_cuda_cpp(rec)
    yield from _retired_bn_layers(rec)
    rec.cite(f"{PROFILES}/bn_blocks_experiment/eager_all_blocks.json")
    rec.cite(f"{PROFILES}/bn_blocks_experiment/cuda_graphs_all_blocks.json")
    yield ["`train.sub_batch_bn=blocks`, `interleaved`",
           "the two layouts `auto` picks between by group count (see above): not options of their own", rec.cited()]
    timed = rec.holding("plain_bn_impl", "cuda_cpp")
    claim(not timed, ", ".join(timed), "no record times plain_bn_impl=cuda_cpp")
    rec.cite(f"{THROUGHPUT}/h100_plain_bn_impl.json")
    yield ["`train.plain_bn_impl=cuda_cpp`",
           "no record times it in training steps; Triton's kernels are the plain-BN path kept", rec.cited()]


def _compile_pairs(rec: Records) -> dict[tuple[str, str], tuple[float, float]]:
    """(card, model) -> (ms of compiled steps without graphs, with), batch 8, with the stem padding each record has:
    padded to 8 but for the H200's `compile` rows (made before the option)."""
    graphs = {("H100", I3D): "h100_compile_graphs.json", ("H100", SLOWFAST): "h100_compile_graphs.json",
              ("H200", I3D): "h200_compile_graphs_i3d.json", ("H200", SLOWFAST): "h200_compile_graphs_slowfast.json"}
    return {(card, model): (rec.ms(f"{THROUGHPUT}/{card.lower()}_compile.json", card, model=model, mode="compile",
                                   batch=8, pad_stem_channels=8 if card == "H100" else 0),
                            rec.ms(f"{THROUGHPUT}/{file}", card, model=model, mode="compile_graphs", batch=8,
                                   pad_stem_channels=8))
            for (card, model), file in graphs.items()}


def _retired_decoders(rec: Records) -> Iterator[list[str]]:
    paths = f"{DATA}/kinetics_like_paths_h200.json"
    rates = {name: rec.loader(paths, "H200", name) for name in ("nvdec", "nvdec_prepared", "pyav", "pyav_prepared")}

    def at(name: str, t: int, s: int) -> dict[str, Any]:
        return one(paths, rates[name], f"shapes of {name}", {"t": t, "s": s})

    slower = all(at(nv, row["t"], row["s"])["clips_per_s"] < row["clips_per_s"]
                 for nv, av in (("nvdec", "pyav"), ("nvdec_prepared", "pyav_prepared")) for row in rates[av])
    claim(slower, paths, "NVDEC is slower than PyAV at every planned shape")
    small = {name: at(name, **SMALL_CLIP) for name in rates}
    claim(len({row["workers"] for row in small.values()}) == 1, paths, "every path ran with the same workers")
    yield ["`data.decoder=nvdec`",
           f"NVDEC loads {_rate(small['nvdec']['clips_per_s'])} / {_rate(small['nvdec_prepared']['clips_per_s'])} "
           f"clips/s (source / prepared copy) against PyAV's {_rate(small['pyav']['clips_per_s'])} / "
           f"{_rate(small['pyav_prepared']['clips_per_s'])} with {small['pyav']['workers']} workers on an H200 host "
           f"({_clip(**SMALL_CLIP)}), and is slower than PyAV at every planned shape", rec.cited()]
    yield ["`data.decoder=torchcodec`", "no record where it is faster than PyAV; not a dependency", rec.cited()]


def _retired_cuda_cpp(rec: Records) -> list[str]:
    def hours(step: str, bn: str) -> float:
        return rec.hours(f"{PROFILES}/paper_{step}_h200_{bn}/{ABLATION}", "H200", "multigrid", step=step,
                         sub_batch_bn=bn)

    graphs, eager = ([hours(step, bn) for bn in ("cuda_cpp", "triton")] for step in ("cuda_graphs", "eager"))
    claim(_tie(*graphs) and eager[0] < eager[1], f"{PROFILES}/paper_cuda_graphs_h200_cuda_cpp/{ABLATION}",
          "the CUDA C++ kernels tie Triton's under CUDA graphs and win only in eager steps")
    return ["`train.sub_batch_bn=cuda_cpp`",
            f"under CUDA graphs, the GPU default, it ties Triton on an H200 at paper scale ({_hours(graphs[0])} "
            f"against {_hours(graphs[1])} GPU-hours); it wins only in eager steps ({_hours(eager[0])} against "
            f"{_hours(eager[1])}), which `auto` never takes on a GPU, and needs a CUDA compiler to build", rec.cited()]


BN_BENCH_LOGS = tuple(f"{PROFILES}/sub_batch_bn_bench_h100/bn_bench_{run}.log"
                      for run in ("39838469", "90f09e9", "e23189d4"))


def _retired_bn_layers(rec: Records) -> Iterator[list[str]]:
    """fused and compiled, from the one-BN-layer benchmarks: fused never wins; compiled wins at a few group counts."""
    logs = {path: rec.bn_layer_ms(path, "H100") for path in BN_BENCH_LOGS}
    groups = sorted({k for times in logs.values() for _, k in times})
    fastest = {(path, k): min((ms, mode) for (mode, kk), ms in times.items() if kk == k)
               for path, times in logs.items() for k in groups}
    claim(all(times["fused", k] > min(times["blocks", k], times["triton", k]) for times in logs.values()
              for k in groups), BN_BENCH_LOGS[0], "fused is never the fastest")
    yield ["`train.sub_batch_bn=fused`",
           f"slower for one BN layer than cuDNN per block or Triton at {_listed(groups)} groups in all "
           f"{len(logs)} H100 benchmarks", rec.cited()]

    wins = []
    for (path, k), (ms, mode) in fastest.items():
        if mode == "compiled":
            second_ms, second = min((t, m) for (m, kk), t in logs[path].items() if kk == k and m != "compiled")
            wins.append((path, f"{k} groups: {ms:.3g} against {second_ms:.3g} ms {BN_LAYOUTS[second]}"))
    for path in logs:
        rec.cite(path)
    never = [Path(path).name for path in logs if path not in {p for p, _ in wins}]
    claim(bool(wins), BN_BENCH_LOGS[0], "compiled is the fastest somewhere")
    timed = rec.holding("sub_batch_bn", "compiled")
    claim(not timed, ", ".join(timed), "no record times sub_batch_bn=compiled")
    in_none = f", at none in `{'`, `'.join(never)}`" if never else ""
    yield ["`train.sub_batch_bn=compiled`",
           f"the fastest single BN layer at {len(wins)} of the {len(logs) * len(groups)} group counts timed in "
           f"{len(logs)} H100 benchmarks ({'; '.join(win for _, win in wins)}){in_none}; no record times it in "
           "training steps", rec.cited()]


def performance_markdown(root: Path = CHECKOUT) -> str:
    """The page, from the records under `root` (EvidenceError where one no longer holds what a finding reads)."""
    rec = Records(root)
    lines = [
        "# Performance: what the defaults choose, and why", "",
        *_paragraph(
            f"Decisions only, generated from the records (`{COMMAND}`): every number is read from the record named "
            "beside it. The reports show the same measurements (each suite's \"Training steps\", \"Predicted "
            "paper-scale speedups\" and loader tables). An option stays only where a record shows it is the best "
            "choice on a card users have, or where it serves portability (a CPU); the others are retired (the last "
            "table) and setting one is an error that points here. The scripts that make these records on a GPU host "
            "are in `benchmarks/` (`benchmarks/README.md`). Times are per training step at the recipe's baseline shape "
            "unless a row says otherwise; GPU-hours are a `harness profile --suite kinetics_ablation` record's "
            "predicted paper-scale multigrid run."),
        *_auto(rec),
        "## Step mode (`train.step`)",
        *_table("| value | `auto` picks it | finding | records |", _step_rows(rec)),
        "## Sub-batch BN (`train.sub_batch_bn`)",
        *_table("| value | status | finding | records |", _sub_batch_rows(rec)),
        "## Plain BN (`train.plain_bn_impl`)",
        *_table("| value | status | finding | records |", _plain_bn_rows(rec)),
        "## Stems (`model.pad_stem_channels`)",
        *_table("| value | status | finding | records |", _stem_rows(rec)),
        "## Loader (`data.cache`, prepared copies, `data.low_res_copies`)",
        "PyAV decodes every clip, in the loader's workers.", "",
        *_table("| path | use | finding | records |", _loader_rows(rec)),
        "## Retired",
        *_table("| key=value | finding | records |", _retired_rows(rec)),
        "Records made with a retired value still load, report and keep their run ids (`harness.spec.RETIRED`).",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write the page to the file named, or to stdout."""
    argv = sys.argv[1:] if argv is None else argv
    text = performance_markdown()
    if not argv:
        sys.stdout.write(text)
        return 0
    write_text_atomic(Path(argv[0]), text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
