#!/bin/bash
# Tables 5 and 6 as the paper trains them, fine-tuned from a Kinetics model. First the stand-in for PySlowFast's
# Kinetics-400 SlowFast: the k400_slowfast_r50_16x8 recipe's baseline trained on the proxy's Kinetics-like video at
# proxy scale (one GPU, about 420 s of steps on an H200; resumed from its checkpoints on a warm machine), its final
# weights kept as $STANDIN. Then, in the time left, the jobs of kinetics_finetune.jobs (ssv2 and charades runs with
# model.pretrained=$STANDIN) through converged_proxy.sh, one run per GPU. Back in $OUT: the stand-in's record
# (kinetics_standin_record.json) and log, and what converged_proxy.sh returns (converged.tgz). The fine-tuned records
# are another setting than the suites' runs from scratch: keep them apart (results/finetuned_from_kinetics/<suite>/proxy/)
# and report them with `harness report --results results/finetuned_from_kinetics --out reports/finetuned_from_kinetics`.
# Usage: bash tools/device/kinetics_finetune.sh COMMIT [SECONDS]
source tools/device/_setup.sh "$1"
budget=${2:-585}
STANDIN=/root/kinetics_standin/kinetics-like-proxy-slowfast_r50_16x8.pt  # the path kinetics_finetune.jobs names
run=/root/kinetics_standin/run
prepare_finetunes() {  # the fine-tunes' synthetic video and frame caches, made while the stand-in trains (CPU work,
  # under the datasets' locks), so the next call's runs start training at once
  for suite in $(job_suites tools/device/kinetics_finetune.jobs); do
    timeout $(left $budget) python3 -m harness reproduce --suite $suite --scale proxy --results /root/res \
      --no-report --seeds 0 --only baseline --prepare-only < /dev/null >> $OUT/prepare_finetunes.log 2>&1
    el "$suite inputs ready (exit $?)"
  done
}
if [ ! -f $STANDIN ]; then
  prepare_finetunes &
  timeout $(left $budget) python3 -m harness train recipe=k400_slowfast_r50_16x8 scale=proxy \
    multigrid.long_cycle=false multigrid.short_cycle=false output_dir=$run resume=true > $OUT/kinetics_standin.log 2>&1
  el "kinetics stand-in exit $?"; grep -v "it/s" $OUT/kinetics_standin.log | tail -2
  if [ -f $run/record.json ]; then
    cp "$(ls $run/checkpoints/checkpoint_*.pt | tail -1)" $STANDIN.tmp && mv $STANDIN.tmp $STANDIN
    cp $run/record.json $OUT/kinetics_standin_record.json
  fi
  wait
fi
[ -f $STANDIN ] || { el "the stand-in is not trained yet: call again on the warm machine (it resumes)"; exit 0; }
JOBS=tools/device/kinetics_finetune.jobs PROFILE=0 bash tools/device/converged_proxy.sh "$1" "$(left $budget)"
