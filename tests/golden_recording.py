"""The project's own recordings of real Batsim 4.2.1 runs (``tests/golden/<case>/``), made as those of
``../shared/batsim-golden/`` are (same files, same transcript format), and how to replay them on the embedded engine.

A case folder holds its inputs, written by hand or by ``batreplay platform``: ``platform.xml``, ``workload.json``,
``batsim_args.txt`` (Batsim's options, one line) and ``scheduler.txt`` (a scheduler of this package, ``easy``, or a
probe of ``tests/probes/``, ``probes/probeKill.py``; a second line may give its options as JSON). :func:`record` runs a real Batsim on them next to that
scheduler (in this process, over ZeroMQ) and writes ``transcript.jsonl``, ``out_jobs.csv``, ``out_schedule.csv``,
``out_machine_states.csv`` and ``batsim_version.txt`` beside them:

    uv run python tests/golden_recording.py tests/golden/composed-easy [...]

The fast loop replays each recording on the embedded engine (``tests/engine/test_recorded_cases.py``); the slow
tests record each case anew with the real Batsim and compare (``tests/engine/test_real_batsim_recorded.py``).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

TESTS_DIR = Path(__file__).resolve().parent
RECORDED = TESTS_DIR / "golden"
#: Batsim's output files a recording keeps (out_schedule.csv's wall-clock columns differ from run to run).
OUTPUTS = ("out_jobs.csv", "out_schedule.csv", "out_machine_states.csv")


def recorded_cases() -> list[str]:
    """Names of the recorded cases (folders of :data:`RECORDED` with a ``transcript.jsonl``)."""
    return sorted(p.name for p in RECORDED.iterdir() if (p / "transcript.jsonl").is_file())


def case_scheduler(case_dir: Path):
    """A fresh instance of the decision process ``scheduler.txt`` names on its first line (a name of the scheduler
    registry, or a file path relative to ``tests/``), with the options of its second line if any (a JSON object, as
    ``--scheduler-options`` takes)."""
    from batreplay.schedulers.registry import load_scheduler

    name, _, options = (case_dir / "scheduler.txt").read_text().strip().partition("\n")
    return load_scheduler(TESTS_DIR / name if name.endswith(".py") else name, json.loads(options or "{}"))


def record(case_dir: Path, into: Path, batsim: str | None = None) -> list[dict]:
    """Run the real ``batsim`` on ``case_dir``'s inputs next to its scheduler; write the transcript and Batsim's
    outputs into ``into`` (created; it may be ``case_dir``). Returns the transcript's lines.

    Raises what :func:`batreplay.realbatsim.launcher.run_with_batsim` raises."""
    from batreplay.realbatsim.launcher import run_with_batsim
    from batsim_doubles import batsim_options

    lines: list[dict] = []

    def keep(side: str):
        def add(message: dict) -> None:
            message = json.loads(json.dumps(message))  # a copy: the scheduler's side may change its dicts later
            for event in message.get("events", ()):
                if event.get("type") == "SIMULATION_BEGINS":  # the workload path, reduced to its file name
                    workloads = event["data"].get("workloads", {})
                    event["data"]["workloads"] = {w: Path(path).name for w, path in workloads.items()}
            lines.append({"seq": len(lines) // 2, "from": side, "msg": message})
        return add

    options = batsim_options(case_dir)  # (batsim_args.txt)
    export = into / "batsim-run"
    result = run_with_batsim(case_dir / "platform.xml", case_dir / "workload.json", case_scheduler(case_dir), export,
                             batsim_path=batsim, dynamic_jobs=options.dynamic_jobs,
                             acknowledge_dynamic_jobs=options.acknowledge_dynamic_jobs,
                             profile_reuse=options.profile_reuse, compute_sharing=options.compute_sharing,
                             timeout=120.0, on_request=keep("batsim"), on_reply=keep("scheduler"))
    into.mkdir(parents=True, exist_ok=True)
    with open(into / "transcript.jsonl", "w") as stream:
        for line in lines:
            stream.write(json.dumps(line) + "\n")
    for name in OUTPUTS:
        shutil.copyfile(export / name, into / name)
    (into / "batsim_version.txt").write_text(f"{result.batsim_version}\n")
    shutil.rmtree(export)
    return lines


if __name__ == "__main__":
    for folder in sys.argv[1:]:
        path = Path(folder).resolve()
        record(path, path)
        print(f"recorded {path}")
