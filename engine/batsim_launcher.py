"""Run a decision process against a real Batsim 4.2 over ZeroMQ: find and check ``batsim``, start it, watch it.

Batsim holds a ZeroMQ REQ socket and connects it to the decision process, which binds a REP socket
(``../shared/docs/batsim-protocol-notes.md``, "Transport and envelope"). :func:`run_with_batsim` therefore:

1. finds the ``batsim`` executable (:func:`find_batsim`) and checks that ``batsim --version`` says 4.2.x
   (:func:`check_batsim_version`);
2. binds the decision process's REP socket on a free loopback port (``tcp://127.0.0.1:PORT``; the port is
   chosen by ZeroMQ at bind time, so no other process can take it in between);
3. starts ``batsim -p PLATFORM -w WORKLOAD -e EXPORT_DIR/out -s tcp://127.0.0.1:PORT [dynamic-job flags]``
   in its own process group, its standard output and error going to log files in the export directory;
4. runs the pybatsim decision process (any ``BatsimScheduler``) in the calling thread until Batsim's
   SIMULATION_ENDS has been answered, then waits for Batsim to exit and checks that it wrote its output
   files.

Batsim's command-line flags are those of its 4.2 ``docopt`` usage text (``-p/--platform``, ``-w/--workload``,
``-e/--export`` (a file-name prefix, default ``out``), ``-s/--socket-endpoint``, ``-m/--master-host``,
``--enable-dynamic-jobs``, ``--acknowledge-dynamic-jobs``, ``--enable-profile-reuse``,
``--enable-compute-sharing``, ``--version``).
With the prefix ``EXPORT_DIR/out`` Batsim writes ``EXPORT_DIR/out_jobs.csv``, ``out_schedule.csv`` and
``out_machine_states.csv``, the names the rest of batreplay uses.

Every wait is bounded. While the decision process waits for a message, the socket is polled in short slices
and Batsim's process is checked between them: a Batsim that exits, crashes or stays silent longer than
``timeout`` seconds ends the run with a :class:`BatsimLaunchError` subclass, and Batsim's whole process group
is killed on any failure (including an exception in the scheduler or a ``KeyboardInterrupt``): no process is
left behind. A Batsim that exits with status 0 without writing its outputs (it does so, for instance, when it
refuses a ``delay`` profile of 0 s) is an error too (:class:`BatsimNoOutput`).

All errors derive from :class:`RuntimeError` (the command line prints them as one-line errors); their first
line says what to do. Batsim's standard error goes to ``batsim.stderr.log`` in the export directory, or, when the
caller names another file (``stderr_log``), there while Batsim runs and into the export directory only once the
run succeeded: the messages name the file where the log stays.

:func:`run_pybatsim_next_to_batsim` runs pybatsim's own launcher and ``batsim`` as two processes, as a user would
in two terminals (the reference the tests and benchmarks compare with). This module imports pyzmq, and
:mod:`.decision_process` (pybatsim) when a run starts; it never imports the embedded engine.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import zmq

from batreplay.engine.choices import DEFAULT_TIMEOUT  # the default of ``timeout`` (--batsim-timeout)

if TYPE_CHECKING:
    from batsim.batsim import BatsimScheduler

#: The Batsim release series whose protocol and outputs batreplay is checked against (``../shared/batsim-golden``).
SUPPORTED_SERIES = "4.2"
#: Batsim's ``-e`` prefix, relative to the export directory: files become ``out_jobs.csv`` and so on.
EXPORT_PREFIX = "out"
#: Output files a successful Batsim 4.2 run must have written (its ``-e`` prefix + these suffixes).
REQUIRED_OUTPUTS = ("jobs.csv", "schedule.csv")
#: Where Batsim's standard output and error go, in the export directory.
STDOUT_LOG = "batsim.stdout.log"
STDERR_LOG = "batsim.stderr.log"

_INSTALL_HINT = ("install Batsim 4.2.x (Nix package `batsim` from oar-team/nur-kapack, or the oarteam/batsim "
                 "Docker image: see docs/real-batsim.md), pass --batsim /path/to/batsim, "
                 "or use --engine embedded")
_POLL_SLICE_MS = 50
#: The clock of every wait on Batsim (seconds); the tests replace it to start a wait's window only once a fake
#: Batsim is provably hanging, so that no test depends on the machine's speed.
_clock = time.monotonic
_CLOSE_LINGER_MS = 2000
_VERSION_PATTERN = re.compile(r"v?(\d+)\.(\d+)\.(\d+)")


class BatsimLaunchError(RuntimeError):
    """Batsim could not be found, started, or did not finish a simulation properly."""


class BatsimNotFound(BatsimLaunchError):
    """No usable ``batsim`` executable (not on PATH, or the given path is not an executable file)."""


class BatsimVersionError(BatsimLaunchError):
    """``batsim --version`` failed, could not be read, or names a release outside the supported series."""


class BatsimCrashed(BatsimLaunchError):
    """Batsim exited with a non-zero status, was killed by a signal, or exited before the simulation ended.

    Attributes:
        exit_status: Batsim's exit status (negative: killed by that signal number), to propagate.
        stderr_tail: the last lines of Batsim's standard error.
    """

    def __init__(self, message: str, exit_status: int | None, stderr_tail: str = "") -> None:
        super().__init__(message)
        self.exit_status = exit_status
        self.stderr_tail = stderr_tail


class BatsimTimeout(BatsimLaunchError):
    """Batsim stopped answering: it did not connect, stayed silent, or did not exit in time."""


class BatsimNoOutput(BatsimLaunchError):
    """Batsim exited with status 0 but did not write its output files."""


class BatsimProtocolError(BatsimLaunchError):
    """Batsim sent something that is not a protocol message (not JSON, or no ``now``/``events``)."""


@dataclass
class BatsimRunResult:
    """What a finished real-Batsim run produced.

    Attributes:
        export_dir: the directory holding Batsim's outputs and logs.
        outputs: Batsim's output files by name (``out_jobs.csv``, ``out_schedule.csv``, ...).
        batsim_path: the executable that ran.
        batsim_version: what ``batsim --version`` printed (None when the check was skipped).
        command: Batsim's full command line.
        endpoint: the decision process's ZeroMQ endpoint (``tcp://127.0.0.1:PORT``).
        messages: number of Batsim messages answered.
        scheduler_seconds: wall-clock seconds spent in the decision process (from a message's arrival to its
            reply).
        wall_seconds: wall-clock seconds of the whole run.
        stdout_log, stderr_log: Batsim's standard output and error.
    """

    export_dir: Path
    outputs: dict[str, Path]
    batsim_path: Path
    batsim_version: str | None
    command: list[str]
    endpoint: str
    messages: int
    scheduler_seconds: float
    wall_seconds: float
    stdout_log: Path
    stderr_log: Path

    @property
    def out_jobs(self) -> Path:
        """Batsim's ``out_jobs.csv``."""
        return self.outputs["out_jobs.csv"]


