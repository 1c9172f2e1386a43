"""The project's recorded cases (``tests/golden/``, issue 27) on a real Batsim 4.2.1 and on the embedded engine: each
case is recorded anew with the real ``batsim`` next to its scheduler, and the embedded engine must send the same
messages (fed the same replies) and write the same out_jobs.csv, byte for byte; the new recording must also equal
the committed one (so the fast loop's replays stay those of the real Batsim).

The cases (``tests/golden/README.md``): composed profiles with ``repeat`` and nesting, return codes (a failed step
ends the sequence), walltimes that stop a job in the middle of a round (in a delay step, in a computation), a job
without walltime, a ``parallel`` step, under EASY; kills in the middle of a step (the progress tree and the return
code, -2 when a computation is cancelled, -1 for a sleep); composed jobs on shared hosts
(``--enable-compute-sharing``); a platform with I/O (a storage host); jobs that read and write
(``parallel_homogeneous_pfs``) sharing the storage link, alone and in rounds with computations, stopped by their
walltime or killed.

Skipped without a ``batsim`` 4.2.x on PATH; CI builds one and sets ``BATREPLAY_REQUIRE_BATSIM=1``.
"""

from __future__ import annotations

import shutil

import pytest

from batsim_doubles import replay_transcript
from golden_recording import RECORDED, record, recorded_cases
from test_recorded_cases import embedded_out_jobs

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("case", recorded_cases())
def test_a_fresh_real_batsim_recording_is_the_engines_run_and_the_committed_one(real_batsim, case, tmp_path):
    inputs = tmp_path / "inputs"
    shutil.copytree(RECORDED / case, inputs)
    for name in ("transcript.jsonl", "out_jobs.csv", "out_schedule.csv", "out_machine_states.csv"):
        (inputs / name).unlink()
    lines = record(inputs, inputs, real_batsim)
    assert len(lines) == 2 * replay_transcript(inputs)  # the engine sends every message of the fresh recording
    real = (inputs / "out_jobs.csv").read_bytes()
    assert embedded_out_jobs(inputs, tmp_path / "embedded.csv").read_bytes() == real
    assert real == (RECORDED / case / "out_jobs.csv").read_bytes()
    assert (inputs / "transcript.jsonl").read_text() == (RECORDED / case / "transcript.jsonl").read_text()
