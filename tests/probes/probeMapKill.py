"""probeMapKill: starts each job at its submission on the hosts and with the executor mapping its options give, and
kills jobs at given times. Options (``scheduler.txt``'s second line): ``{"plan": {"<job number>": [[host ids],
[index within the allocation of each executor's host] or null]}, "kills": {"<time, s>": ["<job number>", ...]}}``.
Written for the recording ``mapping-kill`` (the progress of killed mapped jobs). Loadable by pybatsim's launcher."""

from batsim.batsim import BatsimScheduler
from procset import ProcSet


class ProbeMapKill(BatsimScheduler):
    """See the module docstring."""

    def onSimulationBegins(self):
        self.jobs = {}
        self.asked = False

    def onJobSubmission(self, job):
        if not self.asked:
            for when in self.options.get("kills", {}):
                self.bs.wake_me_up_at(float(when))
            self.asked = True
        number = job.id.split("!")[-1]
        self.jobs[number] = job
        hosts, mapping = self.options["plan"][number]
        job.allocation = ProcSet(*hosts)
        if mapping is not None:
            job.mapping = {str(executor): str(index) for executor, index in enumerate(mapping)}
        self.bs.execute_job(job)

    def onRequestedCall(self):
        now = self.bs.time()
        for when, numbers in self.options.get("kills", {}).items():
            if abs(float(when) - now) < 1e-9:
                self.bs.kill_jobs([self.jobs[number] for number in numbers if number in self.jobs])

    def onJobCompletion(self, job):
        pass

    def onJobsKilled(self, jobs):
        pass