def find_batsim(path: str | os.PathLike[str] | None = None) -> Path:
    """The ``batsim`` executable to run, as an absolute path.

    Args:
        path: an explicit executable (the ``--batsim`` option): a file path, or a bare command name looked up
            on PATH. None: ``batsim`` on PATH.

    Raises:
        BatsimNotFound: nothing executable there; the one-line message says what to install or which flag to
            pass.
    """
    if path is None:
        found = shutil.which("batsim")
        if found is None:
            raise BatsimNotFound(f"batsim not found on PATH: {_INSTALL_HINT}")
        return Path(found).resolve()
    text = os.fspath(path)
    candidate = Path(text).expanduser()
    if os.sep not in text and (os.altsep is None or os.altsep not in text) and not candidate.exists():
        found = shutil.which(text)
        if found is None:
            raise BatsimNotFound(f"--batsim {text}: no such command on PATH; {_INSTALL_HINT}")
        return Path(found).resolve()
    if not candidate.exists():
        raise BatsimNotFound(f"--batsim {text}: no such file; {_INSTALL_HINT}")
    if not candidate.is_file():
        raise BatsimNotFound(f"--batsim {text}: not a file (give the batsim executable itself)")
    if not os.access(candidate, os.X_OK):
        raise BatsimNotFound(f"--batsim {text}: not executable (chmod +x it, or give the batsim executable)")
    return candidate.resolve()


def parse_batsim_version(text: str) -> tuple[int, int, int] | None:
    """The first ``MAJOR.MINOR.PATCH`` in ``batsim --version`` output (``4.2.1``, ``v4.2.1-3-gabc``), or None.

    Batsim prints the version its build was given: the Meson project version or ``git describe`` output.
    """
    match = _VERSION_PATTERN.search(text)
    return None if match is None else (int(match[1]), int(match[2]), int(match[3]))


