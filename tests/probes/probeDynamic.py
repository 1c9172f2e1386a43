"""probeDynamic: the decision process recorded in ``../shared/batsim-golden/dynamic`` (its README describes it).

FCFS without backfilling on the lowest free resource ids; rejects a job wider than the platform; on the first
submission asks to be called at t = 5, 20 and 50 s; at the k-th call (k = 0, 1, 2) registers a delay profile
``p<k>`` of 7.5 + k s in workload ``dyn`` and two jobs ``dyn!<k>a`` (1 host) and ``dyn!<k>b`` (2 hosts), walltime
30 s, submitted now; at t = 20 s kills the running job with the smallest id (string order); after the last
registration sends ``registration_finished``. The delays are not in the README: they are read from the recorded
REGISTER_PROFILE events. Written for the tests from that description; loadable by pybatsim's launcher
(``pybatsim tests/probes/probeDynamic.py``). Needs Batsim's ``--enable-dynamic-jobs --acknowledge-dynamic-jobs``.
"""

from batsim.batsim import BatsimScheduler
from procset import ProcSet

CALL_TIMES = (5.0, 20.0, 50.0)
KILL_TIME = 20.0


class ProbeDynamic(BatsimScheduler):
    """See the module docstring."""

    def onSimulationBegins(self):
        self.free = ProcSet((0, self.bs.nb_compute_resources - 1))
        self.queue = []
        self.running = {}
        self.calls_asked = False
        self.calls_done = 0

    def onJobSubmission(self, job):
        if not self.calls_asked:
            for when in CALL_TIMES:
                self.bs.wake_me_up_at(when)
            self.calls_asked = True
        if job.requested_resources > self.bs.nb_compute_resources:
            self.bs.reject_jobs([job])
        else:
            self.queue.append(job)

    def onJobCompletion(self, job):
        self.running.pop(job.id, None)
        self.free |= job.allocation

    def onJobsKilled(self, jobs):
        pass

    def onRequestedCall(self):
        k = self.calls_done
        self.calls_done += 1
        profile = f"p{k}"
        self.bs.register_profiles("dyn", {profile: {"type": "delay", "delay": 7.5 + k}})
        self.bs.register_job(f"dyn!{k}a", 1, 30.0, profile)
        self.bs.register_job(f"dyn!{k}b", 2, 30.0, profile)
        if self.bs.time() == KILL_TIME and self.running:
            self.bs.kill_jobs([self.running[min(self.running)]])
        if self.calls_done == len(CALL_TIMES):
            self.bs.notify_registration_finished()

    def onNoMoreEvents(self):
        while self.queue and self.queue[0].requested_resources <= len(self.free):
            job = self.queue.pop(0)
            job.allocation = ProcSet(*list(self.free)[: job.requested_resources])
            self.free -= job.allocation
            self.running[job.id] = job
            self.bs.execute_job(job)
