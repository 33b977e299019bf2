#!/usr/bin/env bash
# HawkEye pre-zeroing benchmarks, run INSIDE the guest as root; JSON lines
# to OUTFILE:
#   bandwidth  background zeroing speed, non-temporal vs normal stores
#   rate       zeroing rate observed against the rate knob
#   spinup     the paper's Table 8 in miniature: a JVM with a pre-touched
#              heap, hashinsert and Redis SETs of 2 MB values, under
#              Linux-4KB, Linux-2MB, Ingens-90%, HawkEye-4KB and HawkEye-2MB
#              (TABLE8_CONFIGS), REPS runs each
#
#   bench/prezero.sh -o OUTFILE [-b BINDIR] [-m HEAP_MIB] [-r REPS] [-T] [-w WORKLOADS]
# -T: Table 8 (spinup) only. -w: Table 8's workloads (default "jvm
# hashinsert redis"; bench/demo runs the JVM alone again at a heap of 8 GiB,
# with jvm16: the same JVM at a 16 MiB heap, its start-up without the heap,
# so that the report can give the heap's pre-touch apart).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=results/raw/prezero.jsonl bindir=$here/../build/bench heap=768 reps=3 only_table8=
workloads="jvm hashinsert redis"
while getopts o:b:m:r:Tw: opt; do
	case $opt in
	o) out=$OPTARG ;;
	b) bindir=$OPTARG ;;
	m) heap=$OPTARG ;;
	r) reps=$OPTARG ;;
	T) only_table8=1 ;;
	w) workloads=$OPTARG ;;
	*) echo "usage: $0 [-o OUTFILE] [-b BINDIR] [-m HEAP_MIB] [-r REPS] [-T] [-w WORKLOADS]" >&2; exit 2 ;;
	esac
done

. "$here/lib.sh"
P=/sys/kernel/mm/hawkeye/prezero
[ -d $P ] || { echo "prezero.sh: this kernel has no HawkEye pre-zeroing" >&2; exit 1; }
now() { date +%s.%N; }
# Seconds from $1 to $2 as a JSON number (bc would write .97 for 0.97).
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.6f", b - a }'; }
orig_thp=$(sed -n 's/.*\[\(.*\)\].*/\1/p' $THP/enabled)
orig_zero_page=$(cat $THP/use_zero_page)
orig_rate=$(cat $P/rate)
orig_paced=$(cat $P/paced 2>/dev/null || true)
orig_policy=$(current /sys/kernel/mm/hawkeye/promote/policy 2>/dev/null || true)
orig_util=$(cat /sys/kernel/mm/hawkeye/ingens/util_threshold 2>/dev/null || true)
reset() {
	[ -z "$orig_policy" ] || echo "$orig_policy" >/sys/kernel/mm/hawkeye/promote/policy
	[ -z "$orig_util" ] || echo "$orig_util" >/sys/kernel/mm/hawkeye/ingens/util_threshold
	echo 0 >$P/enabled
	echo "$orig_rate" >$P/rate
	[ -z "$orig_paced" ] || echo "$orig_paced" >$P/paced
	echo 1 >$P/nontemporal
	echo 0 >$P/target_mb
	echo "$orig_thp" >$THP/enabled
	echo "$orig_zero_page" >$THP/use_zero_page
}
trap reset EXIT

# Free memory that is not zeroed: allocate and free MIB with base pages.
dirty() { echo never >$THP/enabled; "$bindir/table1" -m "$1" -r 1 -l dirty >/dev/null; }
# 1 GiB, or 60 % of a smaller guest's memory.
dirty_mib=$(awk '/^MemTotal:/ {m = int($2 * 0.6 / 1024); print m < 1024 ? m : 1024}' /proc/meminfo)

mkdir -p "$(dirname "$out")"
: >"$out"
printf '{"type": "env", %s, "mem_total_kb": %s, "cpus": %s, "heap_mib": %s, "reps": %s}\n' "$(env_json)" \
	"$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)" "$(nproc)" "$heap" "$reps" >>"$out"

if [ -z "$only_table8" ]; then
	echo "prezero.sh: zeroing bandwidth, non-temporal vs normal stores" >&2
	for nt in 1 0; do
		reset
		dirty "$dirty_mib"
		echo 0 >$P/rate
		echo $nt >$P/nontemporal
		z0=$(hkstat prezero_pages) t0=$(now)
		echo 1 >$P/enabled
		# Until the thread zeroes less than 10 MB in a second (blocks
		# that merge as the system runs keep it busy now and then; with
		# paced zeroing it never goes a whole second without one), at
		# most a minute.
		last=$z0
		for _ in $(seq 60); do
			sleep 1
			z=$(hkstat prezero_pages)
			[ $((z - last)) -lt 2560 ] && break
			last=$z t1=$(now) ticks=$(zerod_ticks)
		done
		# The threads' CPU time: the wall time counts their idle tail too.
		printf '{"type": "bandwidth", "nontemporal": %s, "pages": %s, "seconds": %s, "cpu_seconds": %s}\n' \
			$nt $((last - z0)) "$(secs "$t0" "${t1:-$t0}")" \
			"$(awk -v t="${ticks:-0}" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", t / hz }')" >>"$out"
	done

	echo "prezero.sh: rate knob vs observed rate (the paper's fixed rate: paced 0)" >&2
	for rate in 2560 10000; do
		reset
		dirty "$dirty_mib"
		echo 0 >$P/paced
		echo $rate >$P/rate
		echo 1 >$P/enabled
		z0=$(hkstat prezero_pages) t0=$(now)
		sleep 5
		z1=$(hkstat prezero_pages) t1=$(now)
		printf '{"type": "rate", "knob": %s, "pages": %s, "seconds": %s}\n' \
			$rate $((z1 - z0)) "$(secs "$t0" "$t1")" >>"$out"
	done
