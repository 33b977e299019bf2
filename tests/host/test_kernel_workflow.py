"""scripts/kernel-tree and kernel-export on a tiny stand-in for the kernel.

The scripts are copied into a scratch repo whose kernel/base.env names a
tarball that is already "downloaded", so no network and no real kernel.
"""
import os
import shutil
import subprocess
import tarfile

import pytest

SCRIPTS = os.path.join(os.path.dirname(__file__), "..", "..", "scripts")


def sh(cwd, *cmd, check=True):
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=check)


@pytest.fixture
def repo(tmp_path):
    r = tmp_path / "repo"
    (r / "scripts").mkdir(parents=True)
    for f in ("lib.sh", "kernel-tree", "kernel-export", "fetch-kernel"):
        shutil.copy(os.path.join(SCRIPTS, f), r / "scripts" / f)
    (r / "kernel" / "patches").mkdir(parents=True)
    (r / "kernel" / "configs").mkdir()
    (r / "kernel" / "base.env").write_text(
        "LINUX_DEB_PACKAGE=linux-source-6.12\nLINUX_DEB_VERSION=9.9\n"
        "LINUX_TARBALL=usr/src/linux-source-6.12.tar.xz\nLINUX_TARBALL_SHA256=0\n")
    src = tmp_path / "linux-source-6.12"
    (src / "mm").mkdir(parents=True)
    (src / "Makefile").write_text("all:\n")
    (src / "mm" / "memory.c").write_text("int fault(void)\n{\n\treturn 0;\n}\n")
    (src / ".gitignore").write_text("*.o\n#\n# Debian packaging: ignore everything\n/*\n!/debian/\n")
    dl = r / "build" / "dl" / "9.9" / "usr" / "src"
    dl.mkdir(parents=True)
    with tarfile.open(dl / "linux-source-6.12.tar.xz", "w:xz") as t:
        t.add(src, arcname="linux-source-6.12")
    (dl / "linux-source-6.12.tar.xz.ok").touch()
    return r


def commit(tree, msg):
    sh(tree, "git", "add", "-A")
    sh(tree, "git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", msg)


def test_edit_export_and_rebuild_tree(repo):
    tree = repo / "build" / "linux"
    sh(repo, "scripts/kernel-tree")
    assert (tree / "mm" / "memory.c").exists()

    # A change to an upstream file and a new file, in one commit.
    (tree / "mm" / "memory.c").write_text("int fault(void)\n{\n\treturn 1;\n}\n")
    (tree / "mm" / "hawkeye").mkdir()
    (tree / "mm" / "hawkeye" / "core.c").write_text("/* new */\n")
    r = sh(repo, "scripts/kernel-tree", check=False)
    assert r.returncode != 0 and "not exported" in r.stderr  # dirty: refused
    commit(tree, "mm: fault returns 1")

    sh(repo, "scripts/kernel-export")
    patches = sorted(os.listdir(repo / "kernel" / "patches"))
    assert patches == ["0001-mm-fault-returns-1.patch"]
    text = (repo / "kernel" / "patches" / patches[0]).read_text()
    # The patch carries the new file; kernel/ keeps a copy to read.
    assert "mm/memory.c" in text and "new file mode" in text and "hawkeye/core.c" in text
    assert (repo / "kernel" / "mm" / "hawkeye" / "core.c").read_text() == "/* new */\n"

    # From kernel/ alone, a fresh tree has the same content.
    shutil.rmtree(tree)
    sh(repo, "scripts/kernel-tree")
    assert "return 1" in (tree / "mm" / "memory.c").read_text()
    assert (tree / "mm" / "hawkeye" / "core.c").exists()
    assert "up to date" in sh(repo, "scripts/kernel-tree").stderr


def test_copies_must_match_the_series(repo):
    """The tree is the series applied, nothing copied in: a copy under
    kernel/ edited by hand, or one the series does not make, is an error,
    and kernel-export writes the copies again from the series."""
    tree = repo / "build" / "linux"
    sh(repo, "scripts/kernel-tree")
    (tree / "mm" / "hawkeye").mkdir()
    (tree / "mm" / "hawkeye" / "core.c").write_text("/* new */\n")
    commit(tree, "mm: hawkeye: core")
    sh(repo, "scripts/kernel-export")

    copy = repo / "kernel" / "mm" / "hawkeye" / "core.c"
    copy.write_text("/* edited */\n")
    for _ in range(2):  # ... and again until the copies are right
        r = sh(repo, "scripts/kernel-tree", check=False)
        assert r.returncode != 0 and "not what kernel/patches make: mm/hawkeye/core.c" in r.stderr
        assert (tree / "mm" / "hawkeye" / "core.c").read_text() == "/* new */\n"
    sh(repo, "scripts/kernel-export")
    assert copy.read_text() == "/* new */\n"
    assert "up to date" in sh(repo, "scripts/kernel-tree").stderr

    stray = repo / "kernel" / "mm" / "stray.c"
    stray.write_text("/* stray */\n")
    r = sh(repo, "scripts/kernel-tree", check=False)
    assert r.returncode != 0 and "mm/stray.c" in r.stderr
    assert not (tree / "mm" / "stray.c").exists()


