#!/bin/bash
# Four GPUs, one run per GPU: the converged-proxy runs of kinetics_main and kinetics_ablation in priority order
# (tools/device/converged_proxy.jobs, or the file JOBS names), one per GPU at a time, within the call's time. Call it again to continue:
# recorded runs are skipped, a run cut off resumes from its last epoch checkpoint (outputs/ stays on a warm
# machine). First call: generates the proxy data, then profiles both suites' shapes (CUDA graphs) on the last GPU
# before it takes jobs (PROFILE=0 skips that where results/profile already holds the same GPU's profile).
# Records come back in converged.tgz (results folder layout).
source tools/device/_setup.sh "$1"
budget=${2:-560}
res=/root/res; mkdir -p $res/profile $res/claims
cp -rn results/kinetics_main results/kinetics_ablation $res/ 2>/dev/null
rm -rf $res/claims/*  # claims are per call: a run cut off by the last call is taken again
ngpu=$(nvidia-smi -L | wc -l)
profile() {  # the compute-only bound of both suites, on the last GPU before it trains (first call only)
  [ -f $res/profile/kinetics_ablation.json ] || [ "${PROFILE:-1}" = 0 ] && return
  for suite in kinetics_main kinetics_ablation; do
    CUDA_VISIBLE_DEVICES=$1 python3 -m harness profile --suite $suite --scale proxy --step cuda_graphs \
      --out $res/profile/$suite.json > $res/profile/$suite.log 2>&1
  done
  el profiled
}
python3 -c "from harness.reproduce import prepare_synthetic; from harness.suite import load_scale; \
print(prepare_synthetic(load_scale('proxy')))" 2>&1 | grep -v "it/s\]" | tail -2
el data ready
worker() {  # $1: GPU; takes the next unclaimed job line until none is left or time runs out
  while read -r suite seed variant; do
    [ -z "$suite" ] || [ "${suite:0:1}" = "#" ] && continue
    mkdir $res/claims/$suite-$seed-$variant 2>/dev/null || continue
    [ "$(left $budget)" -lt 20 ] && break
    CUDA_VISIBLE_DEVICES=$1 timeout $(left $budget) python3 -m harness reproduce --suite $suite --scale proxy \
      --results $res --no-report --seeds $seed --only $variant < /dev/null >> $res/worker$1.log 2>&1
    el "gpu $1: $suite $variant seed $seed exit $?"
  done < "${JOBS:-tools/device/converged_proxy.jobs}"
}
for g in $(seq 0 $((ngpu - 2))); do worker $g & done
(profile $((ngpu - 1)); worker $((ngpu - 1))) &
wait
el done
grep -h "done in\|FAILED\|Error" $res/worker*.log | tail -40
tar czf $OUT/converged.tgz --exclude=claims -C /root res
