# Sourced by the shell benchmarks here: the arguments OUT_DIR and SECONDS, the clock of that budget, and the GPUs.
# The sourcing script's leading comment is its --help.
if [ "$1" = -h ] || [ "$1" = --help ]; then
  awk 'NR > 1 && /^#/ {sub(/^# ?/, ""); print; next} NR > 1 {exit}' "$0"; exit 0
fi
if [ $# -lt 2 ] || ! [[ "$2" =~ ^[0-9]+$ ]]; then
  echo "usage: bash $0 OUT_DIR SECONDS ${ARGS_USAGE:-} (--help says more)" >&2; exit 2
fi
OUT=$1 budget=$2
shift 2
mkdir -p "$OUT" || exit 2
export PYTHONUNBUFFERED=1
t0=$(date +%s)
el() { echo "[$(( $(date +%s) - t0 ))s] $*"; }  # a log line with the seconds since the start
left() {  # seconds left of the budget (or of its first $1 seconds), at least 1: `timeout 0` would mean no limit
  local s=$(( ${1:-$budget} - ($(date +%s) - t0) )); echo $(( s > 0 ? s : 1 ))
}
enough() { [ "$(left)" -ge "$1" ] || { el "no time left for $2"; return 1; }; }  # $1 seconds left, else skip $2
gpu_count() { nvidia-smi -L 2>/dev/null | grep -c '^GPU'; }
need_gpus() {  # stop before anything starts where this host has fewer than $1 GPUs
  local n; n=$(gpu_count)
  [ "$n" -ge "$1" ] || { echo "$(basename "$0") needs $1 GPU(s); this host has $n" >&2; exit 3; }
}
card() {  # the kind of GPU as the records' folder names write it, e.g. h100, h200, a100
  local name; name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
  echo "$name" | grep -o '[A-Z][0-9]\+' | head -1 | tr 'A-Z' 'a-z' | grep . || echo gpu
}
job_suites() { grep -v '^#' "$1" | awk 'NF {print $1}' | sort -u; }  # the suites a job list's lines name
throughput() {  # $1: the record's name; the rest: harness throughput arguments. OUT_DIR/throughput_<name>.json
  local name=$1; shift
  enough 30 "throughput $name" || return
  timeout "$(left)" harness throughput "$@" --out "$OUT/throughput_$name.json" > "$OUT/throughput_$name.log" 2>&1
  el "throughput $name exit $?"; grep -v "step mode/s" "$OUT/throughput_$name.log" | grep -v "^    " | tail -30
}
