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

mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
mountpoint -q /sys/kernel/tracing || mount -t tracefs none /sys/kernel/tracing 2>/dev/null
# Tests write scratch files to the current directory: use guest-private /tmp.
cd /tmp || exit 1

while read -r name limit cmd; do
	case $name in '' | '#'*) continue ;; esac
	echo "### BEGIN $name"
	start=$(date +%s)
	# shellcheck disable=SC2086
	timeout -k 10 "$limit" $cmd </dev/null 2>&1
	rc=$?
	echo "### END $name rc=$rc secs=$(($(date +%s) - start))"
done <"$manifest"
