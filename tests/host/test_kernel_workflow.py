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
    assert "mm/memory.c" in text and "hawkeye/core.c" not in text
    assert (repo / "kernel" / "mm" / "hawkeye" / "core.c").read_text() == "/* new */\n"

    # From kernel/ alone, a fresh tree has the same content.
    shutil.rmtree(tree)
    sh(repo, "scripts/kernel-tree")
    assert "return 1" in (tree / "mm" / "memory.c").read_text()
    assert (tree / "mm" / "hawkeye" / "core.c").exists()
    assert "up to date" in sh(repo, "scripts/kernel-tree").stderr


def test_stale_tree_is_remade_and_unexported_work_kept(repo):
    tree = repo / "build" / "linux"
    sh(repo, "scripts/kernel-tree")
    # kernel/ gains a new file (as after a git pull): the clean tree follows.
    (repo / "kernel" / "mm").mkdir()
    (repo / "kernel" / "mm" / "extra.c").write_text("/* extra */\n")
    sh(repo, "scripts/kernel-tree")
    assert (tree / "mm" / "extra.c").exists()

    # Unexported commits are never dropped without --force.
    (tree / "mm" / "memory.c").write_text("changed\n")
    commit(tree, "wip")
    r = sh(repo, "scripts/kernel-tree", check=False)
    assert r.returncode != 0
    assert (tree / "mm" / "memory.c").read_text() == "changed\n"
    sh(repo, "scripts/kernel-tree", "--force")
    assert "return 0" in (tree / "mm" / "memory.c").read_text()
