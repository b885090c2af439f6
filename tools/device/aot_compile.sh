#!/bin/bash
# One GPU: ahead-of-time compiled training forwards for every planned shape of kinetics_ablation's default multigrid
# run at proxy scale (tools/device/aot_compile_probe.py). Compiles each shape cold, one process per shape side by
# side, then one fresh process loads every artifact, captures it as train.step=compile_graphs does and times it
# against the eager step's CUDA graph, and loads one again in a background thread while a graph replays.
# Back in $OUT: make_N.log (one per shape), aot_compile_proxy.json, time.log.
source tools/device/_setup.sh "$1"
keys=$(python3 tools/device/aot_compile_probe.py keys "${SUITE:-kinetics_ablation}" "${VARIANT:-multigrid}" \
  "${SCALE:-proxy}")
echo "$keys"
i=0
for key in $keys; do  # Inductor's compile workers shared out among the processes
  TORCHINDUCTOR_COMPILE_THREADS=4 timeout $(left 400) python3 tools/device/aot_compile_probe.py make /tmp/aot "$key" \
    > $OUT/make_$i.log 2>&1 &
  i=$((i + 1))
done
wait
grep -h make_s $OUT/make_*.log; el made
timeout $(left 590) python3 tools/device/aot_compile_probe.py time /tmp/aot $OUT/aot_compile_proxy.json $keys \
  2>&1 | grep -v warn > $OUT/time.log
cat $OUT/time.log | tail -14; el timed
