"""Kconfig of the patched tree (build/linux): where CONFIG_HAWKEYE may be built.

Pre-zeroed pages skip folio_zero_user()/clear_user_highpage(), which on
architectures with aliasing data caches also do the cache maintenance a
user mapping needs. HawkEye is therefore offered only
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


# Each mechanism compiled out: an object of its own that must be absent.
PARTS = {
    "HAWKEYE_PREZERO": "prezero.o",
    "HAWKEYE_DEBLOAT": "debloat.o",
    "HAWKEYE_PROMOTE": "promote.o",
    "HAWKEYE_BASELINES": "ingens.o",
}


@pytest.mark.parametrize("off", ["HAWKEYE"] + list(PARTS) + ["+".join(list(PARTS)[:3]), "MEMCG"])
def test_series_builds_with_a_part_compiled_out(tmp_path, off):
    """With CONFIG_HAWKEYE=n every upstream C file the series edits still
    compiles: a distribution that leaves HawkEye out builds the kernel
    as before. With one of its mechanisms off (pre-zeroing, recovery,
    promotion, the research baselines, or the first three at once), or
    without memory cgroups, HawkEye and its KUnit suites compile without
    it and without a warning, as a production kernel may have them (both
    of our flavours set them all, so no kernel build of make test shows
    this)."""
    if not os.path.exists(os.path.join(KTREE, "mm", "hawkeye", "Kconfig")):
        pytest.skip("no patched tree in build/linux (make kernel-tree)")
    edited = subprocess.run(["git", "-C", KTREE, "diff", "--name-only", "--diff-filter=M",
                             "hawkeye-base", "HEAD", "--", "*.c", ":!tools"],
                            check=True, capture_output=True, text=True).stdout.split()
    assert "mm/page_alloc.c" in edited
    targets = [f[:-2] + ".o" for f in edited if not (off == "MEMCG" and f == "mm/memcontrol.c")]
    if off != "HAWKEYE":
        targets.append("mm/hawkeye/")
    repo = os.path.join(os.path.dirname(__file__), "..", "..")
    out = tmp_path / "obj"
    mk = ["make", "-s", "-C", KTREE, f"O={out}"]
    subprocess.run(mk + ["tinyconfig"], check=True, capture_output=True)
    frag = tmp_path / "off.config"
    # The KUnit suites too, those of the parts left in.
    kunit = [line for line in open(os.path.join(repo, "kernel", "configs", "debug.config"))
             if line.startswith("CONFIG_HAWKEYE_") and "KUNIT_TEST=y" in line]
    frag.write_text("".join(f"CONFIG_{o}=n\n" for o in off.split("+")) +
                    ("" if off == "HAWKEYE" else "CONFIG_KUNIT=y\n" + "".join(kunit)))
    subprocess.run([os.path.join(KTREE, "scripts", "kconfig", "merge_config.sh"), "-m", "-O", str(out),
                    str(out / ".config"), os.path.join(repo, "kernel", "configs", "common.config"),
                    str(frag)], check=True, capture_output=True)
    subprocess.run(mk + ["olddefconfig"], check=True, capture_output=True)
    config = (out / ".config").read_text()
    assert "CONFIG_TRANSPARENT_HUGEPAGE=y" in config
    assert not any(f"CONFIG_{o}=y" in config for o in off.split("+"))
    assert off == "HAWKEYE" or "CONFIG_HAWKEYE=y" in config
    r = subprocess.run(mk + [f"-j{os.cpu_count()}", "-k"] + targets, capture_output=True, text=True)
    errors = [line for line in r.stderr.splitlines() if "error" in line]
    assert r.returncode == 0, "\n".join(errors[:10] or r.stderr.splitlines()[-10:])
    ours = [line for line in r.stderr.splitlines()
            if "warning:" in line and ("hawkeye" in line or "mm/internal.h" in line)]
    assert not ours, "\n".join(ours[:10])
    if off != "HAWKEYE":
        assert (out / "mm" / "hawkeye" / "common.o").exists()
        objs = dict(PARTS, MEMCG="memcg.o")
        assert not any((out / "mm" / "hawkeye" / objs[o]).exists() for o in off.split("+"))
