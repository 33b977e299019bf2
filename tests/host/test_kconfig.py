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
    # KASAN off: with it, allyesconfig takes much longer to configure.
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


@pytest.mark.parametrize("off", ["HAWKEYE", "HAWKEYE_BASELINES"])
def test_series_builds_with_a_part_compiled_out(tmp_path, off):
    """With CONFIG_HAWKEYE=n every upstream C file the series edits still
    compiles: a distribution that leaves HawkEye out builds the kernel
    as before. With CONFIG_HAWKEYE_BASELINES=n HawkEye compiles without
    the research baselines, as a production kernel has it (both of our
    flavours set both, so no kernel build of make test shows this;
    make check-series also links them)."""
    if not os.path.exists(os.path.join(KTREE, "mm", "hawkeye", "Kconfig")):
        pytest.skip("no patched tree in build/linux (make kernel-tree)")
    edited = subprocess.run(["git", "-C", KTREE, "diff", "--name-only", "--diff-filter=M",
                             "hawkeye-base", "HEAD", "--", "*.c", ":!tools"],
                            check=True, capture_output=True, text=True).stdout.split()
    assert "mm/page_alloc.c" in edited
    targets = [f[:-2] + ".o" for f in edited]
    if off != "HAWKEYE":
        targets.append("mm/hawkeye/")
    out = tmp_path / "obj"
    repo = os.path.join(os.path.dirname(__file__), "..", "..")
    mk = ["make", "-s", "-C", KTREE, f"O={out}"]
    subprocess.run(mk + ["tinyconfig"], check=True, capture_output=True)
    frag = tmp_path / "off.config"
    frag.write_text(f"CONFIG_{off}=n\n")
    subprocess.run([os.path.join(KTREE, "scripts", "kconfig", "merge_config.sh"), "-m", "-O", str(out),
                    str(out / ".config"), os.path.join(repo, "kernel", "configs", "common.config"),
                    str(frag)], check=True, capture_output=True)
    subprocess.run(mk + ["olddefconfig"], check=True, capture_output=True)
    config = (out / ".config").read_text()
    assert "CONFIG_TRANSPARENT_HUGEPAGE=y" in config and f"CONFIG_{off}=y" not in config
    assert off == "HAWKEYE" or "CONFIG_HAWKEYE=y" in config
    r = subprocess.run(mk + [f"-j{os.cpu_count()}", "-k"] + targets, capture_output=True, text=True)
    errors = [line for line in r.stderr.splitlines() if "error" in line]
    assert r.returncode == 0, "\n".join(errors[:10] or r.stderr.splitlines()[-10:])
    if off != "HAWKEYE":
        assert (out / "mm" / "hawkeye" / "promote.o").exists()
        assert not (out / "mm" / "hawkeye" / "ingens.o").exists()
