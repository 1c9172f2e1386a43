"""Test doubles for Batsim's side of the protocol over real ZeroMQ sockets, and a fake ``batsim`` command.

- :class:`ZmqBatsim`: what Batsim does on the wire: a REQ socket connected to a decision process's REP socket,
  one request, one reply, every wait bounded.
- :func:`pybatsim_process`: a decision process started by pybatsim's own launcher in a separate process
  (``pybatsim SCHEDULER -s tcp://127.0.0.1:PORT -t 0``), killed when the block ends.
- :func:`drive_engine`: the embedded engine playing Batsim over a :class:`ZmqBatsim`.
- :func:`fake_batsim_main` / :func:`write_fake_batsim`: an executable that answers Batsim 4.2's command line
  (``--version``, ``-p -w -e -s``, dynamic-job flags) and, depending on its mode, speaks the protocol with the
  embedded engine and writes Batsim's output files, or crashes, hangs, refuses its inputs, ... (launcher tests).

Golden recordings come from ``../shared/batsim-golden`` (conftest.GOLDEN).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import zmq

from batreplay.engine.simulator import BatsimEngine, EngineOptions

# The fake `batsim` imports this module at start-up: heavier modules (pandas through engine.outputs, the
# platform reader) are imported where they are used, so that it connects quickly.

TESTS_DIR = Path(__file__).resolve().parent
PROBES_DIR = TESTS_DIR / "probes"
#: How far a number may be from the recorded one. 0: the engine reports times as Batsim prints them (six
#: decimals of SimGrid's clock), so messages and outputs match exactly.
TOLERANCE = 0.0
#: Between two out_jobs tables whose times are printed with six decimals: a time derived from printed values
#: (waiting time = start - submission) may differ from the printed one by a float rounding, far below 1e-6 s.
PRINTED_TOLERANCE = 1e-9
REPLY_TIMEOUT = 30.0  # seconds a double waits for one reply before giving up


def wait_until_gone(pid: int, seconds: float = 60.0) -> bool:
    """Wait until no process ``pid`` runs any more (a zombie waiting for its parent counts as gone); False if it
    still runs after ``seconds`` (a generous bound: a pass never depends on how fast the machine is)."""
    from batreplay.atomic import process_alive

    deadline = time.monotonic() + seconds
    while process_alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def transcript_pairs(case_dir: Path) -> list[tuple[dict, dict]]:
    """The (Batsim message, scheduler reply) pairs of a golden ``transcript.jsonl``, checked to alternate."""
    with open(case_dir / "transcript.jsonl") as stream:
        lines = [json.loads(line) for line in stream]
    pairs = []
    for request, reply in zip(lines[0::2], lines[1::2]):
        assert (request["from"], reply["from"]) == ("batsim", "scheduler"), f"{case_dir}: seq {request['seq']}"
        assert request["seq"] == reply["seq"]
        pairs.append((request["msg"], reply["msg"]))
    assert 2 * len(pairs) == len(lines), f"{case_dir}: odd number of transcript lines"
    return pairs


def batsim_options(case_dir: Path) -> EngineOptions:
    """Engine options from a golden case's ``batsim_args.txt`` (Batsim's dynamic-job flags)."""
    args = (case_dir / "batsim_args.txt").read_text().split()
    return EngineOptions(dynamic_jobs="--enable-dynamic-jobs" in args,
                         acknowledge_dynamic_jobs="--acknowledge-dynamic-jobs" in args,
                         profile_reuse="--enable-profile-reuse" in args,
                         compute_sharing="--enable-compute-sharing" in args)


def engine_for(platform: Path, workload: Path, options: EngineOptions | None = None) -> BatsimEngine:
    """An embedded engine on a platform file and one workload file (named ``w0``, as Batsim names it)."""
    from batreplay.platforms.reader import read_platform

    compute = read_platform(platform)
    hosts = [(h.name, h.speed) for h in compute.hosts]
    document = json.loads(Path(workload).read_text())
    return BatsimEngine(hosts, {"w0": document}, {"w0": Path(workload).name}, options or EngineOptions(),
                        cores=compute.cores, host_properties=compute.host_properties,
                        storage=compute.storage_resources, network=compute.network, master_host=compute.master_host)


def replay_transcript(case_dir: Path) -> int:
    """Feed an embedded engine on ``case_dir``'s inputs the recorded scheduler replies of its ``transcript.jsonl``;
    assert it sends exactly the recorded Batsim messages, and nothing after the last; return how many."""
    engine = engine_for(case_dir / "platform.xml", case_dir / "workload.json", batsim_options(case_dir))
    pairs = transcript_pairs(case_dir)
    for seq, (request, reply) in enumerate(pairs):
        got = engine.next_request()
        assert got is not None, f"{case_dir.name}: the engine ended before message {seq}"
        difference = json_difference(got, request)
        assert difference is None, f"{case_dir.name}, message {seq}: {difference}"
        engine.apply_reply(reply)
    assert engine.next_request() is None, f"{case_dir.name}: the engine goes on after SIMULATION_ENDS"
    return len(pairs)


def json_difference(got, expected, path: str = "msg") -> str | None:
    """The first difference between two decoded JSON values, numbers compared to :data:`TOLERANCE`; None if
    they are equal. Lists are compared in order (event order matters in the protocol)."""
    if isinstance(expected, dict):
        if not isinstance(got, dict) or set(got) != set(expected):
            return f"{path}: {got!r} != {expected!r}"
        for key in expected:
            found = json_difference(got[key], expected[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(expected, list):
        if not isinstance(got, list) or len(got) != len(expected):
            return f"{path}: {got!r} != {expected!r}"
        for index, (a, b) in enumerate(zip(got, expected)):
            found = json_difference(a, b, f"{path}[{index}]")
            if found:
                return found
        return None
    if isinstance(expected, (int, float)) and not isinstance(expected, bool):
        same = (isinstance(got, (int, float)) and not isinstance(got, bool)
                and math.isclose(got, expected, rel_tol=0, abs_tol=TOLERANCE))
        return None if same else f"{path}: {got!r} != {expected!r}"
    return None if got == expected else f"{path}: {got!r} != {expected!r}"


class ZmqBatsim:
    """Batsim's end of the connection: a REQ socket connected to ``endpoint``.

    Args:
        endpoint: the decision process's endpoint (``tcp://127.0.0.1:PORT``).
        reply_timeout: seconds to wait for each reply.
        peer: the decision process, when it is a subprocess: its death ends a wait at once.
    """

    def __init__(self, endpoint: str, reply_timeout: float = REPLY_TIMEOUT,
                 peer: subprocess.Popen | None = None) -> None:
        self.endpoint = endpoint
        self.reply_timeout = reply_timeout
        self.peer = peer
        self.context = zmq.Context()
        self.socket = self.context.socket(zmq.REQ)
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.connect(endpoint)
        self.exchanges = 0

    def exchange(self, message: dict) -> dict:
        """Send one Batsim message, return the decoded reply.

        Raises:
            TimeoutError: no reply within ``reply_timeout`` seconds.
            RuntimeError: the decision process exited.
        """
        self.socket.send_string(json.dumps(message))
        deadline = time.monotonic() + self.reply_timeout
        while not self.socket.poll(20, zmq.POLLIN):
            # a decision process may send its last reply and exit before the reply is read here: look once more
            if self.peer is not None and self.peer.poll() is not None and not self.socket.poll(1000, zmq.POLLIN):
                raise RuntimeError(f"the decision process exited with status {self.peer.returncode} "
                                   f"after {self.exchanges} exchanges")
            if time.monotonic() > deadline:
                raise TimeoutError(f"no reply from {self.endpoint} within {self.reply_timeout} s "
                                   f"(after {self.exchanges} exchanges)")
        self.exchanges += 1
        return json.loads(self.socket.recv())

    def close(self) -> None:
        self.socket.close(linger=0)
        self.context.term()


def pybatsim_command(scheduler: str, endpoint: str, options: dict | None = None) -> list[str]:
    """pybatsim's own launcher: ``pybatsim SCHEDULER -s ENDPOINT -t 0`` from the interpreter's environment."""
    script = Path(sys.executable).with_name("pybatsim")
    launcher = [str(script)] if script.is_file() else [sys.executable, "-m", "batsim.cmds.launcher"]
    command = launcher + [scheduler, "-s", endpoint, "-t", "0"]
    if options:
        command += ["-o", json.dumps(options)]
    return command


@contextmanager
def pybatsim_process(scheduler: str, log_dir: Path, options: dict | None = None,
                     cwd: Path | None = None) -> Iterator[tuple[ZmqBatsim, subprocess.Popen]]:
    """A decision process run by pybatsim's launcher on a free loopback port, and a :class:`ZmqBatsim`
    connected to it. Both are stopped when the block ends, whatever happens; the process's output goes to
    ``log_dir/pybatsim.log`` (quoted in the error if the block fails)."""
    from batreplay.realbatsim.process import free_tcp_port, terminate_process_group

    port = free_tcp_port()
    log_path = log_dir / "pybatsim.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(pybatsim_command(scheduler, f"tcp://127.0.0.1:{port}", options),
                                   stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                   cwd=cwd, start_new_session=True)
    batsim = ZmqBatsim(f"tcp://127.0.0.1:{port}", peer=process)
    try:
        yield batsim, process
    except BaseException as error:
        error.add_note(f"pybatsim's output:\n{log_path.read_text(errors='replace')[-3000:]}")
        raise
    finally:
        batsim.close()
        terminate_process_group(process, grace=1.0)


def wait_exit(process: subprocess.Popen, timeout: float = 10.0) -> int:
    """The exit status of ``process``, waiting at most ``timeout`` seconds (TimeoutExpired otherwise)."""
    return process.wait(timeout=timeout)


def drive_engine(engine: BatsimEngine, batsim: ZmqBatsim) -> int:
    """Play Batsim with ``engine`` over ``batsim``'s socket until the end; return the number of messages."""
    messages = 0
    while (request := engine.next_request()) is not None:
        engine.apply_reply(batsim.exchange(request))
        messages += 1
    return messages


