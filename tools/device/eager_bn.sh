#!/bin/bash
# One GPU: the Triton sub-batch BN eagerly, where its launches skip Triton's per-launch dispatch
# (harness/models/triton_launch.py). The GPU tests of the direct launches and of the Triton BN, the host's time per
# BN layer (bn_host_cost.py), then `harness profile --scale paper --step eager --sub-batch-bn triton --plain-bn` (every
# sub-batch shape also timed with plain BN) for each suite in SUITES within the time left, then the same under CUDA
# graphs for the first suite. Back in $OUT: gpu_tests.log, bn_host_cost.json, profile_<step>_<suite>.json.
source tools/device/_setup.sh "$1"
budget=${2:-560}
suites=${SUITES:-kinetics_ablation kinetics_models ssv2 charades}
timeout 150 python3 -m pytest -q -rs tests/unit/test_triton_launch.py tests/unit/test_multigrid_bn.py -m gpu \
  -k "triton or direct" -p no:cacheprovider > $OUT/gpu_tests.log 2>&1; tail -4 $OUT/gpu_tests.log; el tests
# (its output to a file first: a pipe closed early by head would stop it before it writes the record)
timeout 120 python3 tools/device/bn_host_cost.py $OUT/bn_host_cost.json > $OUT/bn_host_cost.log 2>&1; head -12 $OUT/bn_host_cost.log
el host cost
profile() {  # $1 step, $2 suite
  [ "$(left $budget)" -lt 100 ] && { el "no time for $1 $2"; return; }
  timeout $(left $budget) python3 -m harness profile --suite $2 --scale paper --step $1 --sub-batch-bn triton \
    --plain-bn --out $OUT/profile_$1_$2.json 2>&1 | grep -v "shape/s" | tail -14
  el "profile $1 $2"
}
for suite in $suites; do profile eager $suite; done
profile cuda_graphs ${suites%% *}