def check_batsim_version(path: str | os.PathLike[str], *, series: str = SUPPORTED_SERIES,
                         timeout: float = 20.0) -> str:
    """Run ``batsim --version`` and check that it names a release of ``series`` (``"4.2"``: 4.2.x).

    Returns:
        The version text Batsim printed (stripped).

    Raises:
        BatsimVersionError: the command failed, did not answer within ``timeout`` seconds (it is then killed),
            printed no version, or a version outside ``series``.
    """
    command = [os.fspath(path), "--version"]
    try:
        status, out, err = _run_bounded(command, timeout)
    except subprocess.TimeoutExpired:
        raise BatsimVersionError(f"`{' '.join(command)}` did not answer within {timeout:g} s "
                                 f"(killed): is it really Batsim? {_INSTALL_HINT}") from None
    except OSError as error:
        raise BatsimVersionError(f"cannot run `{' '.join(command)}`: {error.strerror or error}") from error
    text = (out.strip() or err.strip())
    if status != 0:
        detail = _one_line(err or out) or "no output"
        raise BatsimVersionError(f"`{' '.join(command)}` failed with status {status} ({detail}): {_INSTALL_HINT}")
    version = parse_batsim_version(text)
    if version is None:
        raise BatsimVersionError(f"`{' '.join(command)}` printed no version number ({_one_line(text)!r}): "
                                 f"is it really Batsim? {_INSTALL_HINT}")
    wanted = tuple(int(part) for part in series.split("."))
    if version[: len(wanted)] != wanted:
        found = ".".join(map(str, version))
        raise BatsimVersionError(f"{path} is Batsim {found}, batreplay needs Batsim {series}.x (its protocol "
                                 f"and outputs are checked against 4.2.1): {_INSTALL_HINT}")
    return text


