#!/bin/bash
# Suite profiles: every planned shape's training step timed on random clips, and each run's predicted wall-clock
# and speedup (`harness profile --suite`), for each step mode, sub-batch BN implementation and suite asked, until
# SECONDS have passed.
#
# Usage: bash benchmarks/profiles.sh OUT_DIR SECONDS
# Env: SUITES (default kinetics_ablation), SCALE (default paper), STEPS (default "cuda_graphs eager"), IMPLS
# (train.sub_batch_bn values, default auto), PLAIN_BN=0 leaves out timing every sub-batch shape with plain BN too,
# REPEATS and WARMUP (timed and untimed steps per shape, default harness profile's). Each profile starts only with
# 100 s left, in the order step, implementation, suite.
#   e.g. STEPS=eager IMPLS=triton SUITES="kinetics_ablation kinetics_models ssv2 charades": eager Triton kernels
#   IMPLS="triton auto": the sub-batch BN implementations side by side under CUDA graphs and eagerly
# Records: OUT_DIR/profile/<scale>_<step>_<card>[_<impl>]/<suite>.json (results/profile/), a log beside each.
here=$(dirname "$0")
source "$here/_common.sh"
need_gpus 1
scale=${SCALE:-paper} card=$(card)
for step in ${STEPS:-cuda_graphs eager}; do
  for impl in ${IMPLS:-auto}; do
    dir=$OUT/profile/${scale}_${step}_$card$([ "$impl" = auto ] || echo "_$impl"); mkdir -p "$dir"
    for suite in ${SUITES:-kinetics_ablation}; do
      enough 100 "$step $impl $suite" || continue
      timeout "$(left)" harness profile --suite $suite --scale $scale --step $step --sub-batch-bn $impl \
        $([ "${PLAIN_BN:-1}" = 0 ] || echo --plain-bn) ${REPEATS:+--repeats $REPEATS} ${WARMUP:+--warmup $WARMUP} \
        --out "$dir/$suite.json" > "$dir/$suite.log" 2>&1
      el "profile $step $impl $suite exit $?"; grep -v "shape/s" "$dir/$suite.log" | tail -14
    done
  done
done
