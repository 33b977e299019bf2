#!/usr/bin/env bash
# Runs the Table 1 microbenchmark (bench/table1.c) for every configuration,
# all in this boot, and writes JSON lines to OUTFILE. Runs INSIDE the guest,
# as root (it changes system-wide THP settings and restores them at the end).
#
#   bench/table1.sh [-m MIB] [-r REPS] [-o OUTFILE] [-b BINARY] [-c LABEL]...
#                   [-i IDLE -k CYCLES]
#
# -c picks configurations by label, in the order given (default: all of
# CONFIGS, in order).
# -i is the churn run: each configuration's program faults its
# buffer CYCLES times, IDLE seconds apart, with no untimed refill of
# HawkEye's pool (the run's default configurations are CHURN_CONFIGS).
# The configurations are interleaved: REPS rounds, each of which runs every
# configuration once (A B C A B C ...), so that a slow stretch of the host
# lands on all of them alike and round i of one configuration can be paired
# with round i of another (bench/table1_report.py's ratio spreads).
# OUTFILE is truncated, then gets one "env" line, and for each configuration
# and round one "config" line followed by the program's lines (its warm-up
# pass and the repetition, with "rep" set to the round).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
mib=1024 reps=10 out=results/raw/table1.jsonl bin=$here/../build/bench/table1
only=() idle= cycles=1
while getopts m:r:o:b:c:i:k: opt; do
	case $opt in
	m) mib=$OPTARG ;;
	r) reps=$OPTARG ;;
	o) out=$OPTARG ;;
	b) bin=$OPTARG ;;
	c) only+=("$OPTARG") ;;
	i) idle=$OPTARG ;;
	k) cycles=$OPTARG ;;
	*) echo "usage: $0 [-m MIB] [-r REPS] [-o OUTFILE] [-b BINARY] [-c LABEL]... [-i IDLE -k CYCLES]" >&2
	   exit 2 ;;
	esac
done

. "$here/lib.sh"
thp() { echo "$1" >$THP/enabled; }

# One configuration a line: "LABEL: setup commands". Each starts from
# reset (the settings found at boot) and then runs its commands. To add one
# (HawkEye-4KB, HawkEye-2MB, Ingens-90%, ...) add a line here, and undo
# anything new it sets in reset.
CONFIGS=(
	"Linux-4KB: thp never"
	"Linux-2MB: thp always"
	"Linux-2MB-seq: thp always; fault_clear 1"
	"Linux-2MB-nt: thp always; fault_clear 2"
	"HawkEye-4KB: thp never; prezero"
	"HawkEye-2MB: thp always; prezero"
	"Ingens-90%: thp always; ingens 90"
	"Linux-64KB: thp never; mthp 64"
	"HawkEye-64KB: thp never; mthp 64; prezero"
	"Linux-16KB: thp never; mthp 16"
	"HawkEye-16KB: thp never; mthp 16; prezero"
)
# The churn run's: zeroing paced to demand (the default) against the
# paper's fixed rate.
CHURN_CONFIGS=(
	"Linux-2MB: thp always"
	"HawkEye-2MB: thp always; prezero"
	"HawkEye-2MB-fixed: thp always; prezero fixed"
)

# One mTHP size (kB) on for anonymous faults; 2 MB stays as "thp" sets it.
mthp() {
	[ -f $THP/hugepages-${1}kB/enabled ] || { echo "table1.sh: no ${1} kB mTHP" >&2; exit 1; }
	echo always >$THP/hugepages-${1}kB/enabled
}

# HawkEye pre-zeroing on at its defaults: paced, the rate a cap for busy
# CPUs only, so the pool refills at memory speed between repetitions (table1
# -z waits for it, untimed; not in the churn run). "prezero fixed": the
# paper's fixed rate (paced 0) of 10000 pages a second.
PREZERO=/sys/kernel/mm/hawkeye/prezero
prezero() {
	[ -d $PREZERO ] || { echo "table1.sh: this kernel has no HawkEye pre-zeroing" >&2; exit 1; }
	if [ "${1:-}" = fixed ]; then
		echo 0 >$PREZERO/paced
		echo 10000 >$PREZERO/rate
	fi
	echo 1 >$PREZERO/enabled
	[ -n "$idle" ] || refill=-z
}

