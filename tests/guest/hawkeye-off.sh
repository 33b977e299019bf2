#!/bin/sh
# Runs its arguments with every HawkEye mechanism off and promotion under
# the linux policy: the kernel as stock 6.12 (run-in-guest.sh puts the
# booted knobs back before the next test).
for f in /sys/kernel/mm/hawkeye/*/enabled; do
	echo 0 >"$f" || exit 1
done
echo linux >/sys/kernel/mm/hawkeye/promote/policy || exit 1
exec "$@"