def test_check_series_config_options_must_survive(repo):
    """An option the configs ask for that Kconfig drops fails the build:
    the series is not checked with less than was asked for."""
    tree = series_tree(repo, "CONFIG_DROPPED=y\n")
    (tree / "mm" / "memory.c").write_text("int fault(void) { return 1; }\n")
    r = check(repo, tree, "mm: one")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "FAIL  0001-kbuild: the build with HawkEye on breaks" in r.stdout
    assert "0002" not in r.stdout
    assert "config options not set as asked: CONFIG_DROPPED=y" in r.stdout


def test_stale_tree_is_remade_and_unexported_work_kept(repo):
    tree = repo / "build" / "linux"
    sh(repo, "scripts/kernel-tree")
    (tree / "mm" / "memory.c").write_text("patched\n")
    commit(tree, "mm: patched")
    sh(repo, "scripts/kernel-export")
    # kernel/ loses the patch (as after a git pull): the clean tree follows.
    for p in (repo / "kernel" / "patches").iterdir():
        p.unlink()
    sh(repo, "scripts/kernel-tree")
    assert "return 0" in (tree / "mm" / "memory.c").read_text()

    # Unexported commits are never dropped without --force.
    (tree / "mm" / "memory.c").write_text("changed\n")
    commit(tree, "wip")
    r = sh(repo, "scripts/kernel-tree", check=False)
    assert r.returncode != 0
    assert (tree / "mm" / "memory.c").read_text() == "changed\n"
    sh(repo, "scripts/kernel-tree", "--force")
    assert "return 0" in (tree / "mm" / "memory.c").read_text()


def fake_kbuild(tree):
    """Just enough of Kbuild for check-series: the configs, an image that
    fails to build while mm/memory.c says "broken", an olddefconfig that
    drops options named DROPPED, and a checkpatch that reports an ERROR for
    a patch that adds a line "/* STYLE" and breaks on one that adds
    "/* BROKEN"."""
    (tree / "scripts" / "kconfig").mkdir(parents=True)
    (tree / "Makefile").write_text(
        "tinyconfig:\n\techo '# tiny' >$(O)/.config\n"
        "olddefconfig:\n\tsed -i /DROPPED/d $(O)/.config\n"
        "bzImage:\n\t! grep -q broken mm/memory.c || { echo 'mm/memory.c:1: error: broken'; false; }\n"
        "\t! grep -q needs-part mm/memory.c || ! grep -q PART=n $(O)/.config"
        " || { echo 'mm/memory.c:1: error: no part'; false; }\n"
        "\techo built >>$(O)/built\n")
    merge = tree / "scripts" / "kconfig" / "merge_config.sh"
    # merge_config.sh -m -O DIR BASE FRAGMENT...
    merge.write_text('#!/bin/sh\nbase=$4; shift 4\ncat "$@" >>"$base"\n')
    cp = tree / "scripts" / "checkpatch.pl"
    cp.write_text('#!/bin/sh\nfor a; do f=$a; done\n'
                  'grep -q "^+/[*] BROKEN" "$f" && { echo "oops"; exit 2; }\n'
                  'if grep -q "^+/[*] STYLE" "$f"; then echo "ERROR:TEST: no"; e=1; fi\n'
                  'echo "total: ${e:-0} errors, 1 warnings, 0 checks, 1 lines checked"; exit 1\n')
    for f in (merge, cp):
        f.chmod(0o755)


def series_tree(repo, config):
    """build/linux on the stand-in base with fake Kbuild, check-series
    beside the other scripts and @config as both config fragments."""
    shutil.copy(os.path.join(SCRIPTS, "check-series"), repo / "scripts")
    (repo / "scripts" / "setup-host").write_text("#!/bin/sh\n")
    (repo / "scripts" / "setup-host").chmod(0o755)
    (repo / "kernel" / "configs" / "common.config").write_text(config)
    (repo / "kernel" / "configs" / "release.config").write_text("")
    tree = repo / "build" / "linux"
    sh(repo, "scripts/kernel-tree")
    fake_kbuild(tree)
    commit(tree, "kbuild")
    return tree


