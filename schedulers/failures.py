"""What went wrong in a scheduler (a pybatsim decision process), told in one line.

A user's scheduler file can fail in three places, and each gives a one-line error naming the file and the line:

- while it is imported or built (:func:`load_failure`, raised as :class:`SchedulerLoadError`): a SyntaxError
  names the line of the scheduler file (or of the module it imports, and the import line); an ImportError, or
  any other exception, names the line of the scheduler file that was running;
- while the simulation runs (:class:`DecisionProcessGuard`, raised as :class:`DecisionProcessError`): the line
  is the deepest one of the scheduler's own code (not the standard library, pybatsim or other installed
  packages it called), and the message says which Batsim event pybatsim was handing over (``JOB_SUBMITTED of
  job w0!3 at t = 120 s``). A failure inside pybatsim caused by the scheduler's call (a job id pybatsim never
  saw, one of pybatsim's assertions) is explained with the likely cause;
- by exiting (``sys.exit``, ``raise SystemExit``) anywhere before the simulation ended: that is a failure too,
  never a silent success.

The original exception is kept as ``__cause__``: ``batreplay --debug`` shows its full traceback. Errors raised
by the embedded engine or the real-Batsim launcher themselves (the innermost frame is theirs) are left as they
are: their messages already say what Batsim refused.
"""

from __future__ import annotations

import importlib.util
import linecache
import sysconfig
import traceback
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any

#: Appended to every message of this module.
DEBUG_HINT = "batreplay --debug shows the traceback"

#: Likely causes of pybatsim assertions a scheduler can trip, by a fragment of the assertion's source line.
_ASSERTION_CAUSES = {
    "job.allocation is not None": "set job.allocation to a ProcSet of resource ids before calling execute_jobs",
    "len(job_ids) > 0": "reject_jobs_by_id was called with no job",
    "len(jobs) > 0": "the list of jobs is empty",
    "job.profile in self.profiles": "the job's profile was never registered (register_profiles first)",
    "self.running_simulation": "pybatsim received a second SIMULATION_BEGINS or a SIMULATION_ENDS out of place",
}


class SchedulerLoadError(ValueError):
    """A scheduler file could not be imported, or its scheduler class could not be instantiated.

    Attributes:
        path: the scheduler file.
        line: the line of ``path`` (1-based) the failure is attributed to, or None if unknown.
    """

    def __init__(self, message: str, path: Path, line: int | None) -> None:
        super().__init__(message)
        self.path = path
        self.line = line


class DecisionProcessError(RuntimeError):
    """The decision process failed, or exited, before the simulation ended.

    Attributes:
        path: the source file of the scheduler code where it happened (None: inside pybatsim itself).
        line: the line in ``path`` (None when ``path`` is None).
        exited: True when the decision process exited (``SystemExit``) rather than raised an error.
    """

    def __init__(self, message: str, path: str | None, line: int | None, exited: bool) -> None:
        super().__init__(message)
        self.path = path
        self.line = line
        self.exited = exited


# ------------------------------------------------------------------------------------------- frame classes

_DIRECTORIES: dict[str, tuple[Path, ...]] | None = None


def _package_dirs(name: str) -> tuple[Path, ...]:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return ()
    return tuple(Path(p).resolve() for p in spec.submodule_search_locations)


def _directories() -> dict[str, tuple[Path, ...]]:
    global _DIRECTORIES
    if _DIRECTORIES is None:
        paths = sysconfig.get_paths()
        _DIRECTORIES = {
            # batreplay's own machinery around the decision process: the engine, the launcher, the runner
            "infrastructure": (_package_dirs("batreplay") + _package_dirs("batreplay.engine")
                               + _package_dirs("batreplay.realbatsim")),
            "pybatsim": _package_dirs("batsim"),
            # batreplay's schedulers and the feedback broker are scheduler code, wherever they are installed
            "code": _package_dirs("batreplay.schedulers") + _package_dirs("batreplay.replay"),
            "library": tuple(Path(paths[key]).resolve() for key in ("stdlib", "platstdlib", "purelib", "platlib")
                             if key in paths),
        }
    return _DIRECTORIES


def _kind(filename: str) -> str:
    """``infrastructure``, ``pybatsim``, ``library`` or ``code`` (the scheduler's own code)."""
    if filename == __file__:
        return "infrastructure"
    if filename.startswith("<"):
        return "library"  # <frozen importlib._bootstrap>, <string>
    path = Path(filename).resolve()
    for kind in ("infrastructure", "pybatsim", "code", "library"):
        if any(path.is_relative_to(directory) for directory in _directories()[kind]):
            return kind
    return "code"


