#!/bin/bash
# Tables 5 and 6 as the paper trains them, fine-tuned from a Kinetics model, until SECONDS have passed.
#
# Usage: bash benchmarks/kinetics_finetune.sh OUT_DIR SECONDS
#
# First the stand-in for PySlowFast's Kinetics-400 SlowFast: the k400_slowfast_r50_16x8 recipe's baseline trained
# on the proxy's Kinetics-like video at proxy scale (one GPU, its time in the stand-in's record; started again with
# the same OUT_DIR it resumes from its checkpoints), its final weights kept in OUT_DIR/kinetics_standin/. Meanwhile
# the fine-tunes' inputs are made (synthetic video, frame caches). Then, in the time left, the jobs of
# benchmarks/jobs/kinetics_finetune.txt (ssv2 and charades runs with model.pretrained= the stand-in,
# model.fresh_classifier=true) through converged_proxy.sh, one run per GPU. The stand-in's path is part of the
# runs' settings, hence of their run ids: keep OUT_DIR for every start of one series.
# Records: OUT_DIR/kinetics_standin_record.json (the stand-in's run) and OUT_DIR/results/<suite>/proxy/. They are
# another setting than the suites' runs from scratch: keep them apart (results/finetuned_from_kinetics/<suite>/proxy/,
# the stand-in's as results/finetuned_from_kinetics/kinetics_standin.json) and report them with `harness report
# --suite ssv2 --suite charades --results results/finetuned_from_kinetics --out reports/finetuned_from_kinetics`.
here=$(dirname "$0")
source "$here/_common.sh"
need_gpus 1
OUT=$(cd "$OUT" && pwd)  # the stand-in's path goes into the runs' settings: an absolute one
standin=$OUT/kinetics_standin/kinetics-like-proxy-slowfast_r50_16x8.pt
run=$OUT/kinetics_standin/run
jobs=$OUT/kinetics_finetune.txt
sed "s|{standin}|$standin|g" "$here/jobs/kinetics_finetune.txt" > "$jobs"
prepare_finetunes() {  # CPU work under the datasets' locks, so the fine-tunes start training at once
  for suite in $(job_suites "$jobs"); do
    timeout "$(left)" harness reproduce --suite $suite --scale proxy --results "$OUT/results" --no-report \
      --seeds 0 --only baseline --prepare-only < /dev/null >> "$OUT/prepare_finetunes.log" 2>&1
    el "$suite inputs ready (exit $?)"
  done
}
if [ ! -f "$standin" ]; then
  prepare_finetunes &
  timeout "$(left)" harness train recipe=k400_slowfast_r50_16x8 scale=proxy multigrid.long_cycle=false \
    multigrid.short_cycle=false output_dir="$run" resume=true > "$OUT/kinetics_standin.log" 2>&1
  el "kinetics stand-in exit $?"; grep -v "it/s" "$OUT/kinetics_standin.log" | tail -2
  if [ -f "$run/record.json" ]; then
    cp "$(ls "$run"/checkpoints/checkpoint_*.pt | tail -1)" "$standin.tmp" && mv "$standin.tmp" "$standin"
    cp "$run/record.json" "$OUT/kinetics_standin_record.json"
  fi
  wait
fi
[ -f "$standin" ] || { el "the stand-in is not trained yet: start again with the same OUT_DIR (it resumes)"; exit 0; }
PROFILE=0 bash "$here/converged_proxy.sh" "$OUT" "$(left)" "$jobs"