def free_tcp_port(host: str = "127.0.0.1") -> int:
    """A TCP port that was free on ``host`` a moment ago (the OS picks it; another process may take it before
    it is used: bind with :meth:`zmq.Socket.bind_to_random_port` when the binding socket is at hand)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def batsim_command(batsim: Path, platform: Path, workload: Path, export_prefix: Path, endpoint: str, *,
                   dynamic_jobs: bool = False, acknowledge_dynamic_jobs: bool = False,
                   profile_reuse: bool = False, compute_sharing: bool = False, master_host: str | None = None,
                   extra_args: Sequence[str] = ()) -> list[str]:
    """Batsim 4.2's command line for one simulation (flags as in its usage text, see the module docstring).

    Raises:
        ValueError: ``acknowledge_dynamic_jobs`` or ``profile_reuse`` without ``dynamic_jobs`` (Batsim needs
            ``--enable-dynamic-jobs`` for both).
    """
    _check_dynamic_flags(dynamic_jobs, acknowledge_dynamic_jobs, profile_reuse)
    command = [os.fspath(batsim), "-p", os.fspath(platform), "-w", os.fspath(workload),
               "-e", os.fspath(export_prefix), "-s", endpoint]
    if master_host is not None:
        command += ["-m", master_host]
    if dynamic_jobs:
        command.append("--enable-dynamic-jobs")
    if acknowledge_dynamic_jobs:
        command.append("--acknowledge-dynamic-jobs")
    if profile_reuse:
        command.append("--enable-profile-reuse")
    if compute_sharing:
        command.append("--enable-compute-sharing")
    return command + list(extra_args)


def _check_dynamic_flags(dynamic_jobs: bool, acknowledge_dynamic_jobs: bool, profile_reuse: bool) -> None:
    if (acknowledge_dynamic_jobs or profile_reuse) and not dynamic_jobs:
        raise ValueError("--acknowledge-dynamic-jobs and --enable-profile-reuse need --enable-dynamic-jobs "
                         "(dynamic_jobs=True)")


def run_with_batsim(
    platform_path: str | os.PathLike[str],
    workload_path: str | os.PathLike[str],
    scheduler: BatsimScheduler,
    export_dir: str | os.PathLike[str],
    *,
    batsim_path: str | os.PathLike[str] | None = None,
    dynamic_jobs: bool = False,
    acknowledge_dynamic_jobs: bool = False,
    profile_reuse: bool = False,
    compute_sharing: bool = False,
    master_host: str | None = None,
    extra_args: Sequence[str] = (),
    timeout: float = DEFAULT_TIMEOUT,
    check_version: bool = True,
    on_request: Callable[[dict], None] | None = None,
    deadline=None,
    stderr_log: str | os.PathLike[str] | None = None,
) -> BatsimRunResult:
    """Simulate with a real Batsim: ``scheduler`` decides in this process, Batsim runs as a subprocess.

    Args:
        platform_path: SimGrid platform file (``-p``).
        workload_path: Batsim workload JSON file (``-w``; Batsim names it ``w0``).
        scheduler: a pybatsim ``BatsimScheduler`` instance (e.g. from
            :func:`batreplay.schedulers.registry.load_scheduler`).
        export_dir: directory for Batsim's outputs (created if needed; it must not already hold
            ``out_jobs.csv`` or ``out_schedule.csv``) and its logs (``batsim.stdout.log``,
            ``batsim.stderr.log``).
        batsim_path: the ``batsim`` executable (``--batsim``); None: ``batsim`` on PATH.
        dynamic_jobs, acknowledge_dynamic_jobs, profile_reuse: Batsim's ``--enable-dynamic-jobs``,
            ``--acknowledge-dynamic-jobs`` and ``--enable-profile-reuse`` (needed by schedulers that register
            jobs, such as the feedback user model's broker).
        compute_sharing: Batsim's ``--enable-compute-sharing`` (several jobs may run on one host at once).
        master_host: Batsim's ``-m`` (default: Batsim's own, ``master_host``, or a host with role ``master``).
        extra_args: further Batsim options, passed as given.
        timeout: seconds; the longest Batsim may stay silent while the decision process waits for its next
            message (this includes its start-up before the first message), and the longest it may take to
            exit after SIMULATION_ENDS was answered. Time spent deciding in ``scheduler`` is not counted.
            Default :data:`DEFAULT_TIMEOUT` (600 s).
        check_version: run :func:`check_batsim_version` first.
        on_request: called with each Batsim message before the scheduler sees it (progress reporting).
        deadline: a wall-clock limit of the whole run (a :class:`batreplay.deadline.Deadline`), checked while
            waiting for Batsim; :class:`~batreplay.deadline.WallClockTimeout` when it expires (Batsim killed).
        stderr_log: where Batsim's standard error is written while it runs, and stays if the run fails (error
            messages name it); once the run succeeded it is moved to ``export_dir/batsim.stderr.log``. None:
            ``export_dir/batsim.stderr.log`` from the start.

    Returns:
        A :class:`BatsimRunResult`.

    Raises:
        BatsimNotFound, BatsimVersionError: see :func:`find_batsim`, :func:`check_batsim_version`.
        FileNotFoundError: missing platform or workload file.
        FileExistsError: ``export_dir`` already holds Batsim outputs.
        BatsimCrashed: Batsim exited with a non-zero status (``exit_status``), was killed by a signal, or
            exited before the simulation ended; the message ends with the tail of its standard error.
        BatsimTimeout: Batsim did not connect, stopped answering, or did not exit within ``timeout``.
        BatsimNoOutput: Batsim exited with status 0 without writing ``out_jobs.csv`` / ``out_schedule.csv``.
        BatsimProtocolError: Batsim sent a message that is not a protocol message.
        Any exception raised by the scheduler, unchanged (Batsim is killed first); an exit of the scheduler
            (``sys.exit``) becomes a :class:`~batreplay.schedulers.failures.DecisionProcessError`.
    """
    started = time.perf_counter()
    _check_dynamic_flags(dynamic_jobs, acknowledge_dynamic_jobs, profile_reuse)
    batsim = find_batsim(batsim_path)
    version = check_batsim_version(batsim) if check_version else None
    platform = _existing_file(platform_path, "platform")
    workload = _existing_file(workload_path, "workload")
    export = Path(export_dir).resolve()
    export.mkdir(parents=True, exist_ok=True)
    stale = [name for name in _required_names() if (export / name).exists()]
    if stale:
        raise FileExistsError(f"{export} already holds {', '.join(stale)}: give an empty export directory")
    stdout_log, final_stderr_log = export / STDOUT_LOG, export / STDERR_LOG
    stderr_log = final_stderr_log if stderr_log is None else Path(os.path.abspath(stderr_log))

    channel = BatsimChannel(timeout=timeout, on_request=on_request, deadline=deadline)
    process: subprocess.Popen | None = None
    try:
        endpoint = channel.bind()
        command = batsim_command(batsim, platform, workload, export / EXPORT_PREFIX, endpoint,
                                 dynamic_jobs=dynamic_jobs, acknowledge_dynamic_jobs=acknowledge_dynamic_jobs,
                                 profile_reuse=profile_reuse, compute_sharing=compute_sharing,
                                 master_host=master_host, extra_args=extra_args)
        with open(stdout_log, "wb") as out, open(stderr_log, "wb") as err:
            process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                       cwd=export, start_new_session=True)
        channel.watch(process, stderr_log, export)
        _decide_until_end(channel, scheduler)
        status = channel.wait_exit(process)
        if status is None:
            raise BatsimTimeout(f"batsim did not exit within {timeout:g} s after the simulation ended (killed); "
                                f"see {stderr_log}")
        if status != 0:
            raise _crash(status, "after the simulation ended", stderr_log)
        outputs = _check_outputs(export, stderr_log, status)
        if stderr_log != final_stderr_log:
            os.replace(stderr_log, final_stderr_log)
            stderr_log = final_stderr_log
    except BaseException:
        if process is not None:
            terminate_process_group(process)
        raise
    finally:
        channel.close()
    return BatsimRunResult(
        export_dir=export, outputs=outputs, batsim_path=batsim, batsim_version=version, command=command,
        endpoint=endpoint, messages=channel.messages, scheduler_seconds=channel.scheduler_seconds,
        wall_seconds=time.perf_counter() - started, stdout_log=stdout_log, stderr_log=stderr_log,
    )


class BatsimChannel:
    """The decision process's side of the connection: a ZeroMQ REP socket that watches Batsim's process.

    It offers what pybatsim's ``Batsim`` object needs from its network handler (``bind``, ``recv``, ``send``,
    ``close``), so any ``BatsimScheduler`` runs unchanged. ``recv`` polls in slices of 50 ms and, between
    slices, checks that Batsim's process is alive and has not been silent longer than ``timeout`` seconds.

    Args:
        timeout: seconds Batsim may stay silent while a message is awaited.
        on_request: called with each message received.
        host: interface to bind (loopback by default).
        deadline: optional wall-clock limit of the whole run (:class:`batreplay.deadline.Deadline`), checked
            between slices.
    """

    def __init__(self, timeout: float, on_request: Callable[[dict], None] | None = None,
                 host: str = "127.0.0.1", deadline=None) -> None:
        self.timeout = timeout
        self.on_request = on_request
        self.deadline = deadline
        self.host = host
        self.messages = 0
        self.scheduler_seconds = 0.0
        self.simulation_ended = False
        self._context = zmq.Context()
        self._socket: zmq.Socket | None = None
        self._process: subprocess.Popen | None = None
        self._stderr_log: Path | None = None
        self._export: Path | None = None
        self._received_at: float | None = None
        self._ending = False
        self.endpoint: str | None = None

    def bind(self) -> str:
        """Bind the REP socket on a free port of ``host``; return its endpoint (``tcp://HOST:PORT``)."""
        if self._socket is None:
            self._socket = self._context.socket(zmq.REP)
            port = self._socket.bind_to_random_port(f"tcp://{self.host}")
            self.endpoint = f"tcp://{self.host}:{port}"
        return self.endpoint

    def watch(self, process: subprocess.Popen, stderr_log: Path, export_dir: Path | None = None) -> None:
        """Check ``process`` (Batsim) while waiting for messages; quote ``stderr_log`` in errors and look for
        Batsim's outputs in ``export_dir`` (default: the folder of ``stderr_log``)."""
        self._process = process
        self._stderr_log = stderr_log
        self._export = stderr_log.parent if export_dir is None else export_dir

    def wait_exit(self, process: subprocess.Popen) -> int | None:
        """Batsim's exit status once it has exited, or None if it is still running after ``timeout`` seconds
        (polled every 50 ms; the run's deadline is checked meanwhile)."""
        deadline = _clock() + self.timeout
        while (status := process.poll()) is None:
            if self.deadline is not None:
                self.deadline.check()
            if _clock() > deadline:
                return None
            time.sleep(_POLL_SLICE_MS / 1000)
        return status

    def recv(self, blocking: bool = False) -> dict:
        """The next Batsim message (a dict); waits at most ``timeout`` seconds of Batsim's silence.

        Raises:
            BatsimCrashed / BatsimNoOutput: Batsim's process ended before sending it.
            BatsimTimeout: nothing arrived within ``timeout`` seconds.
            BatsimProtocolError: the message is not a JSON object with ``now`` and ``events``.
            WallClockTimeout: the run's ``deadline`` expired.
        """
        assert self._socket is not None, "bind() first"
        deadline = _clock() + self.timeout
        while not self._socket.poll(_POLL_SLICE_MS, zmq.POLLIN):
            if self._process is not None and self._process.poll() is not None:
                raise self._early_exit(self._process.returncode)
            if self.deadline is not None:
                self.deadline.check()
            if _clock() > deadline:
                what = ("did not connect to" if self.messages == 0 else "sent nothing more on")
                raise BatsimTimeout(f"batsim {what} {self.endpoint} within {self.timeout:g} s "
                                    f"(after {self.messages} messages; killed); see {self._stderr_log}")
        raw = self._socket.recv()
        try:
            message = json.loads(raw)
            if not isinstance(message, dict) or "now" not in message or not isinstance(message.get("events"), list):
                raise ValueError("not an object with 'now' and 'events'")
        except ValueError as error:
            raise BatsimProtocolError(f"Batsim message {self.messages}: not a protocol message ({error}): "
                                      f"{raw[:200]!r}") from None
        self.messages += 1
        self._ending = any(event.get("type") == "SIMULATION_ENDS" for event in message["events"])
        if self.on_request is not None:
            self.on_request(message)
        self._received_at = time.perf_counter()
        return message

    def send(self, message: dict) -> None:
        """Send the decision process's reply to the last message."""
        assert self._socket is not None, "bind() first"
        if self._received_at is not None:
            self.scheduler_seconds += time.perf_counter() - self._received_at
        self._socket.send_string(json.dumps(message))
        if self._ending:
            self.simulation_ended = True

    def close(self) -> None:
        """Close the socket and the ZeroMQ context (idempotent). A reply still queued (pybatsim closes right
        after answering SIMULATION_ENDS) gets up to 2 s to reach Batsim."""
        if self._socket is not None:
            self._socket.close(linger=_CLOSE_LINGER_MS)
            self._socket = None
        if not self._context.closed:
            self._context.term()

    def _early_exit(self, status: int) -> BatsimLaunchError:
        when = f"before the simulation ended (after {self.messages} messages)"
        if status != 0:
            return _crash(status, when, self._stderr_log)
        export = self._export
        missing = [name for name in _required_names() if not (export / name).is_file()]
        tail = _stderr_tail(self._stderr_log)
        if missing:
            return BatsimNoOutput(f"Batsim wrote no output: it exited with status 0 {when} without writing "
                                  f"{', '.join(missing)}; see {self._stderr_log}" + _indent(tail))
        return BatsimCrashed(f"batsim exited with status 0 {when}; see {self._stderr_log}" + _indent(tail),
                             0, tail)


def _decide_until_end(channel: BatsimChannel, scheduler) -> None:
    """Run ``scheduler`` on ``channel`` (substituting pybatsim's handler is what bounds every wait)."""
    from batreplay.engine.decision_process import run_decision_process

    # a scheduler's sys.exit() is a failure, not the end
    run_decision_process(scheduler, channel, channel.endpoint, exits_only=True)
    if not channel.simulation_ended:  # pybatsim returns only after answering SIMULATION_ENDS
        raise BatsimProtocolError("the decision process stopped before Batsim's SIMULATION_ENDS")


@dataclass
class PybatsimRun:
    """What :func:`run_pybatsim_next_to_batsim` measured.

    Attributes:
        out_jobs: Batsim's ``out_jobs.csv``.
        wall_seconds: from the start of both processes to the end of both.
        peak_mb: the larger peak resident memory of the two processes (MB, from ``wait4``).
        batsim_log, scheduler_log: Batsim's and pybatsim's standard output and error.
    """

    out_jobs: Path
    wall_seconds: float
    peak_mb: float
    batsim_log: Path
    scheduler_log: Path


def run_pybatsim_next_to_batsim(batsim: str | os.PathLike[str], platform: str | os.PathLike[str],
                                workload: str | os.PathLike[str], scheduler: str, out: str | os.PathLike[str], *,
                                timeout: float = DEFAULT_TIMEOUT,
                                cwd: str | os.PathLike[str] | None = None) -> PybatsimRun:
    """Run ``batsim`` and pybatsim's own launcher (``pybatsim SCHEDULER -s ENDPOINT -t 0``) as two processes
    connected over ZeroMQ on a free loopback port, as a user would in two terminals: the reference run that tests
    and benchmarks compare batreplay with.

    Args:
        batsim: the ``batsim`` executable (see :func:`find_batsim`).
        platform, workload: Batsim's ``-p`` and ``-w`` files.
        scheduler: a pybatsim scheduler name (``easyBackfill``) or file.
        out: directory for Batsim's outputs (``-e out/out``) and both logs (``batsim.log``, ``scheduler.log``);
            Batsim's working directory.
        timeout: seconds both processes together may take; then both are killed.
        cwd: the working directory of pybatsim's launcher.

    Raises:
        BatsimNotFound: no ``pybatsim`` launcher next to this Python, or no such ``batsim``.
        BatsimTimeout: the run took longer than ``timeout`` (both process groups killed).
        BatsimCrashed: either process exited with a non-zero status (the message names both logs; pybatsim is
            killed as soon as Batsim failed).
    """
    launcher = Path(sys.executable).with_name("pybatsim")
    if not launcher.is_file():
        raise BatsimNotFound(f"pybatsim's launcher not found next to {sys.executable}")
    batsim_path = find_batsim(batsim)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    endpoint = f"tcp://127.0.0.1:{free_tcp_port()}"
    batsim_log, scheduler_log = out / "batsim.log", out / "scheduler.log"
    started = time.perf_counter()
    processes: list[subprocess.Popen] = []
    try:
        with open(scheduler_log, "wb") as log_s, open(batsim_log, "wb") as log_b:
            processes.append(subprocess.Popen([os.fspath(launcher), scheduler, "-s", endpoint, "-t", "0"], cwd=cwd,
                                              stdout=log_s, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                              start_new_session=True))
            command = batsim_command(Path(batsim_path), Path(os.path.abspath(platform)), Path(os.path.abspath(workload)),
                                     Path(os.path.abspath(out / EXPORT_PREFIX)), endpoint)
            processes.append(subprocess.Popen(command, cwd=out, stdout=log_b, stderr=subprocess.STDOUT,
                                              stdin=subprocess.DEVNULL, start_new_session=True))
        scheduler_process, batsim_process = processes
        limit = _clock() + timeout
        logs = f"see {batsim_log} and {scheduler_log}"
        status_b, peak_b = _reap(batsim_process, limit)
        if status_b is not None and status_b != 0:  # pybatsim is killed: it may wait for Batsim forever
            raise BatsimCrashed(f"batsim exited with status {status_b} next to pybatsim; {logs}", status_b)
        status_s, peak_s = _reap(scheduler_process, limit) if status_b is not None else (None, 0.0)
        if status_s is None:
            raise BatsimTimeout(f"batsim and pybatsim did not finish within {timeout:g} s (killed); {logs}")
        if status_s != 0:
            raise BatsimCrashed(f"pybatsim exited with status {status_s} next to batsim; {logs}", status_s)
    finally:
        for process in processes:
            terminate_process_group(process, grace=1.0)
    wall = time.perf_counter() - started
    return PybatsimRun(out / f"{EXPORT_PREFIX}_jobs.csv", wall, max(peak_b, peak_s), batsim_log, scheduler_log)


def _reap(process: subprocess.Popen, limit: float) -> tuple[int | None, float]:
    """Wait for ``process`` until the clock reads ``limit``; its exit status (None if still running) and peak
    resident memory in MB (``wait4``)."""
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            process.returncode = os.waitstatus_to_exitcode(status)
            return process.returncode, usage.ru_maxrss / 1024
        if _clock() > limit:
            return None, 0.0
        time.sleep(0.01)


def terminate_process_group(process: subprocess.Popen, grace: float = 2.0) -> None:
    """Stop ``process`` and everything in its process group (it must have been started with
    ``start_new_session=True``): SIGTERM, then SIGKILL after ``grace`` seconds; reaps ``process``. Harmless
    when the process has already ended."""
    pgid = process.pid  # a new session's leader: its pid is the group id, kept while any member lives
    for sig in (signal.SIGTERM, signal.SIGKILL):
        _signal_group(pgid, sig)
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            continue
        _signal_group(pgid, signal.SIGKILL)  # the leader is gone: no other member of its group survives
        return
    process.wait()


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _run_bounded(command: list[str], timeout: float) -> tuple[int, str, str]:
    """Run ``command`` in its own process group; kill the group after ``timeout`` seconds."""
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, start_new_session=True, text=True, errors="replace")
    try:
        out, err = process.communicate(timeout=timeout)
    except BaseException:
        terminate_process_group(process, grace=0.5)
        process.communicate()
        raise
    return process.returncode, out, err


