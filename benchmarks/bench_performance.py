"""Speed and memory of batreplay beside other batreplay builds, real Batsim and AccaSim (run by hand, not in CI).

For each log and scheduler, in turn and ``--repeat`` times (runs interleaved, medians reported):

- the whole ``batreplay run --workload LOG --platform P --scheduler S --out DIR --force --quiet`` command of the
  batreplay under test (``--batreplay``, default: the one next to this Python) and of every ``--compare
  NAME=PATH`` executable, whose ``out_jobs.csv`` must be byte-identical (sha256) to the first one's;
- with ``batsim`` on PATH and the log in ``--batsim-logs`` (default: KTH-SP2 only, about 45 s a run), EASY
  only, on the ``workload.json`` batreplay wrote (the conversion is not counted for them): a real Batsim
  4.2.1 with pybatsim's own ``easyBackfill`` (the speed reference; another EASY, so its schedule differs),
  then with batreplay's ``schedulers/easy.py`` under pybatsim's launcher (must write the same
  ``out_jobs.csv``);
- with an AccaSim 1.1.3 environment (``--accasim-python``), EASY only: ``accasim_easy.py`` (AccaSim's
  ``EASYBackfilling`` + ``FirstFit``) on the very jobs batreplay simulated, with the share of jobs that start
  when ours do and the largest waits (AccaSim's EASY lets backfilled jobs delay the head job);

then ``batreplay --help`` (bytecode cached, after a warm-up), with ``--feedback``, a feedback replay
(EASY, sessions a60) on KTH-SP2, and with ``--demand-rounds``, KTH-SP2 in 4 demand rounds of reads on 100 nodes with
I/O links (the links solver, the node I/O trace), for every batreplay executable. Wall times are whole processes (start-up,
reading, simulation, output files); peak memory is ``ru_maxrss`` from ``wait4`` (the largest process of the
tree). Progress goes to standard error; the date, the machine and one Markdown table to standard output.

Usage (from the repository root; see benchmarks/README.md)::

    uv run python benchmarks/bench_performance.py --logs kth --compare before=/tmp/before/.venv/bin/batreplay
    uv run python benchmarks/bench_performance.py --logs hpc2n --repeat 1 --no-batsim
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import platform as python_platform
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
WORKLOADS = ROOT.parent / "shared" / "workloads"
ACCASIM_SCRIPT = Path(__file__).resolve().with_name("accasim_easy.py")
DEFAULT_ACCASIM_PYTHON = Path("/tmp/accasim-venv/bin/python")
SECONDS_PER_DAY = 86400.0


@dataclass(frozen=True)
class LogSetup:
    """A log of ``../shared/workloads`` and the machine it is replayed on.

    ``platform`` is a shipped platform name, or None for a generated cluster of ``nodes`` nodes at 1 Gflop/s
    (HPC2N: its header's MaxProcs, 240 = 120 dual-processor nodes, one processor = one node, as in
    expe/fcfs-vs-easy.toml).
    """

    name: str
    nodes: int
    platform: str | None

    @property
    def swf(self) -> Path:
        return WORKLOADS / f"{self.name}.swf.gz"


LOGS = {"kth": LogSetup("KTH-SP2-1996-2.1-cln", 100, "kth-sp2"),
        "sdsc": LogSetup("SDSC-SP2-1998-4.2-cln", 128, "sdsc-sp2"),
        "hpc2n": LogSetup("HPC2N-2002-2.2-cln", 240, None)}


@dataclass
class Row:
    """The measurements of one tool on one case; ``reference`` is the row its ratio and checksum refer to."""

    case: str
    tool: str
    walls: list[float] = field(default_factory=list)
    peaks: list[float] = field(default_factory=list)
    jobs: int | None = None
    digests: set[str] = field(default_factory=set)
    reference: Row | None = None
    note: str = ""

    def add(self, wall: float, peak: float, out_jobs: Path | None = None) -> None:
        """Record one run: wall seconds, peak MB and (if given) the rows and sha256 of its ``out_jobs.csv``."""
        self.walls.append(wall)
        self.peaks.append(peak)
        if out_jobs is not None:
            self.jobs = len(pd.read_csv(out_jobs, usecols=["job_id"]))
            self.digests.add(sha256(out_jobs))
        print(f"  {self.case} | {self.tool}: {wall:.2f} s, {peak:.0f} MB", file=sys.stderr, flush=True)

    @property
    def wall(self) -> float:
        return statistics.median(self.walls)

    def check(self) -> str:
        """``reference``, ``identical`` or ``DIFFERENT`` (out_jobs.csv against the reference row's), or the note."""
        if self.note or not self.digests:
            return self.note
        if self.reference is None:
            return "reference"
        return "identical" if self.digests == self.reference.digests and len(self.digests) == 1 else "DIFFERENT"

    def markdown(self) -> str:
        ratio = self.wall / self.reference.wall if self.reference else 1.0
        jobs = "" if self.jobs is None else str(self.jobs)
        rate = "" if self.jobs is None else f"{self.jobs / self.wall:.0f}"
        wall = f"{self.wall:.2f}" if self.wall < 10 else f"{self.wall:.1f}"
        return (f"| {self.case} | {self.tool} | {jobs} | {wall} | {rate} | {max(self.peaks):.0f} | "
                f"{ratio:.2f} | {self.check()} |")


def sha256(path: Path) -> str:
    """Hex SHA-256 of a file's bytes."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


#: Run by a bare Python (``-I -S``, about 11 MB): runs a command, prints its wall seconds and peak memory. Linux
#: hands a process the peak of the process it was forked from (``ru_maxrss`` survives ``execve``), so commands
#: are not started from this script, which holds pandas (over 60 MB).
MEASURE = """
import json, os, subprocess, sys, time
started = time.perf_counter()
process = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
_, status, usage = os.wait4(process.pid, 0)
print(json.dumps({"wall_seconds": time.perf_counter() - started, "peak_mb": usage.ru_maxrss / 1024,
                  "status": os.waitstatus_to_exitcode(status)}))
"""

#: Run by this project's Python: a real Batsim next to pybatsim's launcher; prints what the launcher measured.
REAL_BATSIM = """
import json, sys
from batreplay.realbatsim.errors import BatsimLaunchError
from batreplay.realbatsim.pybatsim_run import run_pybatsim_next_to_batsim
batsim, platform, workload, scheduler, out, timeout = sys.argv[1:]
try:
    result = run_pybatsim_next_to_batsim(batsim, platform, workload, scheduler, out, timeout=float(timeout))
except BatsimLaunchError as error:
    sys.exit(str(error))
print(json.dumps({"wall_seconds": result.wall_seconds, "peak_mb": result.peak_mb, "status": 0}))
"""


#: The environment of every measured process: bytecode caching on (a user's machine writes ``.pyc`` files; a
#: ``PYTHONDONTWRITEBYTECODE`` set here would make each run recompile the sources of an editable install).
ENVIRONMENT = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}


def run_measured(command: list[str], *, env: dict[str, str] | None = ENVIRONMENT) -> tuple[float, float]:
    """Run ``command`` (standard output discarded) from a small Python process and return its wall seconds
    and peak resident memory (MB, ``ru_maxrss`` from ``wait4``: the largest of the process and the children it
    waited for; at least about 11 MB, the starting process's).

    Raises:
        SystemExit: the command exited with a non-zero status.
    """
    return _measured([sys.executable, "-I", "-S", "-c", MEASURE, *command], command, env=env)


def _measured(command: list[str], shown: list[str], *, env: dict[str, str] | None = ENVIRONMENT,
              cwd: Path | None = None) -> tuple[float, float]:
    """Run a :data:`MEASURE` or :data:`REAL_BATSIM` process; its ``(wall_seconds, peak_mb)``. ``shown`` is the
    command named if it fails."""
    done = subprocess.run(command, stdout=subprocess.PIPE, text=True, env=env, cwd=cwd, check=False)
    result = json.loads(done.stdout) if done.returncode == 0 else {"status": done.returncode}
    if result["status"] != 0:
        raise SystemExit(f"failed with status {result['status']}: {' '.join(shown)}")
    return result["wall_seconds"], result["peak_mb"]


def batreplay_run(executable: str, workload: Path, platform: str, scheduler: str, out: Path,
                  *extra: str) -> tuple[float, float]:
    """Wall seconds and peak MB of the whole ``batreplay run ... --force --quiet`` command."""
    return run_measured([executable, "run", "--workload", str(workload), "--platform", platform,
                         "--scheduler", scheduler, "--out", str(out), "--force", "--quiet", *extra])


def time_real_batsim(batsim: str, platform: Path, workload: Path, scheduler: str, out: Path,
                     timeout: float = 7200.0) -> tuple[float, float]:
    """Wall seconds (both processes started to both ended) and the larger peak MB of a real ``batsim`` next to
    pybatsim's launcher running ``scheduler`` (a pybatsim scheduler name such as ``easyBackfill``, or a file),
    both started by a small Python process (see :data:`MEASURE`); Batsim's files go to ``out``
    (``out/out_jobs.csv``)."""
    arguments = [batsim, str(platform), str(workload), scheduler, str(out), str(timeout)]
    return _measured([sys.executable, "-c", REAL_BATSIM, *arguments], ["batsim + pybatsim", *arguments], cwd=ROOT)


def write_accasim_swf(jobs_csv: Path, swf: Path) -> Path:
    """Write, as a plain SWF file, the jobs a batreplay run simulated (its ``jobs.csv``): submission time on the
    simulation clock, processors, requested time = the walltime, run time capped at the walltime (Batsim stops a
    job there; AccaSim would not). Other fields are -1, the status 1. Returns ``swf``."""
    jobs = pd.read_csv(jobs_csv)
    swf_fields = pd.DataFrame({
        "job_id": jobs["job_id"], "submission_time": jobs["recorded_submission_time"].round().astype(int),
        "wait_time": -1, "run_time": jobs[["run_time", "walltime"]].min(axis=1).round().astype(int),
        "allocated_processors": jobs["res"], "average_cpu_time": -1, "used_memory": -1,
        "requested_processors": jobs["res"], "requested_time": jobs["walltime"].round().astype(int),
        "requested_memory": -1, "status": 1, "user_id": jobs["user_id"]})
    for name in ("group_id", "executable_id", "queue_id", "partition_id", "preceding_job_id", "think_time"):
        swf_fields[name] = -1
    swf_fields.to_csv(swf, sep=" ", header=False, index=False)
    return swf


def schedule_difference(out_jobs: Path, theirs: pd.DataFrame) -> str:
    """How another simulator's schedule compares with batreplay's ``out_jobs.csv``: the share of jobs starting
    at the same second and the largest waits (days). ``theirs`` has columns ``job_id``, ``submission_time`` and
    ``starting_time`` (seconds)."""
    ours = pd.read_csv(out_jobs, usecols=["job_id", "starting_time", "waiting_time"])
    both = ours.merge(theirs, on="job_id", suffixes=("", "_other"), validate="one_to_one")
    same = ((both["starting_time"] - both["starting_time_other"]).abs() < 0.5).mean()
    their_max = (both["starting_time_other"] - both["submission_time"]).max() / SECONDS_PER_DAY
    return (f"{same:.1%} same starts, max wait {their_max:.1f} d "
            f"(ours {both['waiting_time'].max() / SECONDS_PER_DAY:.1f} d)")


def read_accasim_schedule(schedule: Path) -> pd.DataFrame:
    """``accasim_easy.py``'s ``schedule.csv`` (no header, ``;``-separated)."""
    return pd.read_csv(schedule, sep=";", header=None,
                       names=["job_id", "submission_time", "starting_time", "finish_time"])


def machine_header() -> str:
    """Date, CPU model, cores, load (``uptime``) and the code measured, as Markdown lines."""
    cpu = next((entry["data"] for entry in json.loads(subprocess.run(
        ["lscpu", "-J"], capture_output=True, text=True, check=True).stdout)["lscpu"]
                if entry["field"] == "Model name:"), "unknown CPU")
    uptime = subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, check=False).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True, check=False).stdout.strip()
    return (f"- date: {datetime.datetime.now().astimezone():%Y-%m-%d %H:%M %Z}\n"
            f"- machine: {cpu}, {os.cpu_count()} cores, Python {python_platform.python_version()}; "
            f"`uptime`: {uptime}\n"
            f"- code: {ROOT.name} at {commit}{' with local changes' if dirty else ''}")


