"""The ``batsim`` process: find the executable and check its version, write its command line, start and stop it.

Batsim's command-line flags are those of its 4.2 ``docopt`` usage text (``-p/--platform``, ``-w/--workload``,
``-e/--export`` (a file-name prefix, default ``out``), ``-s/--socket-endpoint``, ``-m/--master-host``,
``--enable-dynamic-jobs``, ``--acknowledge-dynamic-jobs``, ``--enable-profile-reuse``,
``--enable-compute-sharing``, ``--version``).
With the prefix ``EXPORT_DIR/out`` Batsim writes ``EXPORT_DIR/out_jobs.csv``, ``out_schedule.csv`` and
``out_machine_states.csv``, the names the rest of batreplay uses; :func:`check_outputs` checks that a run left
them. Batsim runs in a process group of its own, so that :func:`terminate_process_group` leaves none of its
processes behind. This module imports the standard library and :mod:`.errors` only (no ZeroMQ).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
from collections.abc import Sequence
from pathlib import Path

from batreplay.realbatsim.errors import (BatsimNoOutput, BatsimNotFound, BatsimVersionError, last_line, quoted_tail,
                                         stderr_tail)

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
_VERSION_PATTERN = re.compile(r"v?(\d+)\.(\d+)\.(\d+)")


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
        detail = last_line(err or out) or "no output"
        raise BatsimVersionError(f"`{' '.join(command)}` failed with status {status} ({detail}): {_INSTALL_HINT}")
    version = parse_batsim_version(text)
    if version is None:
        raise BatsimVersionError(f"`{' '.join(command)}` printed no version number ({last_line(text)!r}): "
                                 f"is it really Batsim? {_INSTALL_HINT}")
    wanted = tuple(int(part) for part in series.split("."))
    if version[: len(wanted)] != wanted:
        found = ".".join(map(str, version))
        raise BatsimVersionError(f"{path} is Batsim {found}, batreplay needs Batsim {series}.x (its protocol "
                                 f"and outputs are checked against 4.2.1): {_INSTALL_HINT}")
    return text


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
    check_dynamic_flags(dynamic_jobs, acknowledge_dynamic_jobs, profile_reuse)
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


def check_dynamic_flags(dynamic_jobs: bool, acknowledge_dynamic_jobs: bool, profile_reuse: bool) -> None:
    """Raise ValueError when a flag that needs ``--enable-dynamic-jobs`` comes without it."""
    if (acknowledge_dynamic_jobs or profile_reuse) and not dynamic_jobs:
        raise ValueError("--acknowledge-dynamic-jobs and --enable-profile-reuse need --enable-dynamic-jobs "
                         "(dynamic_jobs=True)")


def start_batsim(command: list[str], export: Path, stdout_log: Path, stderr_log: Path) -> subprocess.Popen:
    """Start Batsim's ``command`` in the directory ``export``, as the leader of a new process group (see
    :func:`terminate_process_group`), its standard input closed and its output and error written to the logs."""
    with open(stdout_log, "wb") as out, open(stderr_log, "wb") as err:
        return subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                cwd=export, start_new_session=True)


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


def required_names() -> list[str]:
    """The output files every successful Batsim run writes in its export directory (``out_jobs.csv``...)."""
    return [f"{EXPORT_PREFIX}_{suffix}" for suffix in REQUIRED_OUTPUTS]


def check_outputs(export: Path, stderr_log: Path, status: int) -> dict[str, Path]:
    """Batsim's output files in ``export`` by name, once it exited with ``status``.

    Raises:
        BatsimNoOutput: a file of :func:`required_names` is missing or empty.
    """
    missing = [name for name in required_names() if not (export / name).is_file()]
    if missing:
        raise BatsimNoOutput(f"Batsim wrote no output: it exited with status {status} but {', '.join(missing)} "
                             f"is missing in {export}; see {stderr_log}" + quoted_tail(stderr_tail(stderr_log)))
    empty = [name for name in required_names() if (export / name).stat().st_size == 0]
    if empty:
        raise BatsimNoOutput(f"Batsim wrote empty output files ({', '.join(empty)}) in {export}; see {stderr_log}")
    return {p.name: p for p in sorted(export.glob(f"{EXPORT_PREFIX}_*")) if p.is_file()}
