"""The free compute resources of a platform, handed out lowest ids first."""

from __future__ import annotations

from procset import ProcInt, ProcSet


def runs_of(ids: list[int]) -> list[tuple[int, int]]:
    """Maximal runs of consecutive integers of a sorted list of distinct ids, as closed ``(first, last)``
    intervals: ``[0, 1, 2, 5, 7, 8] -> [(0, 2), (5, 5), (7, 8)]``."""
    if not ids:
        return []
    if ids[-1] - ids[0] == len(ids) - 1:
        return [(ids[0], ids[-1])]
    runs = []
    first = previous = ids[0]
    for value in ids[1:]:
        if value != previous + 1:
            runs.append((first, previous))
            first = value
        previous = value
    runs.append((first, previous))
    return runs


# procset 1.x keeps a ProcSet's intervals in a list attribute; checked once, with the public constructor as fallback.
_INTERVAL_LIST_LAYOUT = isinstance(getattr(ProcSet(), "_itvs", None), list)


def procset_of_runs(runs: list[tuple[int, int]]) -> ProcSet:
    """The ProcSet of canonical runs: sorted, disjoint, non-adjacent closed intervals, as :func:`runs_of` gives.

    procset's public constructor merges its arguments one at a time (quadratic: about 70 us for 6 intervals),
    which dominated whole-log simulations; for canonical input the interval list is set directly, the way
    procset's own set operators build their results (O(len(runs))). Tests check the result equals
    ``ProcSet(*runs)``.
    """
    if not _INTERVAL_LIST_LAYOUT:
        return ProcSet(*runs)
    result = ProcSet()
    result._itvs = [ProcInt(first, last) for first, last in runs]
    return result


class ResourcePool:
    """Which resource ids are free, with deterministic allocation (lowest free ids first).

    The free ids are kept as a sorted list of integers (list slicing and sorting run in C, which matters with
    hundreds of thousands of jobs; ProcSet arithmetic on a fragmented free set would dominate the run time).

    Args:
        resources: all compute resource ids of the platform (a non-empty ProcSet).

    Attributes:
        all: the platform's resources (ProcSet).
        nb_total: number of resources of the platform.
        nb_free: number of resources free now.
    """

    def __init__(self, resources: ProcSet):
        if len(resources) == 0:
            raise ValueError("a platform needs at least one resource")
        self.all = ProcSet(resources)
        self._free_ids: list[int] = list(self.all)
        self._busy: set[int] = set()
        self.nb_total = len(self._free_ids)

    @property
    def nb_free(self) -> int:
        """Number of free resources."""
        return len(self._free_ids)

    def fits(self, count: int) -> bool:
        """Whether ``count`` resources are free (a job of ``count`` nodes can start)."""
        return count <= len(self._free_ids)

    @property
    def free(self) -> ProcSet:
        """The free resources (a new ProcSet)."""
        return procset_of_runs(runs_of(self._free_ids))

    def allocate(self, count: int) -> ProcSet:
        """Take the ``count`` lowest free ids.

        Raises:
            ValueError: fewer than ``count`` resources are free, or ``count`` < 1.
        """
        free = self._free_ids
        if count < 1 or count > len(free):
            raise ValueError(f"cannot take {count} resources out of {len(free)} free ones")
        taken = free[:count]
        del free[:count]
        self._busy.update(taken)
        return procset_of_runs(runs_of(taken))

    def release(self, allocation: ProcSet) -> None:
        """Give back the resources of ``allocation``.

        Raises:
            ValueError: some of them are not currently allocated (already free, or not resources of this platform:
                a double release).
        """
        ids: list[int] = []
        for interval in allocation.intervals():
            ids.extend(range(interval.inf, interval.sup + 1))
        busy = self._busy
        if not busy.issuperset(ids):
            stray = sorted(set(ids) - busy)
            raise ValueError(f"cannot release {allocation}: {procset_of_runs(runs_of(stray))} are not allocated")
        busy.difference_update(ids)
        free = self._free_ids
        free.extend(ids)
        free.sort()
