"""probeCoincide: the decision process recorded in ``../shared/batsim-golden/coincide`` (its README describes it).

FCFS without backfilling on the lowest free resource ids; on the first submission asks to be called at t = 10,
20, 20 and 30 s; at each call (k = 0, 1, ...) registers a delay-5 profile ``c<k>`` in workload ``dyn`` and a
1-host job ``dyn!c<k>`` (walltime 100 s) submitted now; sends ``registration_finished`` at the call of t = 30 s.
Written for the tests from that description; loadable by pybatsim's launcher
(``pybatsim tests/probes/probeCoincide.py``). Needs Batsim's ``--enable-dynamic-jobs --acknowledge-dynamic-jobs``.
"""

from batsim.batsim import BatsimScheduler
from procset import ProcSet

CALL_TIMES = (10.0, 20.0, 20.0, 30.0)


class ProbeCoincide(BatsimScheduler):
    """See the module docstring."""

    def onSimulationBegins(self):
        self.free = ProcSet((0, self.bs.nb_compute_resources - 1))
        self.queue = []
        self.calls_asked = False
        self.calls_done = 0

    def onJobSubmission(self, job):
        if not self.calls_asked:
            for when in CALL_TIMES:
                self.bs.wake_me_up_at(when)
            self.calls_asked = True
        self.queue.append(job)

    def onJobCompletion(self, job):
        self.free |= job.allocation

    def onRequestedCall(self):
        k = self.calls_done
        self.calls_done += 1
        self.bs.register_profiles("dyn", {f"c{k}": {"type": "delay", "delay": 5}})
        self.bs.register_job(f"dyn!c{k}", 1, 100.0, f"c{k}")
        if self.calls_done == len(CALL_TIMES):
            self.bs.notify_registration_finished()

    def onNoMoreEvents(self):
        while self.queue and self.queue[0].requested_resources <= len(self.free):
            job = self.queue.pop(0)
            job.allocation = ProcSet(*list(self.free)[: job.requested_resources])
            self.free -= job.allocation
            self.bs.execute_job(job)
