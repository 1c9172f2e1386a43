"""probeStaging: FCFS on the lowest free ids (:class:`probes.fcfs_probe.FcfsProbe`) giving every job a storage mapping
with its EXECUTE_JOB: jobs of odd number map the labels ``pfs`` and ``scratch`` to the storage hosts 4 and 5, jobs
of even number the other way round. Written for the recording ``staging-mapping`` (data staging between two
storage hosts). Loadable by pybatsim's launcher (``pybatsim tests/probes/probeStaging.py``)."""

from probes.fcfs_probe import FcfsProbe


class ProbeStaging(FcfsProbe):
    """See the module docstring."""

    def onJobSubmission(self, job):
        number = int(job.id.split("!")[-1])
        job.storage_mapping = {"pfs": 4, "scratch": 5} if number % 2 else {"pfs": 5, "scratch": 4}
        super().onJobSubmission(job)
