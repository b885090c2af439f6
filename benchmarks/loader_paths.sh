#!/bin/bash
# Every loader path on Kinetics-like video beside what the trainer consumes at each planned shape of the default
# recipe (SlowFast R50 8x8, multigrid), and the speedup predicted with the best one, until SECONDS have passed.
#
# Usage: bash benchmarks/loader_paths.sh OUT_DIR SECONDS
#
# Kinetics-like synthetic video (in OUT_DIR/video/), its prepared copy (`harness
# data prepare`), a second copy at a low short side and the frame cache; `harness profile` of the default recipe
# (CUDA graphs); `harness data bench` of every loader path (PyAV on the source and the prepared copies, the frame
# cache), its record rewritten after every shape; the profile again with the best path within 2x the source's
# storage (`--data`); with the time left, how PyAV's stages scale with processes (pyav_scaling.py).
# Env: CLIPS (default 360) distinct clips per shape and path; FRAME_STEP=K prepares the copy keeping every K-th
# frame; B_FRAMES=N codes N B-frames between references in every copy (default: harness data prepare's); LOW_RES=N
# (default 160, 0: none) adds a copy at short side N, read by the path pyav_prepared_low_res for clips of small
# scale-jitter draws (data.low_res_copies), keeping every LOW_RES_FRAME_STEP-th frame (default FRAME_STEP's) with a
# keyframe every LOW_RES_KEYFRAMES kept frames (default 16); CACHE=0 leaves out the frame cache.
# Records: OUT_DIR/data_bench.json (results/data_bench/), OUT_DIR/profile*.json (results/profile/loader/),
# OUT_DIR/pyav_scaling.json (results/loader/), logs beside them.
here=$(dirname "$0")
source "$here/_common.sh"
need_gpus 1
w=$(( $(nproc) - 1 ))
video=$OUT/video
data="data.name=synthetic data.root=$video/kl data.num_classes=8 data.train_videos=64"
harness data synth --preset kinetics-like --out $video/kl --workers $w --quiet | tail -1; el synth
harness data prepare --out $video/kl-prepared --workers $w --quiet ${FRAME_STEP:+--frame-step $FRAME_STEP} \
  ${B_FRAMES:+--b-frames $B_FRAMES} $data | tail -2; el prepared
low_res=${LOW_RES:-160} low_res_arg=""
if [ "$low_res" != 0 ]; then
  low_res_step=${LOW_RES_FRAME_STEP:-$FRAME_STEP}
  harness data prepare --out $video/kl-prepared-$low_res --short-side $low_res --workers $w --quiet \
    ${low_res_step:+--frame-step $low_res_step} --keyframe-interval ${LOW_RES_KEYFRAMES:-16} \
    ${B_FRAMES:+--b-frames $B_FRAMES} $data | tail -1
  el "prepared at short side $low_res"
  low_res_arg="--low-res $video/kl-prepared-$low_res"
fi
cache_arg=""
if [ "${CACHE:-1}" != 0 ]; then
  harness data cache --out $video/kl-cache --workers $w --quiet $data | tail -1; el cached
  cache_arg="--cache $video/kl-cache"
fi
enough 60 "the profile" || exit 0
timeout "$(left)" harness profile --step cuda_graphs --out "$OUT/profile.json" > "$OUT/profile.log" 2>&1
el "profile exit $?"; tail -3 "$OUT/profile.log"
# A fifth of the budget is kept for the profile with the best path and PyAV's scaling.
timeout "$(left $(( budget * 4 / 5 )))" harness data bench --clips ${CLIPS:-360} --workers $w $cache_arg \
  --prepared $video/kl-prepared $low_res_arg --consumer "$OUT/profile.json" --out "$OUT/data_bench.json" $data \
  > "$OUT/data_bench.log" 2>&1
el "bench exit $?"; grep -v "shape/s" "$OUT/data_bench.log" | tail -40
[ -f "$OUT/data_bench.json" ] || { echo "no data bench record"; exit 1; }
path=$(python3 -c "import json, sys; r = json.load(open(sys.argv[1]))
ok = [p for p in r['paths'] if (p['storage_ratio'] or 99) <= 2]
print(max(ok, key=lambda p: min(s['clips_per_s'] or 0 for s in p['shapes']))['name'])" "$OUT/data_bench.json") \
  || { echo "no loader path in the data bench record"; exit 1; }
enough 60 "the profile with $path" || exit 0
timeout "$(left)" harness profile --step cuda_graphs --data "$OUT/data_bench.json:$path" \
  --out "$OUT/profile_with_$path.json" 2>&1 | grep -v "shape/s" | tail -3; el "profile with $path"
enough 60 "PyAV's scaling" || exit 0
python3 "$here/pyav_scaling.py" $video/kl --out "$OUT" --seconds "$(left)" --processes 1 4 $w; el "pyav scaling"
