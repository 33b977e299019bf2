#!/usr/bin/env bash
# HawkEye pre-zeroing benchmarks, run INSIDE the guest as root; JSON lines
# to OUTFILE:
#   bandwidth  background zeroing speed, non-temporal vs normal stores
#   rate       zeroing rate observed against the rate knob
#   spinup     the paper's Table 8 in miniature: a JVM with a pre-touched
#              heap, and hashinsert, under Linux-2MB and HawkEye-2MB
#
#   bench/prezero.sh -o OUTFILE [-b BINDIR] [-m HEAP_MIB]
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=results/raw/prezero.jsonl bindir=$here/../build/bench heap=768
while getopts o:b:m: opt; do
	case $opt in
	o) out=$OPTARG ;;
	b) bindir=$OPTARG ;;
	m) heap=$OPTARG ;;
	*) echo "usage: $0 [-o OUTFILE] [-b BINDIR] [-m HEAP_MIB]" >&2; exit 2 ;;
	esac
done

THP=/sys/kernel/mm/transparent_hugepage
P=/sys/kernel/mm/hawkeye/prezero
[ -d $P ] || { echo "prezero.sh: this kernel has no HawkEye pre-zeroing" >&2; exit 1; }
vm() { awk -v k="$1" '$1 == k {print $2}' /proc/vmstat; }
now() { date +%s.%N; }
orig_thp=$(sed -n 's/.*\[\(.*\)\].*/\1/p' $THP/enabled)
orig_zero_page=$(cat $THP/use_zero_page)
orig_rate=$(cat $P/rate)
reset() {
	echo 0 >$P/enabled
	echo "$orig_rate" >$P/rate
	echo 1 >$P/nontemporal
	echo 0 >$P/target_mb
	echo "$orig_thp" >$THP/enabled
	echo "$orig_zero_page" >$THP/use_zero_page
}
trap reset EXIT

# Free memory that is not zeroed: allocate and free MIB with base pages.
dirty() { echo never >$THP/enabled; "$bindir/table1" -m "$1" -r 1 -l dirty >/dev/null; }

mkdir -p "$(dirname "$out")"
: >"$out"
printf '{"type": "env", "kernel": "%s", "mem_total_kb": %s, "cpus": %s}\n' "$(uname -r)" \
	"$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)" "$(nproc)" >>"$out"

echo "prezero.sh: zeroing bandwidth, non-temporal vs normal stores" >&2
for nt in 1 0; do
	reset
	dirty 1024
	echo 0 >$P/rate
	echo $nt >$P/nontemporal
	z0=$(vm hawkeye_prezero_pages) t0=$(now)
	echo 1 >$P/enabled
	# Until the thread has gone a second without finding work.
	last=$z0
	while sleep 1; do
		z=$(vm hawkeye_prezero_pages)
		[ "$z" = "$last" ] && break
		last=$z t1=$(now)
	done
	printf '{"type": "bandwidth", "nontemporal": %s, "pages": %s, "seconds": %s}\n' \
		$nt $((last - z0)) "$(echo "${t1:-$t0} - $t0" | bc)" >>"$out"
done

echo "prezero.sh: rate knob vs observed rate" >&2
for rate in 2560 10000; do
	reset
	dirty 1024
	echo $rate >$P/rate
	echo 1 >$P/enabled
	z0=$(vm hawkeye_prezero_pages) t0=$(now)
	sleep 5
	z1=$(vm hawkeye_prezero_pages) t1=$(now)
	printf '{"type": "rate", "knob": %s, "pages": %s, "seconds": %s}\n' \
		$rate $((z1 - z0)) "$(echo "$t1 - $t0" | bc)" >>"$out"
done

# Wait, untimed, until MIB of free memory is pre-zeroed, or the thread has
# gone two seconds without zeroing anything (all it can reach is zeroed).
wait_zeroed() {
	local last=-1 z
	while [ $(($(vm nr_free_zeroed) / 256)) -lt "$1" ]; do
		z=$(vm hawkeye_prezero_pages)
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
		"$WORKLOAD" "$label" "$(echo "$t1 - $t0" | bc)" >>"$out"
}

# One untimed start first, so that no configuration pays for a cold page cache.
command -v java >/dev/null && java -Xshare:auto -version >/dev/null 2>&1
for config in Linux-2MB HawkEye-2MB; do
	for rep in 1 2 3; do
		reset
		dirty 1024
		echo always >$THP/enabled
		# hashinsert reads a slot before it writes it: without this the
		# first read maps the huge zero page and the write then falls
		# back to 4 KB pages (upstream behaviour), in both configurations.
		echo 0 >$THP/use_zero_page
		if [ $config = HawkEye-2MB ]; then
			echo 0 >$P/rate
			echo 1 >$P/enabled
			wait_zeroed $((heap + 64))
		fi
		echo "prezero.sh: $config run $rep" >&2
		if command -v java >/dev/null; then
			WORKLOAD=jvm spinup $config java -Xms${heap}m -Xmx${heap}m \
				-XX:+AlwaysPreTouch -XX:+UseSerialGC -version
		fi
		[ $config = HawkEye-2MB ] && wait_zeroed $((heap + 64))
		"$bindir/hashinsert" -m "$heap" -l $config >>"$out"
	done
done
command -v java >/dev/null || echo "prezero.sh: no java in the guest: JVM spin-up skipped" >&2
