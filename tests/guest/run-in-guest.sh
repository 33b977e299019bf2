#!/bin/sh
# Runs inside the guest (scripts/vm-run): each line of the manifest is
#   NAME TIMEOUT_S COMMAND [ARGS...]
# and each test's output is framed for tests/run.py:
#   ### BEGIN NAME
#   ...
#   ### END NAME rc=STATUS
# A test still running at its timeout is killed: rc=124.
set -u
manifest=$1
here=$(cd "$(dirname "$0")" && pwd)

mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
mountpoint -q /sys/kernel/tracing || mount -t tracefs none /sys/kernel/tracing 2>/dev/null
# Tests write scratch files to the current directory: use guest-private /tmp.
cd /tmp || exit 1

# Every test starts from the knobs as booted, whatever the one before it
# left behind (a test killed by its timeout does not run its teardown).
knobs=$(find /sys/kernel/mm/transparent_hugepage /sys/kernel/mm/hawkeye \
	-type f -perm -u+w 2>/dev/null)
snapshot=/tmp/knobs.boot
for f in $knobs; do
	v=$(cat "$f" 2>/dev/null) || continue
	case $v in *\[*\]*) v=$(echo "$v" | sed -n 's/.*\[\(.*\)\].*/\1/p') ;; esac
	printf '%s %s\n' "$f" "$v"
done >"$snapshot"
restore_knobs() {
	# Turn mechanisms off first, then put every value back, twice: a
	# value refused for its order (low_pct above a high_pct not yet
	# restored) goes in on the second pass.
	for f in /sys/kernel/mm/hawkeye/*/enabled; do
		[ -e "$f" ] && echo 0 >"$f" 2>/dev/null
	done
	for pass in 1 2; do
		while read -r f v; do
			echo "$v" >"$f" 2>/dev/null
		done <"$snapshot"
	done
}

while read -r name limit cmd; do
	case $name in '' | '#'*) continue ;; esac
	restore_knobs
	echo "### BEGIN $name"
	start=$(date +%s)
	# shellcheck disable=SC2086
	timeout -k 10 "$limit" $cmd </dev/null 2>&1
	rc=$?
	echo "### END $name rc=$rc secs=$(($(date +%s) - start))"
	# What a test leaves behind for the next: memory and swap in use.
	echo "### after $name:" $(grep -E '^(MemFree|SwapFree|AnonPages|Shmem):' /proc/meminfo)
done <"$manifest"

# Leaks, after everything ran (debug kernel: kmemleak).
echo "### BEGIN kmemleak/scan"
start=$(date +%s)
"$here/kmemleak.sh"
rc=$?
echo "### END kmemleak/scan rc=$rc secs=$(($(date +%s) - start))"
