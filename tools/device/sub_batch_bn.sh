#!/bin/bash
# One GPU: sub-batch BN's implementations (train.sub_batch_bn) against plain BN at the paper's shapes.
# The GPU tests of every implementation (Triton kernels, fused blocks, compiled), then `harness profile --suite
# kinetics_ablation --scale paper --plain-bn` (every sub-batch shape also timed with plain BN) for each implementation
# in IMPLS (default: triton auto compiled) under CUDA graphs, and eagerly for the first; then one BN layer of each
# implementation at multigrid shapes (`harness bn-bench`). Back in $OUT (profile_<step>_<impl>.json, bn_bench.log, gpu_tests.log).
source tools/device/_setup.sh "$1"
impls=${IMPLS:-triton auto compiled}
timeout 150 python3 -m pytest -q -rs tests/unit/test_multigrid_bn.py -m gpu -k "${TESTS:-triton or fused or compiled}" -p no:cacheprovider \
  > $OUT/gpu_tests.log 2>&1; tail -4 $OUT/gpu_tests.log; el tests
runs="$(for i in $impls; do echo cuda_graphs:$i; done) eager:${impls%% *}"
for run in $runs; do
  step=${run%%:*}; impl=${run#*:}
  [ "$(left 570)" -lt 90 ] && { el "no time for $step $impl"; continue; }
  timeout $(left 570) python3 -m harness profile --suite kinetics_ablation --scale paper --step $step \
    --sub-batch-bn $impl --plain-bn --out $OUT/profile_${step}_$impl.json 2>&1 | grep -v "shape/s" | tail -8
  el "profile $step $impl"
done
for k in 2 4 8; do  # res2 of SlowFast's fast pathway at a short-cycle shape: 8k clips of 16x56^2 (post-stem)
  timeout 60 python3 -m harness bn-bench --batch $((8 * k)) --channels 32 --frames 16 --size 56 --splits $k \
    2>&1 | tail -8; done > $OUT/bn_bench.log; cat $OUT/bn_bench.log; el bn-bench
