"""probeMapping: starts each job at its submission on the hosts and with the executor mapping of :data:`PLAN`
(Batsim's EXECUTE_JOB ``mapping``: executor -> index within the allocation; pybatsim sends ``job.mapping``), so
that several executors of a job compute on one host. Written for the recordings ``mapping-sharing`` and
``mapping-exclusive``. Loadable by pybatsim's launcher (``pybatsim tests/probes/probeMapping.py``)."""

from batsim.batsim import BatsimScheduler
from procset import ProcSet

#: job number -> (allocated host ids, the index within the allocation of each executor's host)
PLAN = {1: ([0], [0] * 8), 2: ([1], [0, 0, 0, 0]), 3: ([4], [0, 0]), 4: ([2, 5], [0, 0, 1]),
        5: ([3], [0, 0, 0]), 6: ([3], [0, 0]), 7: ([2, 3], [1]), 8: ([0, 1], [0, 1, 1, 1, 1, 1]),
        9: ([4, 5], [1, 0, 1]), 10: ([2], [0, 0, 0, 0, 0])}


class ProbeMapping(BatsimScheduler):
    """See the module docstring."""

    def onJobSubmission(self, job):
        hosts, mapping = PLAN[int(job.id.split("!")[-1])]
        job.allocation = ProcSet(*hosts)
        job.mapping = {str(executor): str(index) for executor, index in enumerate(mapping)}
        self.bs.execute_job(job)

    def onJobCompletion(self, job):
        pass
