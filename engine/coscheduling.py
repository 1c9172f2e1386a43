"""Co-scheduling: jobs co-allocated on shared hosts, each sped up or slowed down by its neighbours (a speedup model).

The co-scheduling HPC simulator this project builds on (its PAPER.md, "How is co-scheduling supported") gives each job,
at every step, the worst speedup over the jobs it shares a host with (eq. 1 of :mod:`.speedup`; 1 without a
neighbour), and rescales its remaining time by ``speedup_n / speedup_{n+1}`` (eq. 2) from its compact execution
time. On the engine's kernel this is a rate: a parallel task whose whole work is 1 unit progresses at
``speedup x`` its rate alone on its hosts (``min_h speed_h / flop_h``, SimGrid's rate of an unshared task), so that
when the speedup changes, the time left is multiplied by exactly the ratio of eq. 2. A job's speedup changes only
when a neighbour starts or ends, so :meth:`CoScheduledHosts.add` and :meth:`CoScheduledHosts.remove` rate again the
task and its direct neighbours alone.

This mode replaces SimGrid's sharing of a host's flop rate (:mod:`.sharing`): co-allocated jobs run on their own
CPUs of the shared hosts, and the model accounts for what they do to each other. Real Batsim has no such mode: it
is an extension of the embedded engine. This module imports the engine's sharing (for :class:`SharedTask`) and
speedup modules.
"""

from __future__ import annotations

from collections.abc import Sequence

from batreplay.engine.sharing import SharedTask
from batreplay.platforms.speedup import SpeedupModel, SpeedupModelError


class CoScheduledHosts:
    """The tasks on each host and their rates under ``model`` (the interface of
    :class:`~batreplay.engine.sharing.SharedHosts`).

    Args:
        speeds: flop/s of each host (of one core), by resource id.
        model: the speedup model (``getSpeedup``); each task's ``job`` is the job's Batsim JSON object.
    """

    def __init__(self, speeds: Sequence[float], model: SpeedupModel) -> None:
        self.speeds = [float(s) for s in speeds]
        self.model = model
        self.tasks_on: list[list[SharedTask]] = [[] for _ in self.speeds]
        self.watcher = None  # (as SharedHosts': co-scheduled jobs move no bytes, nothing watches their rates)

    def load(self, host: int) -> int:
        """Number of parallel tasks on ``host`` now."""
        return len(self.tasks_on[host])

    def neighbours(self, task: SharedTask) -> list[SharedTask]:
        """The other tasks on the hosts of ``task``, each once, in the order met (hosts by id)."""
        seen = {id(task)}
        found = []
        for host in sorted(task.amounts):
            for other in self.tasks_on[host]:
                if id(other) not in seen:
                    seen.add(id(other))
                    found.append(other)
        return found

    def add(self, task: SharedTask) -> list[SharedTask]:
        """Put ``task`` on its hosts; it and its neighbours, rated again (``task`` first)."""
        for host in task.amounts:
            self.tasks_on[host].append(task)
        changed = [task, *self.neighbours(task)]
        for each in changed:
            self._rate(each)
        return changed

    def remove(self, task: SharedTask) -> list[SharedTask]:
        """Take ``task`` off its hosts; its former neighbours, rated again."""
        former = self.neighbours(task)
        for host in task.amounts:
            self.tasks_on[host].remove(task)
        for each in former:
            self._rate(each)
        return former

    def _rate(self, task: SharedTask) -> None:
        """Eq. 1: the worst speedup over the neighbours (1 alone); the rate is that times the rate alone."""
        values = []
        for other in self.neighbours(task):
            value = float(self.model.speedup(task.job, other.job))
            if not 0 < value < float("inf"):
                raise SpeedupModelError(f"speedup model {type(self.model).__name__} gave {value!r} for job "
                                        f"{task.job.get('id')!r} beside {other.job.get('id')!r}: need a number > 0")
            values.append(value)
        speedup = min(values) if values else 1.0
        task.speedup = speedup
        alone = min((self.speeds[h] / a for h, a in task.amounts.items()), default=float("inf"))
        task.rate = alone * speedup
