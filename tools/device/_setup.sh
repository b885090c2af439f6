# Sourced by the scripts here: wheels, paths, provenance, NCCL settings, a clock.
# Records name the commit given: only a whole hash (git rev-parse HEAD) names one, a mistyped short one names none.
[[ "$1" =~ ^[0-9a-f]{40}$ ]] || { echo "give the commit these files are at as its whole hash (git rev-parse HEAD), not '$1'"
  exit 2; }
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HARNESS_DATA_DIR=/root/hdata HARNESS_COMMIT=$1
# Installed once per machine: scripts that run side by side (one per GPU) source this at the same time, and two
# installs into one folder at once would break each other's files.
[ -f /tmp/site/.installed ] || { python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl 2>/dev/null && touch /tmp/site/.installed; }
# Stop at once, not after a call's worth of failing runs, where the wheels did not come (run
# ../shared/tools/device-wheels.sh --nvdec here and carry .whl).
python3 -c "import av, fvcore, hydra, omegaconf, tqdm" 2>/dev/null || {
  echo "the machine lacks the project's dependencies: fetch them into .whl (see tools/device/README.md) and carry .whl"
  exit 3; }
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1  # no NVLink multicast
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
t0=$(date +%s)
el() { echo "[$(( $(date +%s) - t0 ))s] $*"; }
left() { echo $(( ${1:-575} - ($(date +%s) - t0) )); }
job_suites() { grep -v '^#' "$1" | awk 'NF {print $1}' | sort -u; }  # the suites a job file's lines name
