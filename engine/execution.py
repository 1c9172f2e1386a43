"""Jobs on hosts: which hosts compute, how fast a job progresses, and the race of a job with its walltime.

:class:`Machine` holds the compute hosts (speeds in flop/s, Batsim's resource ids) and which of them compute a
job; :func:`start_job` starts a job's executor on the kernel: the job's activity (a sleep for ``delay``, a
computation for a parallel task), its walltime, and the JOB_COMPLETED message its executor sends to the server
when it ends; a job of a composed profile runs its steps one after the other (:class:`Steps`), each as
:func:`run_step` runs a job of one profile. With compute sharing (Batsim's ``--enable-compute-sharing``),
parallel tasks on the same hosts
share them (:mod:`.sharing`): each start or end of a task changes the rates of the tasks it shares hosts with.
Co-scheduling (:mod:`.coscheduling`) uses the same path with another rule for the rates. It imports the engine's
kernel, server, records, profiles, sharing, coscheduling and speedup modules, and procset.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from procset import ProcSet

from batreplay.engine.kernel import PRIO_SEND, Kernel, printed_time
from batreplay.engine.options import EngineError
from batreplay.engine.profiles import DATA_STAGING, PFS, Leaf, UnsupportedProfileError, execution_time, host_flops
from batreplay.engine.records import FAILED, SUCCESS, WALLTIME_REACHED, Job
from batreplay.engine.server import COMPLETED, Message, Server
from batreplay.engine.coscheduling import CoScheduledHosts
from batreplay.engine.sharing import SharedHosts, SharedTask
from batreplay.engine.transfers import Transfers, start_shared_task, stop_shared_task
from batreplay.platforms.speedup import SpeedupModel

#: A parallel task whose duration is within this fraction (of 1 + walltime, in seconds) of its walltime races
#: its timeout with SimGrid's arithmetic; beyond it, the outcome is decided at start (see :func:`run_step`).
RACE_BAND = 1e-6
_FLAGS = (b"\x00", b"\x01")  # a host's busy flag, idle and computing


class Machine:
    """The compute hosts: ``speeds`` (flop/s of one core) by resource id, and a busy flag per host.

    Args:
        speeds: flop/s of each host (of one of its cores), by resource id.
        cores: cores of each host (SimGrid's ``core`` attribute), by resource id: compute sharing uses them, and
            jobs whose executors a mapping puts several on one host (a job alone on a host computes on one core per
            executor). Default: 1 each.
        sharing: compute sharing on (Batsim's ``--enable-compute-sharing``): several jobs may run on a host, and
            ``shared`` holds the parallel tasks on each host; off, a host computes one job at a time.
        speedup_model: co-scheduling (an extension of the embedded engine): several jobs may run on a host, each at
            its rate alone times its speedup beside its neighbours (:mod:`.coscheduling`), instead of sharing the
            host's flop rate.
        transfers: the hosts and links of the platform for the jobs that move bytes (:mod:`.transfers`); None
            when the platform's routes are unknown.
    """

    def __init__(self, speeds: Sequence[float], cores: Sequence[int] | None = None, sharing: bool = False,
                 speedup_model: SpeedupModel | None = None, transfers: Transfers | None = None) -> None:
        self.speeds = [float(speed) for speed in speeds]
        self.cores = list(cores or [1] * len(self.speeds))
        self.transfers = transfers  # the hosts and links of the jobs that move bytes
        self.busy = bytearray(len(self.speeds))  # 1 where a host computes a job (compute sharing off)
        # the one speed of a homogeneous platform (flop/s): no per-host list to build for each job
        self.uniform_speed = self.speeds[0] if self.speeds and len(set(self.speeds)) == 1 else None
        self.shared: SharedHosts | CoScheduledHosts | None = None
        if speedup_model is not None:
            self.shared = CoScheduledHosts(self.speeds, speedup_model)
        elif sharing and transfers is not None:  # jobs that compute and jobs that move bytes share the hosts
            self.shared = transfers.solver
        elif sharing:
            self.shared = SharedHosts(self.speeds, self.cores)
        self._alone: SharedHosts | None = None  # (the solver a task with several executors on a host is timed in)

    def task(self, profile: dict, hosts: Sequence[int], **fields: Any) -> SharedTask:
        """The parallel task of ``profile`` whose executors run on ``hosts`` (the allocation's hosts in order, or
        those of Batsim's EXECUTE_JOB ``mapping``, where a host may come back): flop per executor from
        :func:`batreplay.engine.profiles.host_flops`; ``fields`` go to :class:`SharedTask`."""
        return SharedTask.of_executors(list(hosts), host_flops(profile, len(hosts)), **fields)

    def alone_rate(self, profile: dict, hosts: Sequence[int]) -> float:
        """The rate (work units/s) SimGrid's solver gives the task of ``profile`` on ``hosts`` alone: what times a
        task with several executors on a host when hosts are not shared."""
        if self._alone is None:
            self._alone = SharedHosts(self.speeds, self.cores)
        task = self.task(profile, hosts, solver=self._alone)
        self._alone.add(task)
        self._alone.remove(task)
        return task.rate

    def mark(self, alloc: ProcSet, value: int) -> None:
        """Set the busy flag of the hosts of ``alloc`` to ``value`` (1: computing, 0: idle)."""
        busy = self.busy
        flag = _FLAGS[value]
        for first, last in alloc.intervals():
            busy[first:last + 1] = flag * (last - first + 1)

    def clash(self, alloc: ProcSet) -> ProcSet | None:
        """The hosts of ``alloc`` already computing a job, or None when there is none."""
        busy = self.busy
        for first, last in alloc.intervals():
            if busy.find(1, first, last + 1) >= 0:
                break
        else:
            return None
        return ProcSet(*(i for first, last in alloc.intervals() for i in range(first, last + 1) if busy[i]))

    def duration(self, profile: dict, alloc: ProcSet) -> float:
        """Seconds a job of ``profile`` lasts on ``alloc`` (see :func:`batreplay.engine.profiles.execution_time`)."""
        return self.timing(profile, alloc)[0]

    def timing(self, profile: dict, alloc: ProcSet) -> tuple[float, float]:
        """``(duration, rate)`` of a job of ``profile`` on ``alloc``: the seconds it lasts (see
        :func:`batreplay.engine.profiles.execution_time`) and 0 for a sleep (``delay``), else the progress rate of
        its parallel task (SimGrid's ptask_L07: 1 unit of work done at the pace of the slowest host,
        ``speed / flop``; ``inf`` when no host computes)."""
        kind = profile["type"]
        if kind == "delay":
            return float(profile["delay"]), 0.0
        speed = self.uniform_speed
        if speed is not None and kind != "parallel":  # one speed: the same numbers without the lists
            flop = float(profile["cpu"]) if kind == "parallel_homogeneous" else float(profile["cpu"]) / len(alloc)
            return flop / speed, (speed / flop if flop > 0 else float("inf"))
        speeds = [self.speeds[i] for i in alloc]
        flops = host_flops(profile, len(speeds))
        rates = [speed / flop for speed, flop in zip(speeds, flops) if flop > 0]
        return execution_time(profile, speeds), (min(rates) if rates else float("inf"))


def final_state(code: int) -> str:
    """The state Batsim 4.2.1 gives a job that ended with return ``code``: 0 a success, > 0 a failure, -1 its
    walltime reached."""
    if code == 0:
        return SUCCESS
    return FAILED if code > 0 else WALLTIME_REACHED


def start_job(kernel: Kernel, server: Server, machine: Machine, job: Job, profile: dict, alloc: ProcSet,
              steps: Sequence[Leaf] | None = None) -> None:
    """Start ``job`` (of ``profile``) on ``alloc`` now: it runs until it completes or its walltime is reached,
    then its executor sends a COMPLETED message (the job, in its final state) to ``server``.

    ``steps``: for a composed profile, its leaves (:func:`batreplay.engine.profiles.leaves_of`), run one after the
    other as Batsim 4.2.1's ``execute_task`` runs them (:class:`Steps`); None for any other profile, which is run
    as one step (:func:`run_step`). The job ends with the return code of its profile (``ret``, default 0),
    ``COMPLETED_FAILED`` when it is positive.
    """
    job.state = "RUNNING"
    job.start = kernel.clock
    job.allocation = alloc
    if machine.shared is None:
        machine.mark(alloc, 1)

    def complete(code: int, leftover: Callable[[], None] | None) -> None:
        job.completion_token = None
        job.steps = None
        job.state = final_state(code)
        job.return_code = code
        job.end = kernel.clock
        if machine.shared is None:
            machine.mark(job.allocation, 0)
        # The executor puts its message as soon as it is woken, like a submitter or a waiter: in SimGrid
        # it reaches the mailbox before the decisions of a request-reply actor created in the same step
        # (or its next decision, when that actor's previous message ended in this step).
        server.arrive(Message(COMPLETED, job, leftover))

    if steps is None:
        def ended(final: str, leftover: Callable[[], None] | None) -> None:
            complete(-1 if final == WALLTIME_REACHED else profile.get("ret", 0), leftover)

        run_step(kernel, machine, job, profile, alloc, job.walltime, ended)
    else:
        job.steps = Steps(kernel, machine, job, steps, complete)
        job.steps.next()


def run_step(kernel: Kernel, machine: Machine, job: Job, profile: Mapping, alloc: ProcSet, remaining: float,
             ended: Callable[[str, Callable[[], None] | None], None]) -> None:
    """Run one step of ``job`` (a profile that is not composed) on ``alloc`` with ``remaining`` seconds of
    walltime left (negative: none), then ``ended(final, leftover)``: ``final`` is SUCCESS or WALLTIME_REACHED,
    ``leftover`` None or what stops a parallel task that lost its race with the walltime. Nothing is called for
    a step of a job killed meanwhile (its ``completion_token`` changed).

    Batsim 4.2.1 sleeps a delay step only while its delay is strictly below the walltime left; otherwise it sleeps
    until the walltime and reports it reached. A parallel task, though, is waited for with a timeout of the
    walltime left (SimGrid's wait_for: a second action, a sleep, beside the computation): the first to end
    decides, and when both end in the same step the task wins (SimGrid handles the ended actions of the
    ptask_L07 model in the order they were started). Far from the walltime (beyond :data:`RACE_BAND`) the outcome
    is certain and one action suffices; near it both run, with SimGrid's arithmetic, and a task that loses keeps
    running until its executor exits (KTH-SP2 job 5464, 2.5 ns after its walltime). The task's executors run on
    ``job.executors`` when the decision process gave a mapping, else one on each host of ``alloc``.
    """
    hosts = alloc if job.executors is None else job.executors
    if machine.transfers is not None and machine.transfers.moves_bytes(profile):  # hosts and links, shared
        transfers = machine.transfers
        stores = profile["type"] in (PFS, DATA_STAGING)  # (nothing computed)
        try:
            task_hosts = transfers.hosts_of(profile, hosts, job.storage_mapping)
            task = transfers.task(profile, task_hosts, [] if stores else host_flops(profile, len(hosts)))
        except (EngineError, UnsupportedProfileError) as err:  # (mid-run: name the job)
            raise type(err)(f"job '{job.full_id}': {err}") from None
        if profile["type"] == PFS:  # (node I/O over time)
            transfers.io_trace.describe(task, profile, task_hosts)
        _run_shared_step(kernel, job, task, remaining, ended)
        return
    if machine.shared is not None and profile["type"] != "delay":
        coscheduled = isinstance(machine.shared, CoScheduledHosts)  # its speedup model rates jobs by description
        task = machine.task(profile, hosts, job=job.wire_description() if coscheduled else None,
                            solver=machine.shared)
        _run_shared_step(kernel, job, task, remaining, ended)
        return
    if job.executors is not None and profile["type"] != "delay":  # (a mapping: maybe several executors on a host)
        rate = machine.alone_rate(profile, hosts)
        duration = 1.0 / rate if rate else 0.0
    else:
        duration, rate = machine.timing(profile, alloc)
    token = kernel.next_seq()
    job.completion_token = token

    def finish(final: str) -> None:
        if job.completion_token != token:  # killed meanwhile, or the other side of the race won
            return
        job.completion_token = None
        # When the walltime sleep wins the race, Batsim does not cancel the parallel task: it goes on (to no
        # one) until the executor actor exits, once its JOB_COMPLETED is received, and SimGrid cancels the
        # activities it left. If the task ends meanwhile, its end is one more step of the clock.
        leftover = job.activity if final == WALLTIME_REACHED and job.timeout is not None else None
        if leftover is None:
            kernel.cancel(job.activity)
        kernel.cancel(job.timeout)
        job.activity = job.timeout = None
        ended(final, None if leftover is None else lambda: kernel.cancel(leftover))

    band = RACE_BAND * (1.0 + remaining)
    if rate and (remaining < 0 or duration < remaining - band):
        job.activity = kernel.start_activity(1.0, rate, PRIO_SEND, finish, SUCCESS)
    elif rate and duration <= remaining + band:
        job.activity = kernel.start_activity(1.0, rate, PRIO_SEND, finish, SUCCESS)
        job.timeout = kernel.sleep(remaining, finish, WALLTIME_REACHED)
    elif not rate and (remaining < 0 or duration < remaining):
        job.activity = kernel.sleep(duration, finish, SUCCESS)
    else:
        job.activity = kernel.sleep(remaining, finish, WALLTIME_REACHED)


class Steps:
    """A job of a composed profile running its steps one after the other (Batsim 4.2.1, ``execute_task``).

    The walltime is counted down as Batsim counts it, in doubles: a delay step takes its delay off what is left
    (when some is left), a parallel task the time it ran; each step is then given what is left. A step whose
    return code (``ret``) is not 0 ends the job there with that code, as does a composed profile whose steps all
    ended (its own ``ret``: :attr:`Leaf.closes`); the job succeeds when its last step does with code 0.

    Args:
        steps: the job's leaves, in order (at least one).
        complete: called once with the job's return code and the leftover of a lost race (see
            :func:`run_step`), unless the job is killed.
    """

    def __init__(self, kernel: Kernel, machine: Machine, job: Job, steps: Sequence[Leaf],
                 complete: Callable[[int, Callable[[], None] | None], None]) -> None:
        self.kernel, self.machine, self.job, self.steps, self.complete = kernel, machine, job, steps, complete
        self.remaining = job.walltime
        self.index = -1
        self.started = 0.0  # the clock when the current step started (s)

    @property
    def current(self) -> Leaf:
        """The step the job is at."""
        return self.steps[self.index]

    def next(self) -> None:
        """Start the next step."""
        self.index += 1
        self.started = self.kernel.clock
        run_step(self.kernel, self.machine, self.job, self.current.profile, self.job.allocation, self.remaining,
                 self.ended)

    def ended(self, final: str, leftover: Callable[[], None] | None) -> None:
        """The current step ended (``final``: SUCCESS or WALLTIME_REACHED)."""
        if final == WALLTIME_REACHED:
            self.complete(-1, leftover)
            return
        step = self.current
        if step.profile["type"] == "delay":
            if self.remaining > 0:
                self.remaining -= float(step.profile["delay"])
        elif self.remaining >= 0:
            self.remaining = self.remaining - (self.kernel.clock - self.started)
        for code in (step.profile.get("ret", 0),) + step.closes:
            if code != 0:
                self.complete(code, None)
                return
        if self.index + 1 == len(self.steps):
            self.complete(0, None)
        else:
            self.next()

    def progress(self) -> dict:
        """Batsim's progress tree of the job now (the KILL_JOB reply's ``job_progress`` entry): each composed
        profile with the index of its current step, down to the current leaf and the fraction of it done."""
        step = self.current
        done = fraction_done(self.kernel, self.machine, self.job, step.profile, self.started)
        tree: dict = {"profile_name": step.name, "progress": printed_time(done)}
        for name, index in reversed(step.path):
            tree = {"profile_name": name, "current_task_index": index, "current_task": tree}
        return tree


def fraction_done(kernel: Kernel, machine: Machine, job: Job, profile: Mapping, started: float) -> float:
    """The fraction of a step (``profile``, started at clock ``started``, s) of running ``job`` done now: Batsim's
    progress of a leaf task, ``1 - remaining`` for a task whose rate may have changed (``job.task``), else the time
    since it started over its length alone on its hosts (1 for a step of no length; 0 while the task waits out its
    routes' latency)."""
    if job.task is not None:
        return 0.0 if job.task.waiting else 1.0 - kernel.work_left(job.task.owner)
    if job.executors is not None and profile["type"] != "delay":  # (a mapping: timed by its rate alone)
        return 1.0 - kernel.work_left(job.activity) if job.activity is not None and job.activity.rate else 1.0
    duration = machine.duration(profile, job.allocation)
    return (kernel.clock - started) / duration if duration else 1.0


def _run_shared_step(kernel: Kernel, job: Job, task: SharedTask, remaining: float,
                     ended: Callable[[str, Callable[[], None] | None], None]) -> None:
    """:func:`run_step` for a parallel task whose rate is its share of resources other tasks use too (hosts under
    compute sharing, the links of jobs that read and write; ``task.solver``), which changes whenever a task starts
    or stops on them, so the outcome of its race with the walltime is never known in advance: both the task and the
    walltime sleep run, and the first to end decides (the task when both end in the same step)."""
    token = kernel.next_seq()
    job.completion_token = token

    def finish(final: str) -> None:
        if job.completion_token != token:  # killed meanwhile, or the other side of the race won
            return
        job.completion_token = None
        # as in run_step: a task that lost its race with the walltime goes on (and keeps its share) until the
        # executor's JOB_COMPLETED is received
        leftover = task if final == WALLTIME_REACHED and task.owner is not None else None
        kernel.cancel(job.timeout)
        if leftover is None:
            stop_shared_task(kernel, task)
        job.activity = job.timeout = None
        job.task = None
        ended(final, None if leftover is None else lambda: stop_shared_task(kernel, leftover))

    start_shared_task(kernel, task, PRIO_SEND, finish, SUCCESS)
    job.task = task
    job.activity = None
    if remaining >= 0:
        job.timeout = kernel.sleep(remaining, finish, WALLTIME_REACHED)
