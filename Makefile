# hawkeye: the two commands are `make demo` and `make test`; see README.md.
.PHONY: demo demo-kvm demo-tlb test test-host test-deb test-tlbmodel soak kernel deb kernel-tree kernel-export check-series checkpatch clean help

demo:
	scripts/setup-host
	bench/demo

# The same evaluation on a host with usable KVM, into results/kvm/.
demo-kvm:
	scripts/setup-host
	KVM=1 bench/demo

# The promotion experiments under the TLB model (QEMU 10 and its plugin),
# into results/modeled/: bench/demo-tlb.
demo-tlb:
	bench/demo-tlb

test:
	python3 tests/run.py

test-host:
	scripts/setup-host && python3 tests/run.py --host-only

# The TLB model plugin in a guest: QEMU 10 (scripts/setup-tlbmodel), two
# boots under the plugin; not in make test, which keeps the system's QEMU.
test-tlbmodel:
	scripts/setup-host && scripts/build-kernel --flavour release >/dev/null
	HAWKEYE_TLBMODEL=1 build/venv/bin/python -m pytest -q tests/host/test_tlbmodel_guest.py

# The packaged kernel (make deb) runs the guest tests, hibernation and the
# soak: not in make test, its build takes about 25 minutes.
test-deb:
	python3 tests/run.py --deb

# The stress-ng soak (tests/guest/soak.sh) for SOAK_MINUTES, on the debug
# kernel (KASAN, kmemleak, lockdep) in a two-node guest, every mechanism on.
SOAK_MINUTES ?= 60
SOAK_FLAVOUR ?= debug
soak:
	scripts/setup-host
	scripts/vm-run --flavour $(SOAK_FLAVOUR) --nodes 2 --mem 2G --swap 1G \
		--boot-timeout 1200 --timeout $$(($(SOAK_MINUTES) * 60 + 900)) \
		-- tests/guest/soak.sh --kmemleak $$(($(SOAK_MINUTES) * 60))

kernel:
	scripts/build-kernel --flavour debug
	scripts/build-kernel --flavour release

deb:
	scripts/build-deb

kernel-tree:
	scripts/kernel-tree

kernel-export:
	scripts/kernel-export

check-series:
	scripts/check-series

checkpatch:
	scripts/checkpatch

clean:
	rm -rf build/obj-debug build/obj-release build/series build/tests build/bench

help:
	@sed -n 's/^\([a-z-]*\):.*/\1/p' Makefile
