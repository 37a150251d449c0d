#!/usr/bin/env bash
# On a GPU machine: a quick run of every family under compute-sanitizer's memcheck, racecheck, initcheck
# and synccheck. Each tool's log goes to OUTDIR/sanitize_<tool>.log, one section per family; its last line
# says how many errors the tool found in all of them. Exits non-zero if any tool found one, failed, or ran
# out of time.
# usage: scripts/sanitize.sh OUTDIR [TOOL...]
# Environment: BUILD_DIR (default build), SANITIZE_SECONDS (time limit of each family under each tool,
# default 300), SANITIZE_TOTAL_SECONDS (time limit of the whole script: a process gets what is left of it
# if that is less, and one that would start after it is reported as not run; default none),
# SANITIZE_JOBS (how many processes at once, default 4 per GPU: one family under the four tools),
# SANITIZE_FAMILIES (an extended regex: only the families whose names it matches whole, e.g. 'Peer|AllHost'). With
# several GPUs the single-GPU families are spread over them; the multi-GPU families see every GPU.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:?usage: sanitize.sh OUTDIR [TOOL...]}
shift
tools=${*:-memcheck racecheck initcheck synccheck}
build=${BUILD_DIR:-$root/build}
limit=${SANITIZE_SECONDS:-300}
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
[ "$gpus" -ge 1 ] || gpus=1
jobs=${SANITIZE_JOBS:-$((4 * gpus))}
deadline=${SANITIZE_TOTAL_SECONDS:+$(( $(date +%s) + SANITIZE_TOTAL_SECONDS ))}
mkdir -p "$out"
cs=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
[ -n "$cs" ] || { echo "sanitize: compute-sanitizer not found"; exit 1; }

# Every family, at small sizes and one or two points per axis: every code path, not every case. Each
# family names its own selection (gpu_bench --families: name, scope, filter). Overlap's runs at 64 KiB: at
# its default sizes the calibration alone outlasts any sensible limit under initcheck.
families=()
scopes=()
while IFS=$'\t' read -r name scope filter; do
  families+=("$name=${filter:-^$name/}")
  scopes+=("$name=$scope")