def check(repo, tree, msg):
    """Commit, export and check the series."""
    commit(tree, msg)
    sh(repo, "scripts/kernel-export")
    return sh(repo, "scripts/check-series", check=False)


def test_check_series_names_the_patch_that_breaks(repo):
    tree = series_tree(repo, "CONFIG_HAWKEYE=y\n")
    steps = [("mm: one", "int fault(void) { return 1; }\n"),
             ("mm: broken", "broken\n"),
             ("mm: mended", "int fault(void) { return 2; }\n")]
    for msg, text in steps:
        (tree / "mm" / "memory.c").write_text(text)
        commit(tree, msg)
    (tree / "Documentation").mkdir()
    (tree / "Documentation" / "hawkeye.rst").write_text("HawkEye\n")
    r = check(repo, tree, "Documentation: HawkEye")
    assert r.returncode == 1, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("ok    0001-kbuild")
    fail = [line for line in lines if line.startswith("FAIL")]
    assert fail == ["FAIL  0003-mm-broken: the build with HawkEye on breaks "
                    "(build/series/3-on.log):"], r.stdout
    assert "error: broken" in r.stdout

    # Folding the fix into the broken patch: every prefix builds, and what
    # was checked before is not built again.
    sh(tree, "git", "reset", "-q", "--hard", "HEAD~3")
    (tree / "mm" / "memory.c").write_text("int fault(void) { return 2; }\n")
    commit(tree, "mm: two")
    (tree / "Documentation").mkdir()
    (tree / "Documentation" / "hawkeye.rst").write_text("HawkEye\n")
    r = check(repo, tree, "Documentation: HawkEye")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "0001-kbuild (checked before)" in r.stdout
    assert "0002-mm-one (checked before)" in r.stdout
    assert "ok    0003-mm-two (checkpatch: 0 errors, 1 warnings and checks)" in r.stdout
    assert "every prefix of the 4 patches builds" in r.stderr
    built = repo / "build" / "series" / "obj-on" / "built"
    assert len(built.read_text().split()) == 3  # 0001, 0002, 0003; not the docs

    # checkpatch's ERRORs fail the patch that has them.
    (tree / "mm" / "memory.c").write_text("/* STYLE */\n")
    r = check(repo, tree, "mm: style")
    assert r.returncode == 1 and "FAIL  0005-mm-style: checkpatch --strict" in r.stdout
    assert "ERROR:TEST: no" in r.stdout

    # A checkpatch that does not run through fails the patch too.
    sh(tree, "git", "reset", "-q", "--hard", "HEAD~1")
    (tree / "mm" / "memory.c").write_text("/* BROKEN */\n")
    r = check(repo, tree, "mm: odd")
    assert r.returncode == 1 and "FAIL  0005-mm-odd: checkpatch --strict:" in r.stdout
    assert "checkpatch did not run (exit 2)" in r.stdout and "oops" in r.stdout

    # Each component option of mm/hawkeye/Kconfig off, once, on the whole
    # series: a series that needs the option on fails there.
    sh(tree, "git", "reset", "-q", "--hard", "HEAD~1")
    (tree / "mm" / "hawkeye").mkdir()
    (tree / "mm" / "hawkeye" / "Kconfig").write_text(
        "config HAWKEYE_PART\n\tbool\n\nconfig HAWKEYE_PART_KUNIT_TEST\n\tbool\n")
    # The part's KUnit suite depends on it: off with it (the fake olddefconfig
    # drops it otherwise, as Kconfig would).
    (repo / "kernel" / "configs" / "debug.config").write_text("CONFIG_HAWKEYE_PART_KUNIT_TEST=y\n")
    (tree / "Makefile").write_text((tree / "Makefile").read_text().replace(
        "sed -i /DROPPED/d", "grep -q PART=n $(O)/.config && sed -i /PART_KUNIT/d $(O)/.config; sed -i /DROPPED/d"))
    (tree / "mm" / "memory.c").write_text("needs-part\n")
    r = check(repo, tree, "mm: hawkeye: part")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "ok    0005-mm-hawkeye-part" in r.stdout
    assert "FAIL  the series without CONFIG_HAWKEYE_PART does not build" in r.stdout
    assert "KUNIT" not in r.stdout
    (tree / "mm" / "memory.c").write_text("int fault(void) { return 3; }\n")
    r = check(repo, tree, "mm: part optional")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "ok    the series without CONFIG_HAWKEYE_PART: built" in r.stdout
