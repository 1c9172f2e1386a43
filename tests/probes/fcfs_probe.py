"""What the two recorded probe decision processes share (``../shared/batsim-golden/README.md``): FCFS without
backfilling on the lowest free resource ids, and calls asked for (CALL_ME_LATER at :attr:`FcfsProbe.call_times`)
at the first submission. Subclasses react to the calls in ``onRequestedCall``."""

from batsim.batsim import BatsimScheduler
from procset import ProcSet


class FcfsProbe(BatsimScheduler):
    """FCFS on the lowest free ids; asks for :attr:`call_times` at the first submission.

    Attributes:
        call_times: seconds at which to be called (CALL_ME_LATER), asked once at the first submission.
        reject_wider: reject a job wider than the platform at submission (probeDynamic does, probeCoincide's
            description does not say so).
        running: the jobs started and not finished, by id.
        calls_done: number of REQUESTED_CALL received so far.
    """

    call_times: tuple[float, ...] = ()
    reject_wider = False

    def onSimulationBegins(self):
        self.free = ProcSet((0, self.bs.nb_compute_resources - 1))
        self.queue = []
        self.running = {}
        self.calls_asked = False
        self.calls_done = 0

    def onJobSubmission(self, job):
        if not self.calls_asked:
            for when in self.call_times:
                self.bs.wake_me_up_at(when)
            self.calls_asked = True
        if self.reject_wider and job.requested_resources > self.bs.nb_compute_resources:
            self.bs.reject_jobs([job])
        else:
            self.queue.append(job)

    def onJobCompletion(self, job):
        self.running.pop(job.id, None)
        self.free |= job.allocation

    def onJobsKilled(self, jobs):
        pass

    def onNoMoreEvents(self):
        while self.queue and self.queue[0].requested_resources <= len(self.free):
            job = self.queue.pop(0)
            job.allocation = ProcSet(*list(self.free)[: job.requested_resources])
            self.free -= job.allocation
            self.running[job.id] = job
            self.bs.execute_job(job)