done < <("$build/gpu_bench" --families)
[ ${#families[@]} -gt 0 ] || { echo "sanitize: $build/gpu_bench --families listed no family"; exit 1; }
scope_of() {
  local entry
  for entry in "${scopes[@]}"; do [ "${entry%%=*}" = "$1" ] && echo "${entry#*=}"; done
}
# One round: the sanitizer follows this process, not the rounds gpu_bench would start as processes of
# their own, and one pass over every case is what a check of the code needs.
args=(--rounds=1 --sizes=64K --benchmark_min_time=0.001 --gate_timeout_ms=600000)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# One process per tool and family, a family under every tool at once. More at once is slower, not faster:
# every process holds its own context on the one GPU and its gate kernels spin in turn (on an H100, 16 at
# once did not finish Transfer under memcheck in 113 s; with four at once, one per tool, memcheck covered
# every family in 134 s).
# gpu_bench's flags for one tool. Under initcheck a gated copy out of device memory did not finish before
# the time limit (on two H200s, every gated family with such a copy), and with --gate=off Transfer ran in
# 2 s: there the copy's enqueue waits for the GPU, which waits for the gate. The other three tools run gated
# and cover the gate itself.
tool_args() {
  [ "$1" = initcheck ] && echo --gate=off
  return 0
}
run_one() {
  local tool=$1 fam=$2 filter=$3 gpu=$4 log="$work/$1.$2" t0 rc left=$limit
  t0=$(date +%s)
  if [ -n "$deadline" ]; then
    left=$(( deadline - t0 < limit ? deadline - t0 : limit ))
    if [ "$left" -le 0 ]; then
      echo "not run: SANITIZE_TOTAL_SECONDS=$SANITIZE_TOTAL_SECONDS spent" >"$log"
      echo "late 0" >"$log.rc"
      return
    fi
  fi
  # The single-GPU families on one GPU each (spread by the caller), the multi-GPU ones on all of them.
  [ -n "$gpu" ] && export CUDA_VISIBLE_DEVICES=$gpu
  # No case: a multi-GPU family on too few GPUs is skipped; a single-GPU family's filter is wrong.
  if [ "$("$build/gpu_bench" --benchmark_list_tests --benchmark_filter="$filter" "${args[@]}" 2>/dev/null | grep -c .)" -eq 0 ]; then
    if [ "$(scope_of "$fam")" = multi_gpu ]; then
      echo "no case of $fam on this machine: it needs more GPUs" >"$log"
      echo "skip" >"$log.rc"
    else
      echo "no case of $fam: its filter selects nothing with ${args[*]}" >"$log"
      echo "empty 0" >"$log.rc"
    fi
    return
  fi
  # shellcheck disable=SC2046  # tool_args prints nothing or one word
  timeout --signal=INT "$left" "$cs" --tool "$tool" --error-exitcode 99 --print-limit 20 \
    "$build/gpu_bench" --benchmark_filter="$filter" "${args[@]}" $(tool_args "$tool") >"$log" 2>&1
  rc=$?
  echo "$rc $(( $(date +%s) - t0 ))" >"$log.rc"
}
if [ -n "${SANITIZE_FAMILIES:-}" ]; then
  chosen=()
  for entry in "${families[@]}"; do
    [[ ${entry%%=*} =~ ^(${SANITIZE_FAMILIES})$ ]] && chosen+=("$entry")
  done
  [ ${#chosen[@]} -gt 0 ] || { echo "sanitize: SANITIZE_FAMILIES='$SANITIZE_FAMILIES' matches no family"; exit 1; }
  families=("${chosen[@]}")
fi
slot=0
for entry in "${families[@]}"; do
  fam=${entry%%=*} gpu=""
  [ "$(scope_of "$fam")" = multi_gpu ] || gpu=$(( slot++ % gpus ))
  for tool in $tools; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
    run_one "$tool" "$fam" "${entry#*=}" "$gpu" &
  done
done
wait

status=0
for tool in $tools; do
  log="$out/sanitize_$tool.log"
  : >"$log"
  errors=0 bad="" ran=0 skipped=""
  for entry in "${families[@]}"; do
    fam=${entry%%=*}
    read -r rc secs <"$work/$tool.$fam.rc"
    {
      echo "=== $fam: gpu_bench --benchmark_filter='${entry#*=}' ${args[*]} $(tool_args "$tool")"
      cat "$work/$tool.$fam"
    } >>"$log"
    [ "$rc" = skip ] && skipped+=" $fam" && continue
    if [ "$rc" = empty ]; then
      bad+=" $fam (its filter selects no case)"
      continue
    fi
    # memcheck, initcheck and synccheck: "ERROR SUMMARY: N errors"; racecheck: "(N errors, M warnings)"
    partial=""
    n=$(grep -oE "ERROR SUMMARY: [0-9]+ error|\([0-9]+ errors" "$work/$tool.$fam" | grep -oE "[0-9]+" | tail -1)
    # A process stopped by its time limit prints no summary: count the error reports it printed (at most
    # --print-limit of them), so a log full of errors never reads as "no errors".
    if [ -z "$n" ]; then
      seen=$(grep -cE "^========= (Invalid|Uninitialized|Program hit|Host API memory access error|Race reported|Barrier error|Error)" "$work/$tool.$fam")
      [ "$seen" -gt 0 ] && n=$seen && partial=" (at least; stopped before its summary)"
    fi
    if [ "$rc" = late ]; then
      bad+=" $fam (not run: out of time)"
      echo "=== $fam: not run" >>"$log"
      continue
    elif [ "$rc" = 124 ]; then
      bad+=" $fam (timed out after $secs s${n:+, $n errors})"
    elif [ "$rc" != 0 ] || [ -z "$n" ]; then
      bad+=" $fam (exit $rc${n:+, $n errors})"
    fi
    errors=$(( errors + ${n:-0} )) ran=$(( ran + 1 ))
    echo "=== $fam: exit $rc, ${n:-no} errors${partial:-}, $secs s" >>"$log"
  done
  line="$tool: $errors errors over $ran families${skipped:+; skipped (too few GPUs):$skipped}${bad:+; failed:$bad}"
  echo "$line" | tee -a "$log"
  [ -z "$bad" ] && [ "$errors" -eq 0 ] || status=1
done
exit $status
