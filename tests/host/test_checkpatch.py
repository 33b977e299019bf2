"""Our kernel changes pass checkpatch.pl --strict with no ERROR."""
import os
import subprocess

import pytest

REPO = os.path.join(os.path.dirname(__file__), "..", "..")


@pytest.mark.skipif(not os.path.exists(os.path.join(REPO, "build", "linux", "scripts", "checkpatch.pl")),
                    reason="no kernel tree (make test builds one)")
def test_checkpatch_strict_has_no_errors():
    r = subprocess.run([os.path.join(REPO, "scripts", "checkpatch")], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