class Benchmark:
    """The runs of one invocation; ``rows`` in table order."""

    def __init__(self, args: argparse.Namespace, work: Path):
        self.args = args
        self.work = work
        self.executables = {"batreplay": str(args.batreplay), **dict(args.compare)}
        self.rows: list[Row] = []

    def _rows(self, case: str) -> dict[str, Row]:
        """One row per batreplay executable, the first one the reference of the others."""
        rows = {name: Row(case, name) for name in self.executables}
        for row in list(rows.values())[1:]:
            row.reference = rows["batreplay"]
        self.rows.extend(rows.values())
        return rows

    def platform_of(self, log: LogSetup) -> tuple[str, Path]:
        """The ``--platform`` argument for batreplay and the platform file for Batsim."""
        from batreplay.platforms.generate import write_platform
        from batreplay.platforms.shipped import shipped_platform_path

        if log.platform is not None:
            return log.platform, shipped_platform_path(log.platform)
        path = write_platform(self.work / f"cluster-{log.nodes}.xml", log.nodes, 1e9)
        return str(path), path

    def simulations(self, key: str, log: LogSetup, scheduler: str) -> None:
        """The ``batreplay run`` of every executable, then Batsim and AccaSim on the same jobs, interleaved."""
        platform, platform_file = self.platform_of(log)
        case = f"{log.name} {scheduler}"
        rows = self._rows(case)
        main_out = self.work / f"{key}-{scheduler}-batreplay"
        batsim = shutil.which("batsim") if self.args.batsim and scheduler == "easy" else None
        batsim_rows = {}
        if batsim and key in self.args.batsim_logs:
            batsim_rows = {"easyBackfill": Row(case, "Batsim 4.2.1 + pybatsim easyBackfill"),
                           str(ROOT / "schedulers" / "easy.py"): Row(case, "Batsim 4.2.1 + batreplay easy.py")}
        accasim_row = None
        accasim = self.args.accasim_python
        if accasim and scheduler == "easy" and key in self.args.accasim_logs:
            accasim_row = Row(case, "AccaSim 1.1.3 EASY + first fit")
        for row in [*batsim_rows.values(), accasim_row]:
            if row is not None:
                row.reference = rows["batreplay"]
                self.rows.append(row)
        for name, executable in self.executables.items():  # warm-up: caches bytecode and the log's file pages
            batreplay_run(executable, log.swf, platform, scheduler, self.work / f"warm-up-{name}", "--max-jobs", "500")
        for repetition in range(self.args.repeat):
            order = list(self.executables.items())
            order = order[repetition % len(order):] + order[:repetition % len(order)]  # each one first in turn
            for name, executable in order:
                out = main_out if name == "batreplay" else self.work / f"{key}-{scheduler}-{name}"
                rows[name].add(*batreplay_run(executable, log.swf, platform, scheduler, out), out / "out_jobs.csv")
            for index, (decision_process, row) in enumerate(batsim_rows.items()):
                out = self.work / f"{key}-batsim-{index}-{repetition}"
                row.add(*time_real_batsim(batsim, platform_file, main_out / "workload.json", decision_process, out),
                        out / "out_jobs.csv")
            if accasim_row is not None:
                swf = write_accasim_swf(main_out / "jobs.csv", self.work / f"{key}-accasim.swf")
                out = self.work / f"{key}-accasim"
                accasim_row.add(*run_measured([str(accasim), str(ACCASIM_SCRIPT), "--swf", str(swf),
                                               "--nodes", str(log.nodes), "--out", str(out)]))
                schedule = read_accasim_schedule(out / "schedule.csv")
                accasim_row.jobs = len(schedule)
                accasim_row.note = f"another EASY: {schedule_difference(main_out / 'out_jobs.csv', schedule)}"
        pybatsim = batsim_rows.get("easyBackfill")
        if pybatsim is not None and pybatsim.check() == "DIFFERENT":
            theirs = pd.read_csv(self.work / f"{key}-batsim-0-{self.args.repeat - 1}" / "out_jobs.csv")
            pybatsim.note = f"another EASY: {schedule_difference(main_out / 'out_jobs.csv', theirs)}"

    def feedback(self) -> None:
        """A feedback replay (sessions a60, EASY) on KTH-SP2 by every batreplay executable."""
        log = LOGS["kth"]
        rows = self._rows(f"{log.name} easy, feedback a60")
        for _ in range(self.args.repeat):
            for name, executable in self.executables.items():
                out = self.work / f"feedback-{name}"
                rows[name].add(*batreplay_run(executable, log.swf, log.platform, "easy", out, "--replay", "feedback",
                                              "--sessions", "a60"), out / "out_jobs.csv")

    def demand_rounds(self) -> None:
        """KTH-SP2 in 4 demand rounds (``--io-share 0.2``, every job reads from a storage host 4 times) on 100 nodes
        with I/O links of 1e8 bytes/s (``batreplay platform --nodes 100 --io-rate 1e8``), EASY, by every batreplay
        executable: the embedded engine's links solver and its node I/O trace (``node_io_rates.csv``), beside the
        compute-only KTH-SP2 row."""
        from batreplay.platforms.generate import write_platform

        log = LOGS["kth"]
        platform = write_platform(self.work / "kth-io.xml", log.nodes, 1e9, io_rate=1e8)
        rows = self._rows(f"{log.name} easy, 4 demand rounds, I/O links")
        for _ in range(self.args.repeat):
            for name, executable in self.executables.items():
                out = self.work / f"rounds-{name}"
                rows[name].add(*batreplay_run(executable, log.swf, str(platform), "easy", out, "--demand-rounds", "4",
                                              "--io-share", "0.2"), out / "out_jobs.csv")

    def help(self) -> None:
        """``batreplay --help`` of every executable with bytecode caching on (one warm-up run first)."""
        rows = self._rows("`batreplay --help` (warm bytecode)")
        for executable in self.executables.values():
            run_measured([executable, "--help"])
        for _ in range(self.args.help_runs):
            for name, executable in self.executables.items():
                rows[name].add(*run_measured([executable, "--help"]))

    def table(self) -> str:
        lines = ["| case | tool | jobs | wall (s) | jobs/s | peak MB | wall / batreplay's | out_jobs.csv |",
                 "|---|---|---|---|---|---|---|---|"]
        return "\n".join(lines + [row.markdown() for row in self.rows])


