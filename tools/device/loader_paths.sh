#!/bin/bash
# One GPU host: every loader path on Kinetics-like video beside what the trainer consumes at each planned shape of
# the default recipe (SlowFast R50 8x8, multigrid), and the speedup predicted with each path.
# How PyAV's demux, decode and the project's clip reader scale with processes (pyav_scaling.py); PyAV on the
# source and on a prepared copy (a keyframe every 16 frames), the decoded-frame cache; then
# `harness profile --data` for the best path (the profile times the recipe's shapes; it needs no data) within 2x the source's storage. Back in $OUT (data_bench.json,
# profile*.json, logs).
source tools/device/_setup.sh "$1"
cores=$(nproc); w=$((cores - 1))
data="data.name=synthetic data.root=/root/kl data.num_classes=8 data.train_videos=64"
python3 -m harness data synth --preset kinetics-like --out /root/kl --workers $w --quiet | tail -1; el synth
python3 tools/device/pyav_scaling.py /root/kl $OUT/pyav_scaling.json 1 2 4 8 $w; el "pyav scaling"
python3 -m harness data prepare --out /root/kl-prepared --workers $w --quiet $data | tail -2; el prepared
python3 -m harness data cache --out /root/kl-cache --workers $w --quiet $data | tail -1; el cached
timeout 150 python3 -m harness profile --step cuda_graphs --out $OUT/profile.json 2>&1 | grep -v "shape/s" \
  | tail -3; el profile
timeout $(left 480) python3 -m harness data bench --clips 48 --workers 4,$w --cache /root/kl-cache \
  --prepared /root/kl-prepared --consumer $OUT/profile.json --out $OUT/data_bench.json $data 2>&1 | tail -16
el bench
path=$(python3 -c "import json; r=json.load(open('$OUT/data_bench.json'))
ok=[p for p in r['paths'] if (p['storage_ratio'] or 99) <= 2]
print(max(ok, key=lambda p: min(s['clips_per_s'] for s in p['shapes']))['name'])")
timeout $(left 570) python3 -m harness profile --step cuda_graphs --data $OUT/data_bench.json:$path \
  --out $OUT/profile_with_$path.json 2>&1 | grep -v "shape/s" | tail -3; el "profile with $path"
