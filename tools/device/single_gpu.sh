#!/bin/bash
# One GPU: step-mode tests, a graphed smoke run, paper-scale profile (eager, CUDA graphs), step throughput.
source tools/device/_setup.sh "$1"
timeout 170 python3 -m pytest -q -x tests/integration/test_step_modes.py tests/unit/test_models.py -k "gpu or step" \
  -p no:cacheprovider > $OUT/gpu_tests.log 2>&1; tail -4 $OUT/gpu_tests.log; el tests
for step in eager cuda_graphs; do
  timeout 110 python3 -m harness profile --suite kinetics_ablation --step $step --out $OUT/profile_ka_$step.json 2>&1 \
    | grep -v "shape/s" | tail -8; el profile $step
done
timeout 90 python3 -m harness throughput --modes plain eager eager_autotuned cuda_graphs --out $OUT/throughput.json \
  2>&1 | grep -v "step mode/s" | tail -18; el throughput
timeout $(left 570) python3 -m harness throughput --modes eager compile --batches 8 --out $OUT/throughput_compile.json \
  2>&1 | grep -v "step mode/s" | tail -6; el compile
