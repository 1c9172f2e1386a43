"""probeAlloc: FCFS without backfilling that starts each job on the hosts its options give (``{"alloc": {"<job
number>": [host ids]}}``), else on the lowest free ids. Written for the recordings ``latency-tie-walltime`` and
``latency-tie-order`` (tasks that end in the same step after waiting out different latencies). Loadable by pybatsim's
launcher."""

from batsim.batsim import BatsimScheduler
from procset import ProcSet


class ProbeAlloc(BatsimScheduler):
    """See the module docstring."""

    def onSimulationBegins(self):
        self.free = ProcSet((0, self.bs.nb_compute_resources - 1))
        self.queue = []

    def onJobSubmission(self, job):
        self.queue.append(job)

    def onJobCompletion(self, job):
        self.free |= job.allocation

    def onNoMoreEvents(self):
        allocations = self.options.get("alloc", {})
        while self.queue:
            job = self.queue[0]
            wanted = allocations.get(job.id.split("!")[1])
            if wanted is not None:
                if not all(host in self.free for host in wanted):
                    break
                job.allocation = ProcSet(*wanted)
            elif job.requested_resources <= len(self.free):
                job.allocation = ProcSet(*list(self.free)[: job.requested_resources])
            else:
                break
            self.queue.pop(0)
            self.free -= job.allocation
            self.bs.execute_job(job)
