#!/bin/bash
# Host side of bench/watch-zerod.sh: whether the host runs the guest's
# vCPUs when a guest thread crawls. Waits for a guest's qemu-system
# process (the newest), samples it every second until it exits, then
# writes one line per second to OUTFILE: host seconds since the start,
# the host's load average, and for each QEMU thread that ran or waited,
# TID:RUN/WAIT, the percent of that second it ran and it waited runnable
# on a host runqueue (schedstat):
#   bench/watch-qemu.sh OUTFILE &
# A vCPU thread that runs most of every second while the guest reports a
# loop running a hundred times slower than usual was not starved by the
# host: QEMU itself executed the guest slowly.
set -u
out=$1
# A guest has four threads or more; vm-run's query of QEMU has fewer.
until pid=$(pgrep -n qemu-system) && [ "$(ls /proc/"$pid"/task 2>/dev/null | wc -l)" -ge 4 ]; do
	sleep 0.5
done
while kill -0 "$pid" 2>/dev/null; do
	echo "T $(date +%s.%N) $(cut -d' ' -f1 /proc/loadavg)"
	for task in /proc/"$pid"/task/*; do
		echo "${task##*/} $(cat "$task/schedstat" 2>/dev/null)"
	done
	sleep 1
done | awk '
$1 == "T" {
	if (last != "")
		print line
	if (t0 == "")
		t0 = $2
	d = $2 - last; last = $2
	line = sprintf("%.1f load=%s", $2 - t0, $3)
	next
}
NF >= 3 {
	if (($1 in run) && d > 0 && ($2 > run[$1] || $3 > wait[$1]))
		line = line sprintf(" %s:%.0f/%.0f", $1, ($2 - run[$1]) / d / 1e7,
				    ($3 - wait[$1]) / d / 1e7)
	run[$1] = $2; wait[$1] = $3
}
END { if (last != "") print line }' >"$out"
