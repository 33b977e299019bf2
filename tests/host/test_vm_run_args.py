"""scripts/vm-run refuses bad arguments before it builds or boots anything."""
import os
import subprocess

VM_RUN = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "vm-run")


def vm_run(*args):
    return subprocess.run([VM_RUN, *args], capture_output=True, text=True, timeout=30)


def test_no_command():
    r = vm_run("--mem", "1G")
    assert r.returncode == 2 and "no command" in r.stderr


def test_bad_memory_size():
    r = vm_run("--mem", "lots", "--", "true")
    assert r.returncode == 2 and "--mem" in r.stderr


def test_bad_flavour():
    r = vm_run("--flavour", "fast", "--", "true")
    assert r.returncode == 2 and "flavour" in r.stderr


def test_bad_cpus_and_swap():
    assert vm_run("--cpus", "0", "--", "true").returncode == 2
    assert vm_run("--swap", "x", "--", "true").returncode == 2


def test_resume_needs_a_swap_image(tmp_path):
    r = vm_run("--resume", "--", "true")
    assert r.returncode == 2 and "--swap-image" in r.stderr
    r = vm_run("--swap-image", str(tmp_path / "none.img"), "--resume", "--", "true")
    assert r.returncode == 2 and "no such image" in r.stderr


def test_nodes_must_fit_cpus_and_memory():
    r = vm_run("--nodes", "3", "--cpus", "2", "--", "true")
    assert r.returncode == 2 and "--nodes" in r.stderr
    r = vm_run("--nodes", "3", "--cpus", "3", "--mem", "1G", "--", "true")
    assert r.returncode == 2 and "evenly" in r.stderr


def test_numa_split():
    import importlib.machinery
    import importlib.util
    loader = importlib.machinery.SourceFileLoader("vm_run", VM_RUN)
    spec = importlib.util.spec_from_loader("vm_run", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    assert mod.numa_args("2G", 2, 2) == ["--numa", "1024M,cpus=0-0", "--numa", "1024M,cpus=1-1"]
    assert mod.numa_args("4G", 4, 2) == ["--numa", "2048M,cpus=0-1", "--numa", "2048M,cpus=2-3"]


def test_tlbmodel_picks_qemu_and_plugin_itself(tmp_path, monkeypatch):
    r = vm_run("--tlbmodel", "x.jsonl", "--plugin", "file=y.so", "--", "true")
    assert r.returncode == 2 and "--tlbmodel" in r.stderr
    import importlib.machinery
    import importlib.util
    import types
    loader = importlib.machinery.SourceFileLoader("vm_run", VM_RUN)
    spec = importlib.util.spec_from_loader("vm_run", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    # What scripts/setup-tlbmodel prints: QEMU 10, then the plugin.
    monkeypatch.setattr(mod.subprocess, "run", lambda *a, **kw: types.SimpleNamespace(
        stdout="/q/bin/qemu-system-x86_64\n/q/tlbmodel.so\n"))
    a = mod.parse_args(["--tlbmodel", str(tmp_path / "c.jsonl"), "--", "true"])
    mod.tlbmodel(a)
    assert a.qemu == "/q/bin/qemu-system-x86_64"
    assert a.plugin == f"file=/q/tlbmodel.so,out={tmp_path / 'c.jsonl'}"
    assert a.append == ["no5lvl nokaslr nopti"] and a.boot_timeout == 1800
