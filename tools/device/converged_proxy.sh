#!/bin/bash
# Every GPU (or those GPUS names), one run per GPU: proxy-scale runs in priority order (tools/device/converged_proxy.jobs:
# kinetics_main and kinetics_ablation; or the file JOBS names, e.g. five_suites.jobs), one per GPU at a time, within the call's
# time. Call it again to continue: recorded runs are skipped, a run cut off resumes from its last epoch checkpoint
# (outputs/ stays on a warm machine). Each run generates its synthetic data where it is not there yet (runs of
# different datasets side by side, under a lock per dataset). First call: profiles the shapes of every suite in the job
# file (CUDA graphs) on the last GPU before it takes jobs (PROFILE=0 skips that where results/profile already holds
# the same GPU's profile).
# Records come back in converged.tgz (results folder layout), and each as soon as it is written in $OUT/done/.
source tools/device/_setup.sh "$1"
budget=${2:-585}  # seconds from the clock's start (about 2 s into a call) to the last run's end; the tarball takes ~1 s
res=/root/res; mkdir -p $res/profile $res/claims
jobs=${JOBS:-tools/device/converged_proxy.jobs}
suites=$(job_suites "$jobs")
for suite in $suites; do [ -d results/$suite ] && cp -rn results/$suite $res/; done
rm -rf $res/claims/*  # claims are per call: a run cut off by the last call is taken again
ngpu=$(nvidia-smi -L | wc -l)
card=$(nvidia-smi --query-gpu=name --format=csv,noheader | grep -o 'H[0-9]\+' | head -1 | tr H h)
profile() {  # the compute-only bound of every suite, on the last GPU before it trains (first call only); a suite
  # whose profile on this kind of card is committed (results/profile/proxy_cuda_graphs_<card>/) is not timed again
  [ -f $res/profile/.done ] || [ "${PROFILE:-1}" = 0 ] && return
  for suite in $suites; do
    [ -f results/profile/proxy_cuda_graphs_$card/$suite.json ] && continue
    CUDA_VISIBLE_DEVICES=$1 python3 -m harness profile --suite $suite --scale proxy --step cuda_graphs \
      --out $res/profile/$suite.json > $res/profile/$suite.log 2>&1
  done
  touch $res/profile/.done; el profiled
}
expected() {  # seconds a run of suite $1, variant $2 takes: the longest recorded attempt (any seed), else this card's
  # profile's prediction x 1.25 (runs took 1.12-1.26x their predicted compute: capture, evaluation, checkpoints), else 0
  python3 -c "import glob, json, sys
t = [json.load(open(f)).get('outside_steps', {}).get('total_s') or 0 for f in glob.glob(sys.argv[1])]
if not t:
    try:
        t = [r['predicted_gpu_hours'] * 3600 * 1.25 for r in json.load(open(sys.argv[2]))['runs'] if r['variant'] == sys.argv[3]]
    except (OSError, ValueError, KeyError, TypeError):
        pass
print(int(max(t, default=0)) + 30)" "$res/$1/proxy/$2__*.json" "results/profile/proxy_cuda_graphs_$card/$1.json" "$2" \
    2>/dev/null || echo 0
}
reproduce_job() {  # $1: GPU, then suite seed variant overrides and any further reproduce flags: one job, as the
  # worker runs it, within the call's time; its output in $res/job<GPU>.log (the last job's) and the worker's log
  local gpu=$1 suite=$2 seed=$3 variant=$4 overrides=$5 rc; shift 5
  CUDA_VISIBLE_DEVICES=$gpu timeout $(left $budget) python3 -m harness reproduce --suite $suite --scale proxy \
    --results $res --no-report --seeds $seed --only $variant "$@" -- $overrides < /dev/null > $res/job$gpu.log 2>&1
  rc=$?; cat $res/job$gpu.log >> $res/worker$gpu.log; return $rc
}
keep_new_records() {  # each record written since the call began, also as a loose file under $OUT/done/ (results
  # layout): the tarball is made at the end, and a call cut off before it would lose the runs it finished
  (cd $res && find . -name claims -prune -o -name '*.json' -newer $call_start -print | while read -r f; do
    mkdir -p "$OUT/done/$(dirname "$f")" && cp -n "$f" "$OUT/done/$f"; done)
}
call_start=/root/call_start; touch $call_start
# The job lines recorded already, asked in one process (tools/device/recorded_jobs.py, which resolves the runs as
# reproduce does) rather than by a harness start per line as a worker would (`--prepare-only` says "recorded
# already"): at a call's start every line fits its time, and those starts took a call a minute or two. Lines with
# overrides are still checked by the harness itself.
recorded=/root/recorded.txt
python3 tools/device/recorded_jobs.py "$jobs" $res > $recorded || : > $recorded  # else every line is asked
el "$(wc -l < $recorded) job lines recorded already"
worker() {  # $1: GPU; takes the next unclaimed job line (suite seed variant [key=value ...]) until none is left; a
  # job that another seed's record or the profile says cannot finish in the time left is left to the next call (a
  # run cut off by the call's end is lost with the machine: a call made at once after another may still get a fresh
  # one). Its inputs (synthetic data, frame cache, pre-trained stand-in; shared by the dataset's jobs, under their
  # locks) are made first, and the run starts only if it can still finish once they are ready.
  while read -r suite seed variant overrides; do
    [ -z "$suite" ] || [ "${suite:0:1}" = "#" ] && continue
    [ -z "$overrides" ] && grep -qx "$suite $seed $variant" $recorded && continue
    [ "$(expected $suite $variant)" -gt "$(left $budget)" ] && continue
    mkdir "$res/claims/$suite-$seed-$variant-${overrides//[\/ ]/_}" 2>/dev/null || continue  # one folder: no / in it
    [ "$(left $budget)" -lt 20 ] && break
    reproduce_job $1 $suite $seed $variant "$overrides" --prepare-only
    grep -q "recorded already" $res/job$1.log && continue  # a recorded run: no second start for it
    if [ "$(expected $suite $variant)" -gt "$(left $budget)" ]; then
      el "gpu $1: $suite $variant seed $seed $overrides inputs ready, left to the next call"; continue
    fi
    [ "$(left $budget)" -lt 20 ] && break
    reproduce_job $1 $suite $seed $variant "$overrides"
    el "gpu $1: $suite $variant seed $seed $overrides exit $?"
    keep_new_records
  done < "$jobs"
}
gpus=(${GPUS:-$(seq 0 $((ngpu - 1)))})  # GPUS="1 2": only those, e.g. beside a measurement on GPU 0
for g in "${gpus[@]:0:${#gpus[@]}-1}"; do worker $g & done
(profile ${gpus[-1]}; worker ${gpus[-1]}) &
wait
el done
grep -h "done in\|FAILED\|Error" $res/worker*.log | tail -40
tar czf $OUT/converged.tgz --exclude=claims -C /root res