# The faster synchronous clears pre-zeroing is measured against: Linux
# 7.0's sequential whole-folio clear (1), and the same with non-temporal
# stores (2); 0 is 6.12's own.
fault_clear() {
	[ -f $PREZERO/fault_clear ] || { echo "table1.sh: this kernel has no prezero/fault_clear" >&2; exit 1; }
	echo "$1" >$PREZERO/fault_clear
}

PROMOTE=/sys/kernel/mm/hawkeye/promote INGENS=/sys/kernel/mm/hawkeye/ingens

orig_enabled=$(current $THP/enabled)
orig_defrag=$(current $THP/defrag)
orig_prezero_rate=$(cat $PREZERO/rate 2>/dev/null || echo 10000)
orig_prezero_paced=$(cat $PREZERO/paced 2>/dev/null || true)
orig_policy=$(current $PROMOTE/policy 2>/dev/null || true)
orig_util=$(cat $INGENS/util_threshold 2>/dev/null || true)
declare -A orig_mthp=()
for f in $THP/hugepages-*kB/enabled; do
	[ -f "$f" ] && orig_mthp[$f]=$(current "$f")
done
reset() {
	for f in "${!orig_mthp[@]}"; do
		echo "${orig_mthp[$f]}" >"$f"
	done
	echo "$orig_enabled" >$THP/enabled
	echo "$orig_defrag" >$THP/defrag
	if [ -d $PREZERO ]; then
		echo 0 >$PREZERO/enabled
		echo "$orig_prezero_rate" >$PREZERO/rate
		[ -z "$orig_prezero_paced" ] || echo "$orig_prezero_paced" >$PREZERO/paced
		[ ! -f $PREZERO/fault_clear ] || echo 0 >$PREZERO/fault_clear
	fi
	[ -z "$orig_policy" ] || echo "$orig_policy" >$PROMOTE/policy
	[ -z "$orig_util" ] || echo "$orig_util" >$INGENS/util_threshold
	refill=
}
trap reset EXIT

[ -x "$bin" ] || { echo "table1.sh: no binary $bin (build it with bench/run-table1)" >&2; exit 1; }
mkdir -p "$(dirname "$out")"
printf '{"type": "env", %s, "clocksource": "%s", "mem_total_kb": %s, "cpus": %s, "mib": %s, "reps": %s, "idle_s": %s, "cycles": %s, "thp_enabled_boot": "%s", "thp_defrag_boot": "%s"}\n' \
	"$(env_json)" "$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)" \
	"$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)" "$(nproc)" "$mib" "$reps" "${idle:-0}" "$cycles" \
	"$orig_enabled" "$orig_defrag" >"$out"

picked=()
if [ -n "$idle" ]; then defaults=("${CHURN_CONFIGS[@]}"); else defaults=("${CONFIGS[@]}"); fi
if [ ${#only[@]} -eq 0 ]; then
	picked=("${defaults[@]}")
else
	for label in "${only[@]}"; do
		for entry in "${CONFIGS[@]}" "${CHURN_CONFIGS[@]}"; do
			[ "${entry%%:*}" = "$label" ] && { picked+=("$entry"); break; }
		done
	done
fi
for ((round = 0; round < reps; round++)); do
	for entry in "${picked[@]}"; do
		label=${entry%%:*} setup=${entry#*:}
		reset
		eval "$setup"
		setup_json=${setup# } setup_json=${setup_json//\\/\\\\} setup_json=${setup_json//\"/\\\"}
		sync
		echo 3 >/proc/sys/vm/drop_caches
		echo 1 >/proc/sys/vm/compact_memory
		printf '{"type": "config", "label": "%s", "setup": "%s", "thp_enabled": "%s", "thp_defrag": "%s", "free_kb": %s}\n' \
			"$label" "$setup_json" "$(current $THP/enabled)" "$(current $THP/defrag)" \
			"$(awk '/^MemFree:/ {print $2}' /proc/meminfo)" >>"$out"
		echo "table1.sh: round $((round + 1))/$reps: $label ($mib MiB)" >&2
		cpu_watch_start
		"$bin" -m "$mib" -r "$cycles" -n $((round * cycles)) -l "$label" $refill \
			${idle:+-i "$idle"} >>"$out"
		cpu_watch_stop table1 "$label" >>"$out"
	done
done
