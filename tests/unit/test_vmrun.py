"""scripts/vmrun with its output going to a file (``make test > log``).

qemu, under virtme-ng, writes the guest's output by reopening
/proc/self/fd/1 and /proc/self/fd/2 by name; on a regular file that open
truncates it, and everything printed before the VM started was lost.  A
stand-in ``vng`` does what qemu does, so no VM boots here.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

FAKE_VNG = """#!/usr/bin/env python3
import sys
with open("/proc/self/fd/1", "w") as out:      # as qemu's chardev file does
    out.write("guest stdout\\n")
with open("/proc/self/fd/2", "w") as err:
    err.write("guest stderr\\n")
sys.exit(7)
"""


def test_output_before_the_vm_survives_in_a_log_file(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "vng").write_text(FAKE_VNG)
    (bin_dir / "vng").chmod(0o755)
    kernel = tmp_path / "vmlinuz"
    kernel.write_text("")
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", SYNCTCP_ACCEL="tcg",
               SYNCTCP_VM_KERNEL=str(kernel), XDG_CACHE_HOME=str(tmp_path / "cache"))
    log = tmp_path / "log"
    with open(log, "w") as fh:
        r = subprocess.run(["bash", "-c", f"echo printed before; {REPO}/scripts/vmrun --vm true"],
                           stdout=fh, stderr=subprocess.STDOUT, env=env, timeout=60)
    text = log.read_text()
    assert r.returncode == 7, text                  # the guest's status
    assert text.startswith("printed before\n"), text
    assert "guest stdout" in text and "guest stderr" in text, text
