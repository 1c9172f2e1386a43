"""probeKillExec: starts job 1 on host 0 at once and holds the others; at t = 4 s it answers with KILL_JOB (job 1)
then EXECUTE_JOB (the held jobs, on hosts 1, 2, ...) in one reply. Written for the recording ``kill-then-execute``:
Batsim's killer is an actor created when KILL_JOB is handled, so its KILLING_DONE reaches the server after the
decision process's next decision. Loadable by pybatsim's launcher (``pybatsim tests/probes/probeKillExec.py``)."""

from batsim.batsim import BatsimScheduler
from procset import ProcSet


class ProbeKillExec(BatsimScheduler):
    """See the module docstring."""

    def onSimulationBegins(self):
        self.held = []
        self.first = None
        self.asked = False

    def onJobSubmission(self, job):
        if not self.asked:
            self.bs.wake_me_up_at(4.0)
            self.asked = True
        if job.id.endswith("!1"):
            job.allocation = ProcSet(0)
            self.bs.execute_job(job)
            self.first = job
        else:
            self.held.append(job)

    def onRequestedCall(self):
        self.bs.kill_jobs([self.first])
        for position, job in enumerate(self.held):
            job.allocation = ProcSet(1 + position)
            self.bs.execute_job(job)

    def onJobCompletion(self, job):
        pass

    def onJobsKilled(self, jobs):
        pass
