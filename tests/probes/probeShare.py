"""probeShare: starts every job as soon as it is submitted on the hosts ``0 .. res - 1``, whatever runs there (needs
Batsim's ``--enable-compute-sharing``). Written for the recordings of composed profiles under compute sharing
(``tests/golden/composed-sharing``). Loadable by pybatsim's launcher (``pybatsim tests/probes/probeShare.py``)."""

from batsim.batsim import BatsimScheduler
from procset import ProcSet


class ProbeShare(BatsimScheduler):
    """See the module docstring."""

    def onJobSubmission(self, job):
        job.allocation = ProcSet((0, job.requested_resources - 1))
        self.bs.execute_job(job)

    def onJobCompletion(self, job):
        pass