# --- a fake `batsim` executable -------------------------------------------------------------------------------

FAKE_MODES = ("protocol", "crash", "signal", "hang", "silent", "refuse", "no_output", "linger")
#: Written by the ``hang``, ``silent`` and ``linger`` fakes (in their working directory, the export directory)
#: once they are in the state they stay in: a test can start a timeout's window from that moment.
FAKE_HANGING = "fake_batsim_hanging"


def _fake_arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="batsim", description="fake Batsim 4.2 for batreplay's tests")
    parser.add_argument("--version", action="store_true")
    parser.add_argument("-p", "--platform")
    parser.add_argument("-w", "--workload", action="append", default=[])
    parser.add_argument("-e", "--export", default="out")
    parser.add_argument("-s", "--socket-endpoint", default="tcp://localhost:28000")
    parser.add_argument("-m", "--master-host", default="master_host")
    parser.add_argument("--enable-dynamic-jobs", action="store_true")
    parser.add_argument("--acknowledge-dynamic-jobs", action="store_true")
    parser.add_argument("--enable-profile-reuse", action="store_true")
    return parser.parse_args(argv)


def _hang() -> None:
    """Say that this fake now stays as it is (:data:`FAKE_HANGING`), then sleep."""
    Path(FAKE_HANGING).write_text(str(os.getpid()))
    time.sleep(600)


