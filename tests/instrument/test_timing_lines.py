"""CUZK_TIMING lines survive what lost the seed's printf lines: stderr redirected to a file, then a kill."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"


def test_lines_survive_redirection_and_sigkill_right_after_a_span(tmp_path: Path) -> None:
    script = textwrap.dedent(
        """
        import os, signal
        from cuzk.instrument import Timeline
        tl = Timeline("job-7", attrs={"worker": 3})
        with tl.span("synthesis", partition=2):
            with tl.span("witness", partition=2):
                pass
        os.kill(os.getpid(), signal.SIGKILL)  # no exit handlers, no buffer flushing at exit
        """
    )
    err = tmp_path / "stderr.log"
    env = {**os.environ, "PYTHONPATH": str(SRC), "CUZK_TIMING": "1"}
    env.pop("PYTHONUNBUFFERED", None)  # the buffering a redirected stderr gets by default
    with open(err, "w") as fh:
        proc = subprocess.run([sys.executable, "-c", script], stderr=fh, env=env, timeout=120)
    assert proc.returncode == -signal.SIGKILL
    lines = err.read_text().splitlines()
    assert [ln.split()[1] for ln in lines] == ["span=witness", "span=synthesis"]
    for ln in lines:
        assert ln.startswith("CUZK_TIMING: ")
        fields = dict(kv.split("=", 1) for kv in ln.split()[1:])
        assert fields["job"] == "job-7" and fields["partition"] == "2" and fields["worker"] == "3"
        assert float(fields["ms"]) >= 0