def log_keys(names: list[str]) -> list[str]:
    """Keys of :data:`LOGS` for names given as a key (``kth``), a log name or ``all``."""
    by_name = {setup.name: key for key, setup in LOGS.items()}
    keys = []
    for name in names:
        if name == "all":
            keys.extend(LOGS)
        elif name.lower() in LOGS or name in by_name:
            keys.append(by_name.get(name, name.lower()))
        else:
            raise argparse.ArgumentTypeError(f"unknown log {name!r}: one of {', '.join(LOGS)}, their full names, all")
    return list(dict.fromkeys(keys))


def executable_pair(text: str) -> tuple[str, str]:
    """``NAME=PATH`` of ``--compare`` (PATH must be an executable file)."""
    name, separator, path = text.partition("=")
    if not separator or not name or name == "batreplay" or not os.access(path, os.X_OK):
        raise argparse.ArgumentTypeError(f"expected NAME=PATH of a batreplay executable, NAME not 'batreplay', "
                                         f"got {text!r}")
    return name, path


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logs", nargs="+", default=["kth"], help=f"{', '.join(LOGS)}, full log names or all")
    parser.add_argument("--schedulers", nargs="+", default=["easy"], help="built-in scheduler names")
    parser.add_argument("--repeat", type=int, default=3, help="repetitions of every run (medians reported)")
    parser.add_argument("--batreplay", type=Path, default=Path(sys.executable).with_name("batreplay"),
                        help="the batreplay executable measured (default: the one next to this Python)")
    parser.add_argument("--compare", type=executable_pair, action="append", default=[], metavar="NAME=PATH",
                        help="another batreplay executable run side by side (repeatable), e.g. "
                             "before=/tmp/before/.venv/bin/batreplay")
    parser.add_argument("--no-batsim", dest="batsim", action="store_false",
                        help="no real Batsim even with a batsim on PATH")
    parser.add_argument("--batsim-logs", nargs="+", default=["kth"],
                        help="logs on which real Batsim runs (EASY only; default: kth, about 45 s a run)")
    parser.add_argument("--accasim-python", type=Path,
                        default=DEFAULT_ACCASIM_PYTHON if DEFAULT_ACCASIM_PYTHON.exists() else None,
                        help=f"Python of an AccaSim 1.1.3 environment (default: {DEFAULT_ACCASIM_PYTHON} if it "
                             "exists)")
    parser.add_argument("--no-accasim", dest="accasim_python", action="store_const", const=None,
                        help="no AccaSim")
    parser.add_argument("--accasim-logs", nargs="+", default=["all"], help="logs on which AccaSim runs (EASY only)")
    parser.add_argument("--feedback", action="store_true", help="also a feedback replay (a60) on KTH-SP2")
    parser.add_argument("--demand-rounds", action="store_true",
                        help="also KTH-SP2 in 4 demand rounds of reads on 100 nodes with I/O links")
    parser.add_argument("--help-runs", type=int, default=5, help="runs of `batreplay --help` (0: none)")
    parser.add_argument("--keep", type=Path, help="keep every output in this folder (default: a temporary one)")
    args = parser.parse_args()
    if args.repeat < 1 or args.help_runs < 0:
        parser.error("--repeat must be at least 1 and --help-runs at least 0")
    try:
        args.logs, args.batsim_logs, args.accasim_logs = (log_keys(names) for names in
                                                          (args.logs, args.batsim_logs, args.accasim_logs))
    except argparse.ArgumentTypeError as error:
        parser.error(str(error))
    return args


def main() -> None:
    args = parse_arguments()
    print(machine_header(), flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-performance-") as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        bench = Benchmark(args, work)
        for key in args.logs:
            for scheduler in args.schedulers:
                bench.simulations(key, LOGS[key], scheduler)
        if args.feedback:
            bench.feedback()
        if args.demand_rounds:
            bench.demand_rounds()
        if args.help_runs:
            bench.help()
    print(f"\n{args.repeat} repetition(s) interleaved, medians ({args.help_runs} for --help); wall / batreplay's "
          f"> 1: slower than batreplay ({args.batreplay}).\n")
    print(bench.table())


if __name__ == "__main__":
    main()
