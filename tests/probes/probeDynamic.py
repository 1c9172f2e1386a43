"""probeDynamic: the decision process recorded in ``../shared/batsim-golden/dynamic`` (its README describes it).

FCFS without backfilling on the lowest free resource ids; rejects a job wider than the platform; on the first
submission asks to be called at t = 5, 20 and 50 s; at the k-th call (k = 0, 1, 2) registers a delay profile
``p<k>`` of 7.5 + k s in workload ``dyn`` and two jobs ``dyn!<k>a`` (1 host) and ``dyn!<k>b`` (2 hosts), walltime
30 s, submitted now; at t = 20 s kills the running job with the smallest id (string order); after the last
registration sends ``registration_finished``. The delays are not in the README: they are read from the recorded
REGISTER_PROFILE events. Written for the tests from that description; loadable by pybatsim's launcher
(``pybatsim tests/probes/probeDynamic.py``). Needs Batsim's ``--enable-dynamic-jobs --acknowledge-dynamic-jobs``.
"""

from probes.fcfs_probe import FcfsProbe

CALL_TIMES = (5.0, 20.0, 50.0)
KILL_TIME = 20.0


class ProbeDynamic(FcfsProbe):
    """See the module docstring."""

    call_times = CALL_TIMES
    reject_wider = True

    def onRequestedCall(self):
        k = self.calls_done
        self.calls_done += 1
        profile = f"p{k}"
        self.bs.register_profiles("dyn", {profile: {"type": "delay", "delay": 7.5 + k}})
        self.bs.register_job(f"dyn!{k}a", 1, 30.0, profile)
        self.bs.register_job(f"dyn!{k}b", 2, 30.0, profile)
        if self.bs.time() == KILL_TIME and self.running:
            self.bs.kill_jobs([self.running[min(self.running)]])
        if self.calls_done == len(self.call_times):
            self.bs.notify_registration_finished()
