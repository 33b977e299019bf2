"""Kconfig of the patched tree (build/linux): where CONFIG_HAWKEYE may be built.

Pre-zeroed pages skip folio_zero_user()/clear_user_highpage(), which on
architectures with aliasing data caches also do the cache maintenance a
user mapping needs (review finding A4). HawkEye is therefore offered only
on x86-64 and arm64, whose data caches do not alias. Kconfig runs for a
foreign ARCH without its compiler (options that probe the compiler just
come out off), so `allyesconfig` shows what each architecture may build.
"""
import os
import subprocess

import pytest

KTREE = os.path.join(os.path.dirname(__file__), "..", "..", "build", "linux")


def allyes(tmp_path, arch):
    if not os.path.exists(os.path.join(KTREE, "mm", "hawkeye", "Kconfig")):
        pytest.skip("no patched tree in build/linux (make kernel-tree)")
    out = tmp_path / arch
    # KASAN off, as HawkEye requires for now (issue 15 lifts that).
    force = tmp_path / "force.config"
    force.write_text("CONFIG_KASAN=n\n")
    subprocess.run(["make", "-s", "-C", KTREE, f"O={out}", f"ARCH={arch}", "allyesconfig"],
                   check=True, capture_output=True, text=True,
                   env=dict(os.environ, KCONFIG_ALLCONFIG=str(force)))
    return (out / ".config").read_text()


@pytest.mark.parametrize("arch", ["sparc64"])
def test_not_offered_where_user_mappings_need_cache_maintenance(tmp_path, arch):
    config = allyes(tmp_path, arch)
    # THP is there: only HawkEye's own dependency keeps it out.
    assert "CONFIG_TRANSPARENT_HUGEPAGE=y" in config
    assert "CONFIG_HAWKEYE=y" not in config


@pytest.mark.parametrize("arch", ["x86_64", "arm64"])
def test_offered_on_x86_64_and_arm64(tmp_path, arch):
    config = allyes(tmp_path, arch)
    assert "CONFIG_TRANSPARENT_HUGEPAGE=y" in config
    assert "CONFIG_HAWKEYE=y" in config
