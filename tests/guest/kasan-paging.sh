#!/bin/sh
# Runs inside the guest: a KASAN kernel must run with 4-level paging.
# With 5-level paging (QEMU's "max" CPU has LA57), identify_cpu() zeroes
# the boot CPU's feature words for a moment while alternatives are not
# yet patched, so pgtable_l5_enabled() reads false; an interrupt then sees
# KASAN's shadow bounds computed for 4 levels, and reports every direct
# map address as a "wild-memory-access" (an upstream x86 bug, seen in
# about one boot in 13). scripts/vm-run boots KASAN kernels with no5lvl.
grep -qw kasan_report /proc/kallsyms || { echo "not a KASAN kernel"; exit 4; }
if grep -qw la57 /proc/cpuinfo; then
	echo "KASAN kernel with 5-level paging: boot it with no5lvl (scripts/vm-run)"
	exit 1
fi
echo "KASAN kernel with 4-level paging"