fi

# Wait, untimed, until MIB of free memory is pre-zeroed, or the thread has
# gone two seconds without zeroing anything (all it can reach is zeroed).
wait_zeroed() {
	local last=-1 z
	while [ $(($(vm nr_free_zeroed) / 256)) -lt "$1" ]; do
		z=$(hkstat prezero_pages)
		[ "$z" = "$last" ] && break
		last=$z
		sleep 2
	done
}

spinup() {	# LABEL CMD...: one timed run, JSON line
	local label=$1 t0 t1
	shift
	t0=$(now)
	"$@" >/dev/null 2>&1
	t1=$(now)
	printf '{"type": "spinup", "workload": "%s", "label": "%s", "seconds": %s}\n' \
		"$WORKLOAD" "$label" "$(secs "$t0" "$t1")" >>"$out"
}

# Table 8's configurations. Ingens-90% is the HawkEye kernel's ingens
# policy: base pages at fault time (it promotes later, in the background).
configs=${TABLE8_CONFIGS:-Linux-4KB Linux-2MB Ingens-90% HawkEye-4KB HawkEye-2MB}
table8_setup() {
	case $1 in
	*-4KB) echo never >$THP/enabled ;;
	*) echo always >$THP/enabled ;;
	esac
	case $1 in
	Ingens-90%) ingens 90 ;;
	HawkEye-*) echo 1 >$P/enabled ;;	# at its defaults: paced
	esac
}
# Before each timed run: HawkEye's pool refilled (untimed), as a system
# with idle time between launches would have it.
refill() { case $1 in HawkEye-*) wait_zeroed $((heap + 64)) ;; esac; }

# Redis with 2 MB values (Table 8's first row): SETs of heap / 2 values of
# 2 MB into a fresh server; requests per second.
REDIS_SOCK=/tmp/prezero-redis.sock
redis2mb() {
	local redis_pid n=$((heap / 2)) r secs
	command -v redis-server >/dev/null || return 0
	redis_server $REDIS_SOCK /dev/null
	r=$("$bindir/redisbloat" -s $REDIS_SOCK fill v $n 2097152) || r=''
	kill "$redis_pid" 2>/dev/null || true
	wait "$redis_pid" 2>/dev/null || true
	secs=$(echo "$r" | sed -n 's/.*"secs": \([0-9.]*\).*/\1/p')
	[ -n "$secs" ] || { echo "prezero.sh: redis run failed" >&2; return 0; }
	printf '{"type": "spinup", "workload": "redis", "label": "%s", "seconds": %s, "ops_per_s": %s}\n' \
		"$1" "$secs" "$(awk -v n=$n -v s="$secs" 'BEGIN {printf "%.1f", n / s}')" >>"$out"
}

# One untimed start first, so that no configuration pays for a cold page cache.
command -v java >/dev/null && java -Xshare:auto -version >/dev/null 2>&1
# Interleaved (A B C ... A B C ...): a slow stretch of the host lands on
# every configuration alike, and run i of each can be paired with run i of
# another (prezero_report.py's speedup ranges).
for rep in $(seq "$reps"); do
	for config in $configs; do
		reset
		dirty "$dirty_mib"
		# hashinsert reads a slot before it writes it: without this the
		# first read maps the huge zero page and the write then falls
		# back to 4 KB pages (upstream behaviour), in all configurations.
		echo 0 >$THP/use_zero_page
		table8_setup "$config"
		echo "prezero.sh: Table 8: $config run $rep" >&2
		cpu_watch_start
		if [[ " $workloads " = *" jvm "* ]] && command -v java >/dev/null; then
			refill "$config"
			WORKLOAD=jvm spinup "$config" java -Xms${heap}m -Xmx${heap}m \
				-XX:+AlwaysPreTouch -XX:+UseSerialGC -version
		fi
		if [[ " $workloads " = *" jvm16 "* ]] && command -v java >/dev/null; then
			refill "$config"
			WORKLOAD=jvm16 spinup "$config" java -Xms16m -Xmx16m \
				-XX:+AlwaysPreTouch -XX:+UseSerialGC -version
		fi
		if [[ " $workloads " = *" hashinsert "* ]]; then
			refill "$config"
			"$bindir/hashinsert" -m "$heap" -l "$config" >>"$out"
		fi
		if [[ " $workloads " = *" redis "* ]]; then
			refill "$config"
			redis2mb "$config"
		fi
		cpu_watch_stop table8 "$config" >>"$out"
	done
done
command -v java >/dev/null || echo "prezero.sh: no java in the guest: JVM spin-up skipped" >&2
command -v redis-server >/dev/null || echo "prezero.sh: no redis-server in the guest: Redis skipped" >&2