def _existing_file(path: str | os.PathLike[str], what: str) -> Path:
    resolved = Path(path).expanduser().resolve()
    if not resolved.is_file():
        raise FileNotFoundError(f"{what} file {path}: no such file")
    return resolved


def _required_names() -> list[str]:
    return [f"{EXPORT_PREFIX}_{suffix}" for suffix in REQUIRED_OUTPUTS]


def _check_outputs(export: Path, stderr_log: Path, status: int) -> dict[str, Path]:
    missing = [name for name in _required_names() if not (export / name).is_file()]
    if missing:
        raise BatsimNoOutput(f"Batsim wrote no output: it exited with status {status} but {', '.join(missing)} "
                             f"is missing in {export}; see {stderr_log}" + _indent(_stderr_tail(stderr_log)))
    empty = [name for name in _required_names() if (export / name).stat().st_size == 0]
    if empty:
        raise BatsimNoOutput(f"Batsim wrote empty output files ({', '.join(empty)}) in {export}; see {stderr_log}")
    return {p.name: p for p in sorted(export.glob(f"{EXPORT_PREFIX}_*")) if p.is_file()}


def _crash(status: int, when: str, stderr_log: Path | None) -> BatsimCrashed:
    if status < 0:
        try:
            how = f"was killed by signal {signal.Signals(-status).name}"
        except ValueError:
            how = f"was killed by signal {-status}"
    else:
        how = f"exited with status {status}"
    tail = _stderr_tail(stderr_log)
    reason = _batsim_reason(stderr_log)
    if reason:  # Batsim said why (an xbt CRITICAL log line before its abort): that line is the message
        return BatsimCrashed(f"batsim {how} {when}: {reason}; see {stderr_log}", status, tail)
    return BatsimCrashed(f"batsim {how} {when}; see {stderr_log}" + _indent(tail), status, tail)


