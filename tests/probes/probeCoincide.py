"""probeCoincide: the decision process recorded in ``../shared/batsim-golden/coincide`` (its README describes it).

FCFS without backfilling on the lowest free resource ids; on the first submission asks to be called at t = 10,
20, 20 and 30 s; at each call (k = 0, 1, ...) registers a delay-5 profile ``c<k>`` in workload ``dyn`` and a
1-host job ``dyn!c<k>`` (walltime 100 s) submitted now; sends ``registration_finished`` at the call of t = 30 s.
Written for the tests from that description; loadable by pybatsim's launcher
(``pybatsim tests/probes/probeCoincide.py``). Needs Batsim's ``--enable-dynamic-jobs --acknowledge-dynamic-jobs``.
"""

from probes.fcfs_probe import FcfsProbe

CALL_TIMES = (10.0, 20.0, 20.0, 30.0)


class ProbeCoincide(FcfsProbe):
    """See the module docstring."""

    call_times = CALL_TIMES

    def onRequestedCall(self):
        k = self.calls_done
        self.calls_done += 1
        self.bs.register_profiles("dyn", {f"c{k}": {"type": "delay", "delay": 5}})
        self.bs.register_job(f"dyn!c{k}", 1, 100.0, f"c{k}")
        if self.calls_done == len(self.call_times):
            self.bs.notify_registration_finished()
