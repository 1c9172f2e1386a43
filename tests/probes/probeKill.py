"""probeKill: FCFS without backfilling on the lowest free resource ids (:class:`probes.fcfs_probe.FcfsProbe`) that
asks to be called at :data:`CALL_TIMES` and, at each call, kills the running job with the smallest id (string
order). Written for the recordings of composed profiles (``tests/golden/composed-kill``): a killed job's progress
tree. Loadable by pybatsim's launcher (``pybatsim tests/probes/probeKill.py``)."""

from probes.fcfs_probe import FcfsProbe

CALL_TIMES = (4.0, 9.5, 12.0)


class ProbeKill(FcfsProbe):
    """See the module docstring."""

    call_times = CALL_TIMES

    def onRequestedCall(self):
        self.calls_done += 1
        if self.running:
            self.bs.kill_jobs([self.running[min(self.running)]])

    def onJobsKilled(self, jobs):
        for job in jobs:
            if self.running.pop(job.id, None) is not None:
                self.free |= job.allocation
