"""The protocol loop next to a real Batsim: the decision process's ZeroMQ socket, which watches Batsim's process.

Batsim holds a ZeroMQ REQ socket and connects it to the decision process, which binds a REP socket
(``../shared/docs/batsim-protocol-notes.md``, "Transport and envelope"). :class:`BatsimChannel` is that REP
socket, bound on a free loopback port, with the calls of pybatsim's network handler; :func:`decide_until_end`
runs a pybatsim decision process on it until Batsim's SIMULATION_ENDS has been answered.

Every wait is bounded. While the decision process waits for a message, the socket is polled in short slices and
Batsim's process is checked between them: a Batsim that exits, crashes or stays silent longer than ``timeout``
seconds ends the run with a :class:`~batreplay.realbatsim.errors.BatsimLaunchError` subclass; each message is
checked to be a protocol message. This module imports pyzmq, :mod:`.errors` and :mod:`.process`, and
:mod:`batreplay.engine.decision_process` (pybatsim) when a decision process runs.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import zmq

from batreplay.realbatsim.errors import (BatsimCrashed, BatsimLaunchError, BatsimNoOutput, BatsimProtocolError,
                                         BatsimTimeout, crashed, quoted_tail, stderr_tail)
from batreplay.realbatsim.process import required_names

_POLL_SLICE_MS = 50
#: The clock of every wait on Batsim (seconds); the tests replace it to start a wait's window only once a fake
#: Batsim is provably hanging, so that no test depends on the machine's speed.
_clock = time.monotonic
_CLOSE_LINGER_MS = 2000


class BatsimChannel:
    """The decision process's side of the connection: a ZeroMQ REP socket that watches Batsim's process.

    It offers what pybatsim's ``Batsim`` object needs from its network handler (``bind``, ``recv``, ``send``,
    ``close``), so any ``BatsimScheduler`` runs unchanged. ``recv`` polls in slices of 50 ms and, between
    slices, checks that Batsim's process is alive and has not been silent longer than ``timeout`` seconds.

    Args:
        timeout: seconds Batsim may stay silent while a message is awaited.
        on_request: called with each message received.
        on_reply: called with each reply, before it is sent (with ``on_request``, a transcript of the run).
        host: interface to bind (loopback by default).
        deadline: optional wall-clock limit of the whole run (:class:`batreplay.deadline.Deadline`), checked
            between slices.
    """

    def __init__(self, timeout: float, on_request: Callable[[dict], None] | None = None,
                 host: str = "127.0.0.1", deadline=None, on_reply: Callable[[dict], None] | None = None) -> None:
        self.timeout = timeout
        self.on_request = on_request
        self.on_reply = on_reply
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
        if self.on_reply is not None:
            self.on_reply(message)
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
            return crashed(status, when, self._stderr_log)
        export = self._export
        missing = [name for name in required_names() if not (export / name).is_file()]
        tail = stderr_tail(self._stderr_log)
        if missing:
            return BatsimNoOutput(f"Batsim wrote no output: it exited with status 0 {when} without writing "
                                  f"{', '.join(missing)}; see {self._stderr_log}" + quoted_tail(tail))
        return BatsimCrashed(f"batsim exited with status 0 {when}; see {self._stderr_log}" + quoted_tail(tail),
                             0, tail)


def decide_until_end(channel: BatsimChannel, scheduler) -> None:
    """Run ``scheduler`` on ``channel`` (substituting pybatsim's handler is what bounds every wait).

    Raises:
        BatsimProtocolError: the decision process returned before Batsim's SIMULATION_ENDS was answered.
    """
    from batreplay.engine.decision_process import run_decision_process

    # a scheduler's sys.exit() is a failure, not the end
    run_decision_process(scheduler, channel, channel.endpoint, exits_only=True)
    if not channel.simulation_ended:  # pybatsim returns only after answering SIMULATION_ENDS
        raise BatsimProtocolError("the decision process stopped before Batsim's SIMULATION_ENDS")
