#!/bin/bash
# One GPU: the sub-batch BN kernels of IMPL (triton, the default: Triton kernels whose launches skip Triton's
# per-launch dispatch, harness/models/triton_launch.py; or cuda_cpp: CUDA C++ kernels behind a C++ autograd function,
# harness/models/cuda_bn.py, built here on first use) eagerly. Their GPU tests, the host's time per BN layer
# (bn_host_cost.py, every implementation), then `harness profile --scale paper --step eager --sub-batch-bn IMPL
# --plain-bn` (every sub-batch shape also timed with plain BN) for each suite in SUITES within the time left, then the
# same under CUDA graphs for each suite in GRAPHED (default: the first of SUITES). REPEATS timed steps per shape
# (default 10, after WARMUP, default 3; eager steps of small shapes are host-bound and vary more). HOST_COST=0 skips
# bn_host_cost.py. Back in $OUT: gpu_tests.log, bn_host_cost.json, profile_<step>_<suite>.json.
source tools/device/_setup.sh "$1"
budget=${2:-560}
impl=${IMPL:-triton}
suites=${SUITES-kinetics_ablation kinetics_models ssv2 charades}
graphed=${GRAPHED-${suites%% *}}
if [ "$impl" = cuda_cpp ]; then
  tests=(tests/unit/test_cuda_bn.py tests/unit/test_multigrid_bn.py -k "cuda_bn or cuda_cpp")
else
  tests=(tests/unit/test_triton_launch.py tests/unit/test_multigrid_bn.py -k "triton or direct")
fi
timeout 300 python3 -m pytest -q -rs "${tests[@]}" -m gpu -p no:cacheprovider --durations=3 > $OUT/gpu_tests.log 2>&1
tail -8 $OUT/gpu_tests.log; el tests
if [ "${HOST_COST:-1}" != 0 ]; then
  # (its output to a file first: a pipe closed early by head would stop it before it writes the record)
  timeout 150 python3 tools/device/bn_host_cost.py $OUT/bn_host_cost.json > $OUT/bn_host_cost.log 2>&1
  head -16 $OUT/bn_host_cost.log; el host cost
fi
profile() {  # $1 step, $2 suite
  [ "$(left $budget)" -lt 100 ] && { el "no time for $1 $2"; return; }
  timeout $(left $budget) python3 -m harness profile --suite $2 --scale paper --step $1 --sub-batch-bn $impl \
    --plain-bn --repeats ${REPEATS:-10} --warmup ${WARMUP:-3} --out $OUT/profile_$1_$2.json 2>&1 | grep -v "shape/s" | tail -14
  el "profile $1 $2"
}
for suite in $suites; do profile eager $suite; done
for suite in $graphed; do profile cuda_graphs $suite; done