def _frames(error: BaseException) -> list[tuple[FrameType, int, str]]:
    return [(frame, line, _kind(frame.f_code.co_filename)) for frame, line in traceback.walk_tb(error.__traceback__)]


def _one_line(text: str) -> str:
    return " ".join(part.strip() for part in str(text).splitlines() if part.strip())


def _seconds(value: Any) -> str:
    try:
        return f"{float(value):.6f}".rstrip("0").rstrip(".")
    except (TypeError, ValueError):
        return str(value)


def _exit_text(error: SystemExit) -> str:
    return "sys.exit()" if error.code is None else f"sys.exit({error.code!r})"


def _error_text(error: BaseException) -> str:
    text = _one_line(str(error))
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


# ----------------------------------------------------------------------------------------- load failures

def load_failure(path: str | Path, error: BaseException) -> SchedulerLoadError:
    """The one-line error for ``error``, raised while importing the scheduler file ``path`` or building its
    scheduler: names the file, the line and the cause, and points to ``--debug``.

    Raise it ``from error`` so that the traceback stays available.
    """
    path = Path(path)
    try:
        target = path.resolve()
    except OSError:
        target = path
    if isinstance(error, SyntaxError) and error.filename and _same_file(error.filename, target):
        message = f"scheduler file {path}, line {error.lineno}: {type(error).__name__}: {error.msg} ({DEBUG_HINT})"
        return SchedulerLoadError(message, path, error.lineno)
    frames = _frames(error)
    own = [(frame, line) for frame, line, _ in frames if _same_file(frame.f_code.co_filename, target)]
    line = own[-1][1] if own else None
    where = f"scheduler file {path}"
    if own:
        where += f", line {line}"
        if own[-1][0].f_code.co_name != "<module>":
            where += f", in {own[-1][0].f_code.co_name}"
    if isinstance(error, SystemExit):
        what = f"the file exits ({_exit_text(error)}) instead of defining a scheduler"
    elif isinstance(error, SyntaxError):
        what = f"{type(error).__name__} in {error.filename}, line {error.lineno}: {error.msg}"
    else:
        what = _error_text(error)
        code = [(frame, number) for frame, number, kind in frames if kind == "code"]
        if code and own and code[-1][0] is not own[-1][0]:
            what += f" (raised in {code[-1][0].f_code.co_filename}, line {code[-1][1]})"
    return SchedulerLoadError(f"{where}: {what} ({DEBUG_HINT})", path, line)


def _same_file(filename: str, target: Path) -> bool:
    try:
        return Path(filename).resolve() == target
    except OSError:
        return False


# ------------------------------------------------------------------------------------ run-time failures

def _event_context(frames: list[tuple[FrameType, int, str]]) -> str:
    """What pybatsim was handing over to the scheduler (``JOB_SUBMITTED of job w0!3 at t = 120 s``), read from
    the frame of pybatsim's message loop; "" if unknown."""
    first = next((n for n, (_, _, kind) in enumerate(frames) if kind == "pybatsim"), None)
    if first is None:
        return ""
    hook = next((frame.f_code.co_name for frame, _, kind in frames[first:] if kind != "pybatsim"), None)
    readers = [frame for frame, _, kind in frames if kind == "pybatsim" and frame.f_code.co_name == "_read_bat_msg"]
    reader = readers[0] if readers else None
    if reader is None:
        return "after SIMULATION_BEGINS" if hook == "onAfterBatsimInit" else ""
    names = reader.f_locals
    message = names.get("msg")
    now = message.get("now") if isinstance(message, dict) else None
    at = f" at t = {_seconds(now)} s" if now is not None else ""
    if hook == "onNoMoreEvents":
        return f"at the end of Batsim's message{at}"
    if hook == "onBeforeEvents":
        return f"before the events of Batsim's message{at}"
    if hook == "onDeadlock":
        return f"while waiting for Batsim's next message{at}"
    event = names.get("event")
    if not isinstance(event, dict):
        return f"Batsim's message{at}"
    data = event.get("data") if isinstance(event.get("data"), dict) else {}
    text = str(event.get("type", "an event"))
    if "job_id" in data:
        text += f" of job {data['job_id']}"
    elif isinstance(data.get("job_ids"), list):
        text += f" of jobs {', '.join(map(str, data['job_ids'][:5]))}"
    return text + at


def _hook_frame(frames: list[tuple[FrameType, int, str]]) -> tuple[FrameType, int] | None:
    """The scheduler method pybatsim called (the first frame after pybatsim's that is not pybatsim's)."""
    first = next((n for n, (_, _, kind) in enumerate(frames) if kind == "pybatsim"), None)
    if first is None:
        return None
    after = next(((frame, line) for frame, line, kind in frames[first:] if kind not in ("pybatsim", "infrastructure")),
                 None)
    return after if after is not None and after[0].f_code.co_name.startswith("on") else None  # pybatsim's hooks


