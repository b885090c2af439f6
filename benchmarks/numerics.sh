#!/bin/bash
# The GPU tests: first whether each fast path `auto` may pick trains as the default does on this card
# (tests/integration/test_fast_path_numerics.py, its passes recorded), then every other GPU test, until SECONDS
# have passed. DDP tests need two GPUs and skip on one.
#
# Usage: bash benchmarks/numerics.sh OUT_DIR SECONDS
# Records: results/numerics/fast_paths.json of this checkout (the test adds each passing path on this card: commit
# it), OUT_DIR/numerics.log and OUT_DIR/gpu_tests.log.
here=$(dirname "$0")
source "$here/_common.sh"
need_gpus 1
HARNESS_RECORD_NUMERICS=1 timeout "$(left)" python3 -m pytest -q -rs -m gpu -p no:cacheprovider \
  tests/integration/test_fast_path_numerics.py > "$OUT/numerics.log" 2>&1
el "numerics exit $?"; tail -4 "$OUT/numerics.log"
enough 30 "the other GPU tests" || exit 0
timeout "$(left)" python3 -m pytest -q -rs -m gpu -p no:cacheprovider tests \
  --ignore=tests/integration/test_fast_path_numerics.py > "$OUT/gpu_tests.log" 2>&1
el "GPU tests exit $?"; tail -8 "$OUT/gpu_tests.log"