#: Batsim's (SimGrid xbt) log lines that say why it stopped: ``[time] file:line: [category/CRITICAL] text``.
_BATSIM_REASON = re.compile(r"\[(?:[\w.]+/)?(?:CRITICAL|ERROR)\]\s*(.+)$")


def _batsim_reason(path: Path | None, max_bytes: int = 65536) -> str:
    """The text of the last CRITICAL or ERROR line of Batsim's standard error ("" if none), without its
    time stamp and source location: what Batsim says when it refuses its inputs and aborts (SIGABRT)."""
    text = _last_bytes(path, max_bytes)
    reasons = [m.group(1).strip() for m in map(_BATSIM_REASON.search, text.splitlines()) if m]
    return reasons[-1] if reasons else ""


def _last_bytes(path: Path | None, max_bytes: int) -> str:
    """The end of the file ``path`` (at most ``max_bytes``, decoded leniently); "" without such a file."""
    if path is None or not path.is_file():
        return ""
    with open(path, "rb") as stream:
        stream.seek(max(path.stat().st_size - max_bytes, 0))
        return stream.read().decode("utf-8", errors="replace")


def _stderr_tail(path: Path | None, lines: int = 10, max_bytes: int = 8192) -> str:
    kept = [line.rstrip() for line in _last_bytes(path, max_bytes).splitlines() if line.strip()]
    return "\n".join(kept[-lines:])


def _indent(tail: str) -> str:
    return "" if not tail else "\nlast lines of batsim's standard error:\n" + "\n".join(
        f"  {line}" for line in tail.splitlines())


def _one_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""