def _pybatsim_failure(error: BaseException, frame: FrameType, line: int, blamed_on_scheduler: bool) -> str:
    """What went wrong inside pybatsim, and the likely cause."""
    function = f"Batsim.{frame.f_code.co_name}"
    owner = frame.f_locals.get("self")
    jobs = getattr(owner, "jobs", None)
    if isinstance(error, KeyError) and error.args and isinstance(jobs, dict) and error.args[0] not in jobs:
        key = error.args[0]
        if blamed_on_scheduler:
            cause = ("the scheduler named a job Batsim never submitted (job ids are Batsim's, such as 'w0!12': "
                     "use the Job objects pybatsim hands to onJobSubmission)")
        else:
            cause = "Batsim referred to a job that was never submitted to pybatsim"
        return f"KeyError: pybatsim knows no job {key!r} (in {function}): {cause}"
    if isinstance(error, AssertionError):
        source = linecache.getline(frame.f_code.co_filename, line).strip()
        text = _one_line(str(error)) or source
        cause = next((why for fragment, why in _ASSERTION_CAUSES.items() if fragment in source), None)
        return f"pybatsim refused the call ({function}: {text})" + (f": {cause}" if cause else "")
    return f"{_error_text(error)} (in pybatsim's {function})"


def decision_failure(error: BaseException) -> DecisionProcessError | None:
    """The one-line error for ``error``, raised while a pybatsim decision process was running, or None when
    it is not the decision process's doing: the engine or the launcher raised it, or it is neither an
    ``Exception`` nor a ``SystemExit`` (a KeyboardInterrupt, a wall-clock limit's alarm).

    Raise it ``from error`` so that the traceback stays available.
    """
    if not isinstance(error, (Exception, SystemExit)):
        return None
    frames = _frames(error)
    # who raised it: the innermost frame outside the standard library and installed packages
    raiser = next((entry for entry in reversed(frames) if entry[2] != "library"), None)
    innermost = raiser[2] if raiser is not None else "library"
    exited = isinstance(error, SystemExit)
    if innermost == "infrastructure" and not exited:
        return None
    context = _event_context(frames)
    code = [(frame, line) for frame, line, kind in frames if kind == "code"]
    site = code[-1] if code else _hook_frame(frames)  # a scheduler installed as a package: its hook method
    if exited:
        what = _exit_text(error)
    elif innermost == "pybatsim":
        frame, line, _ = raiser
        what = _pybatsim_failure(error, frame, line, blamed_on_scheduler=site is not None)
    else:
        what = _error_text(error)
    hint = f"{context}; {DEBUG_HINT}" if context else DEBUG_HINT
    if site is None:  # no scheduler code on the stack: pybatsim itself failed on Batsim's message
        if exited:
            return DecisionProcessError(f"scheduler exited before the simulation ended: {what} ({hint})",
                                        None, None, exited)
        where = f" on Batsim's {context}" if context else ""
        return DecisionProcessError(f"pybatsim failed{where}: {what} ({DEBUG_HINT})", None, None, exited)
    frame, line = site
    path = frame.f_code.co_filename
    where = f"{path}, line {line}, in {frame.f_code.co_name}"
    head = "scheduler exited before the simulation ended, at" if exited else "scheduler failed at"
    return DecisionProcessError(f"{head} {where}: {what} ({hint})", path, line, exited)


class DecisionProcessGuard:
    """A context manager around a running decision process: an exception of the scheduler (or of pybatsim on
    its behalf) leaves it as a :class:`DecisionProcessError` (see :func:`decision_failure`), the original as
    its ``__cause__``; other exceptions pass unchanged.

    Args:
        exits_only: translate only exits (``SystemExit``) and let every exception through unchanged (the
            real-Batsim launcher's contract).
    """

    def __init__(self, *, exits_only: bool = False) -> None:
        self.exits_only = exits_only

    def __enter__(self) -> DecisionProcessGuard:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> bool:
        if error is None or (self.exits_only and not isinstance(error, SystemExit)):
            return False
        failure = decision_failure(error)
        if failure is None:
            return False
        raise failure from error


def decision_process_guard(*, exits_only: bool = False) -> DecisionProcessGuard:
    """A :class:`DecisionProcessGuard`: ``with decision_process_guard(): bs.start()``."""
    return DecisionProcessGuard(exits_only=exits_only)
