#!/bin/bash
# Proxy-scale training runs from a job list, one run per GPU, as many at a time as there are GPUs, in the list's
# priority order, until SECONDS have passed.
#
# Usage: bash benchmarks/converged_proxy.sh OUT_DIR SECONDS [JOBS_FILE]
#   JOBS_FILE  one run a line, `SUITE SEED VARIANT [key=value ...]` (default benchmarks/jobs/converged_proxy.txt;
#              check one with `python benchmarks/jobs.py --check FILE`)
# Env: GPUS="1 2" uses only those GPUs (default all); PROFILE=0 skips the profiles below; PER_GPU=K trains K runs
#      at a time on each GPU (default 1): more seeds per GPU-hour for accuracy, while each record says it shared
#      its GPU (hardware.runs_sharing_gpu) and the reports leave its times out of every speedup.
#
# Records go to OUT_DIR/results/<suite>/proxy/ (the results/ layout), which starts as a copy of results/<suite>:
# lines recorded there are skipped. A run starts only if it is expected to finish in the time left (its longest
# recorded attempt, else the profile's prediction x 1.25); its inputs (synthetic data, frame cache, pre-trained
# stand-in) are made first, under a lock per dataset. Start it again with the same OUT_DIR to go on: recorded runs
# are skipped and a run the budget cut off resumes from its last epoch checkpoint (outputs/<suite>/). First the last
# GPU profiles every suite of the list whose proxy profile on this kind of card is not in results/ yet (CUDA graphs:
# OUT_DIR/results/profile/proxy_cuda_graphs_<card>/<suite>.json). Copy new records into results/ and commit them.
ARGS_USAGE="[JOBS_FILE]"
here=$(dirname "$0")
source "$here/_common.sh"
jobs=${1:-$here/jobs/converged_proxy.txt}
[ -f "$jobs" ] || { echo "no job list $jobs" >&2; exit 2; }
need_gpus 1
res=$OUT/results; card=$(card)
mkdir -p "$res/profile/proxy_cuda_graphs_$card" "$OUT/logs"
suites=$(job_suites "$jobs")
for suite in $suites; do [ -d results/$suite ] && cp -rn results/$suite "$res/"; done
claims=$OUT/claims; rm -rf "$claims"; mkdir -p "$claims"  # per start: a run cut off last time is taken again
profile_of() {  # the proxy profile of suite $1 on this kind of card: the committed one, else the one made here
  local committed=results/profile/proxy_cuda_graphs_$card/$1.json
  [ -f "$committed" ] && echo "$committed" || echo "$res/profile/proxy_cuda_graphs_$card/$1.json"
}
profile() {  # $1: GPU. The compute-only bound of every suite not profiled on this kind of card yet
  [ "${PROFILE:-1}" = 0 ] && return
  for suite in $suites; do
    [ -f "$(profile_of $suite)" ] && continue
    enough 60 "the $suite profile" || return
    CUDA_VISIBLE_DEVICES=$1 timeout "$(left)" harness profile --suite $suite --scale proxy --step cuda_graphs \
      --out "$(profile_of $suite)" > "$OUT/logs/profile_$suite.log" 2>&1
    el "profiled $suite (exit $?)"
  done
}
expected() {  # seconds a run of suite $1, variant $2 takes: the longest recorded attempt (any seed), else the
  # profile's prediction x 1.25, a margin for what a run spends outside its steps (capture, evaluation, checkpoints:
  # each record's outside_steps, beside its profile's prediction), else 0; 30 s more for the harness's start
  python3 -c "import glob, json, sys
t = [json.load(open(f)).get('outside_steps', {}).get('total_s') or 0 for f in glob.glob(sys.argv[1])]
if not t:
    try:
        runs = json.load(open(sys.argv[2]))['runs']
        t = [r['predicted_gpu_hours'] * 3600 * 1.25 for r in runs if r['variant'] == sys.argv[3]]
    except (OSError, ValueError, KeyError, TypeError):
        pass
print(int(max(t, default=0)) + 30)" "$res/$1/proxy/$2__*.json" "$(profile_of $1)" "$2" 2>/dev/null || echo 0
}
reproduce_job() {  # $1: slot (GPU[.K]), then suite seed variant overrides and any further reproduce flags: one job,
  # within the budget; its output in OUT_DIR/logs/job<slot>.log (the last job's), appended to worker<slot>.log
  local gpu=${1%%.*} slot=$1 suite=$2 seed=$3 variant=$4 overrides=$5 rc; shift 5
  HARNESS_RUNS_SHARING_GPU=${PER_GPU:-1} CUDA_VISIBLE_DEVICES=$gpu timeout "$(left)" harness reproduce --suite $suite --scale proxy --results "$res" \
    --no-report --seeds $seed --only $variant "$@" -- $overrides < /dev/null > "$OUT/logs/job$slot.log" 2>&1
  rc=$?; cat "$OUT/logs/job$slot.log" >> "$OUT/logs/worker$slot.log"; return $rc
}
# The lines recorded already, resolved in one process (benchmarks/jobs.py) rather than by a harness start per line;
# lines with overrides are checked by the harness itself (`--prepare-only` says "recorded already").
recorded=$OUT/recorded.txt
python3 "$here/jobs.py" --recorded "$jobs" --results "$res" > "$recorded" || : > "$recorded"
el "$(wc -l < "$recorded") job lines recorded already"
worker() {  # $1: slot (GPU[.K]). Takes the next unclaimed line until none is left; a run that cannot finish in the time left
  # (by its record or the profile, asked again once its inputs are made) is left to the next start
  while read -r suite seed variant overrides; do
    [ -z "$suite" ] || [ "${suite:0:1}" = "#" ] && continue
    [ -z "$overrides" ] && grep -qx "$suite $seed $variant" "$recorded" && continue
    [ "$(expected $suite $variant)" -gt "$(left)" ] && continue
    mkdir "$claims/$suite-$seed-$variant-${overrides//[\/ ]/_}" 2>/dev/null || continue  # one folder: no / in it
    [ "$(left)" -lt 20 ] && break
    reproduce_job $1 $suite $seed $variant "$overrides" --prepare-only
    grep -q "recorded already" "$OUT/logs/job$1.log" && continue  # a recorded run: no second start for it
    if [ "$(expected $suite $variant)" -gt "$(left)" ]; then
      el "gpu $1: $suite $variant seed $seed $overrides inputs ready, left to the next start"; continue
    fi
    [ "$(left)" -lt 20 ] && break
    reproduce_job $1 $suite $seed $variant "$overrides"
    el "gpu $1: $suite $variant seed $seed $overrides exit $?"
  done < "$jobs"
}
gpus=(${GPUS:-$(seq 0 $(( $(gpu_count) - 1 )))})
per_gpu=${PER_GPU:-1}
[[ "$per_gpu" =~ ^[1-9][0-9]*$ ]] || { echo "PER_GPU=$per_gpu: give a whole number of runs per GPU" >&2; exit 2; }
for g in "${gpus[@]}"; do
  for k in $(seq 2 "$per_gpu"); do worker "$g.$k" & done
done
for g in "${gpus[@]:0:${#gpus[@]}-1}"; do worker $g & done
(profile ${gpus[-1]}; worker ${gpus[-1]}) &
wait
el done
grep -h "done in\|FAILED\|Error" "$OUT"/logs/worker*.log 2>/dev/null | tail -40
