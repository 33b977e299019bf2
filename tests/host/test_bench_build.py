"""Every C program under bench/ compiles as the bench scripts build them
(-O2 -Wall -Wextra -Werror): a warning there stops make demo."""
import glob
import os
import subprocess

import pytest

BENCH = os.path.join(os.path.dirname(__file__), "..", "..", "bench")


@pytest.mark.parametrize("src", sorted(glob.glob(os.path.join(BENCH, "*.c"))),
                         ids=os.path.basename)
def test_compiles_without_warnings(src, tmp_path):
    r = subprocess.run(["cc", "-O2", "-Wall", "-Wextra", "-Werror", "-c", "-o",
                        str(tmp_path / "x.o"), src], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("steps", ["5", "0", "2 x"])
def test_demo_refuses_an_unknown_step(steps):
    """STEPS names steps 1 to 4; anything else stops bench/demo before it
    builds, removes or boots anything."""
    r = subprocess.run([os.path.join(BENCH, "demo")], env=dict(os.environ, STEPS=steps),
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert "demo: STEPS: no step" in r.stderr