def _sleep_forever_with_child() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    Path("fake_batsim_pids.json").write_text(json.dumps({"batsim": os.getpid(), "child": child.pid}))
    _hang()


def fake_batsim_main(argv: list[str], mode: str = "protocol", version: str = "4.2.1",
                     startup_delay: float = 0.0) -> int:
    """A stand-in for the ``batsim`` command (see :data:`FAKE_MODES`).

    ``--version`` prints ``version`` (``"hang"``: never answers). Otherwise it records its arguments in
    ``fake_batsim_argv.json`` and its pid in ``fake_batsim_pids.json`` (current directory) and, by mode:

    - ``protocol``: plays Batsim with the embedded engine over a REQ socket connected to ``-s``, then writes
      ``PREFIX_jobs.csv`` and ``PREFIX_schedule.csv`` (``-e PREFIX``), exit 0;
    - ``crash``: answers one exchange, prints an error on stderr, exit 3;
    - ``signal``: dies of SIGSEGV at once;
    - ``hang``: starts a child process, adds its pid to ``fake_batsim_pids.json``, sleeps;
    - ``silent``: answers one exchange, then sleeps (stops answering);
    - ``refuse``: prints a CRITICAL line on stderr and exits 0 without connecting (what Batsim does with a
      delay profile of 0 s);
    - ``no_output``: plays the whole protocol, exits 0 without writing outputs;
    - ``linger``: plays the whole protocol, writes outputs, then sleeps instead of exiting.

    ``hang``, ``silent`` and ``linger`` write :data:`FAKE_HANGING` when they start sleeping. ``startup_delay``
    (seconds) is slept before anything else but ``--version``: a Batsim starting slowly on a busy machine.
    """
    if "--version" in argv:
        if version == "hang":
            time.sleep(600)
        print(version)
        return 0
    time.sleep(startup_delay)
    args = _fake_arguments(argv)
    Path("fake_batsim_argv.json").write_text(json.dumps(argv))
    Path("fake_batsim_pids.json").write_text(json.dumps({"batsim": os.getpid()}))
    if mode == "hang":
        _sleep_forever_with_child()
        return 0
    if mode == "signal":
        os.kill(os.getpid(), signal.SIGSEGV)
    if mode == "refuse":
        print("[batsim] CRITICAL: invalid delay profile 'd0': delay must be strictly positive", file=sys.stderr)
        return 0
    options = EngineOptions(dynamic_jobs=args.enable_dynamic_jobs,
                            acknowledge_dynamic_jobs=args.acknowledge_dynamic_jobs,
                            profile_reuse=args.enable_profile_reuse)
    engine = engine_for(Path(args.platform), Path(args.workload[0]), options)
    batsim = ZmqBatsim(args.socket_endpoint)
    try:
        if mode in ("crash", "silent"):
            batsim.exchange(engine.next_request())
            if mode == "crash":
                print("[batsim] line one of the log\n[batsim] fatal: fake failure for the tests", file=sys.stderr)
                return 3
            _hang()
            return 0
        drive_engine(engine, batsim)
    finally:
        batsim.close()
    if mode == "no_output":
        return 0
    from batreplay.formats.out_jobs_writer import write_out_jobs
    from batreplay.formats.out_schedule import schedule_summary, write_out_schedule

    prefix = args.export
    jobs = write_out_jobs(engine.records, Path(f"{prefix}_jobs.csv"))
    write_out_schedule(schedule_summary(jobs, engine.nb_hosts, 0.0, 0.0),
                       Path(f"{prefix}_schedule.csv"))
    if mode == "linger":
        _hang()
    return 0


def write_fake_batsim(directory: Path, mode: str = "protocol", version: str = "4.2.1",
                      name: str = "batsim", startup_delay: float = 0.0) -> Path:
    """Write an executable ``directory/name`` that runs :func:`fake_batsim_main` with this mode, version and
    start-up delay."""
    assert mode in FAKE_MODES, mode
    path = Path(directory) / name
    path.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        f"sys.path.insert(0, {str(TESTS_DIR)!r})\n"
        "from batsim_doubles import fake_batsim_main\n"
        f"sys.exit(fake_batsim_main(sys.argv[1:], mode={mode!r}, version={version!r}, "
        f"startup_delay={startup_delay!r}))\n"
    )
    path.chmod(0o755)
    return path
