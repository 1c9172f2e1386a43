"""Availability profile: the number of free nodes as a step function of future time.

Used by conservative backfilling (Mu'alem & Feitelson 2001, IEEE TPDS 12(6)), where every waiting job holds a
reservation: the profile starts from the nodes free now, gains the nodes of each running job at its expected end
(start + walltime), and loses the nodes of each reservation over ``[start, start + walltime)``.
"""

from __future__ import annotations

import math
from bisect import bisect_right

from batreplay.schedulers.policy import TIME_EPSILON


class AvailabilityProfile:
    """Free nodes over ``[origin, inf)``, piecewise constant.

    Segment ``i`` covers ``[times[i], times[i+1])`` (the last one extends to ``inf``) with ``free[i]`` nodes
    free. Breakpoints closer than :data:`TIME_EPSILON` are treated as one.

    Args:
        origin: the first instant of the profile (s), usually the decision time.
        nb_free: free nodes from ``origin`` on.
    """

    def __init__(self, origin: float, nb_free: int):
        self.times: list[float] = [origin]
        self.free: list[int] = [nb_free]

    @classmethod
    def from_steps(cls, origin: float, nb_free: int, steps: list[tuple[float, int]]) -> AvailabilityProfile:
        """Profile with ``nb_free`` nodes free at ``origin`` (s) changed by ``(time, delta)`` steps.

        Steps before the origin count at the origin; steps closer than :data:`TIME_EPSILON` share one breakpoint,
        which is kept even when their deltas cancel (so every step time stays a breakpoint). Built by one sort and
        a running sum, O(n log n) for n steps. Negative counts are not checked here.
        """
        profile = cls(origin, nb_free)
        times = profile.times
        free = profile.free
        current = nb_free
        for time, delta in sorted(steps):
            current += delta
            if time - times[-1] <= TIME_EPSILON:
                free[-1] = current
            else:
                times.append(time)
                free.append(current)
        return profile

    @property
    def origin(self) -> float:
        """First instant covered (s)."""
        return self.times[0]

    def __len__(self) -> int:
        return len(self.times)

    def free_at(self, time: float) -> int:
        """Free nodes at ``time`` (s); ``time`` before the origin is read as the origin."""
        return self.free[max(0, bisect_right(self.times, time + TIME_EPSILON) - 1)]

    def min_free(self, start: float, end: float) -> int:
        """Fewest free nodes over ``[start, end)`` (s; ``end`` may be ``inf``; ``start`` before the origin is read
        as the origin), with the breakpoint tolerance of :meth:`add`: ``add(start, end, -n)`` succeeds exactly when
        this is at least ``n``."""
        times = self.times
        free = self.free
        index = max(0, bisect_right(times, start + TIME_EPSILON) - 1)
        lowest = free[index]
        limit = end - TIME_EPSILON
        index += 1
        count = len(times)
        while index < count and times[index] < limit:
            if free[index] < lowest:
                lowest = free[index]
            index += 1
        return lowest

    def _breakpoint(self, time: float) -> int:
        """Index of the segment starting at ``time`` (s, >= origin), splitting a segment if needed."""
        times = self.times
        index = bisect_right(times, time + TIME_EPSILON) - 1
        if index < 0:
            raise ValueError(f"time {time} is before the profile origin {times[0]}")
        if time - times[index] <= TIME_EPSILON:
            return index
        times.insert(index + 1, time)
        self.free.insert(index + 1, self.free[index])
        return index + 1

    def add(self, start: float, end: float, delta: int, *, check: bool = True) -> None:
        """Add ``delta`` free nodes over ``[start, end)`` (s; ``end`` may be ``inf``; ``start`` before the origin
        is clamped to it). Use a negative ``delta`` to reserve, a positive one to release.

        Raises:
            ValueError: ``check`` is true and the result would have a negative number of free nodes somewhere
                (nothing is changed then).
        """
        start = max(start, self.times[0])
        if end - start <= TIME_EPSILON:
            return
        first = self._breakpoint(start)
        last = len(self.times) if end == math.inf else self._breakpoint(end)
        free = self.free
        for index in range(first, last):
            free[index] += delta
            if check and free[index] < 0:
                for undo in range(first, index + 1):
                    free[undo] -= delta
                raise ValueError(
                    f"reserving {-delta} nodes over [{start}, {end}) leaves {free[index] + delta} - {-delta} < 0 "
                    f"free at {self.times[index]}"
                )

    def earliest_fit(
        self,
        nodes: int,
        duration: float,
        not_before: float,
        *,
        before: float = math.inf,
        ignoring: tuple[float, float, int] | None = None,
    ) -> float:
        """Earliest time ``t`` (s), ``not_before <= t < before``, with at least ``nodes`` free over
        ``[t, t + duration)``; ``before`` if there is none (``inf`` by default: nodes held forever).

        Args:
            nodes: nodes needed.
            duration: length of the window (s); ``inf`` for a job without walltime.
            not_before: earliest acceptable start (s), usually the decision time.
            before: stop looking at this time (s) and return it.
            ignoring: ``(start, end, nodes)`` of a reservation present in the profile, starting at ``before`` or
                later, whose nodes count as free during the search (the job being moved earlier); its start and
                end must be breakpoints of the profile, as :meth:`add` and :meth:`from_steps` make them.

        Raises:
            ValueError: the ignored reservation starts before ``before``.
        """
        times = self.times
        free = self.free
        count = len(times)
        limit = before - TIME_EPSILON
        if ignoring is None:
            own_start = own_end = math.inf
            own_nodes = 0
        else:
            own_start, own_end, own_nodes = ignoring
            if own_start < limit:
                raise ValueError(f"the ignored reservation starts at {own_start}, before {before}")
            own_start -= TIME_EPSILON
            own_end -= TIME_EPSILON
        index = max(0, bisect_right(times, not_before + TIME_EPSILON) - 1)
        while True:
            # Skip to a segment with room; window starts are before `before`, hence before the ignored part.
            while index < count and free[index] < nodes:
                index += 1
            if index >= count:
                return before
            candidate = times[index] if times[index] > not_before else not_before
            if candidate >= limit:
                return before
            end = candidate + duration - TIME_EPSILON
            probe = index + 1
            while probe < count:
                time = times[probe]
                if time >= end:
                    return candidate
                available = free[probe]
                if own_start <= time < own_end:
                    available += own_nodes
                if available < nodes:
                    break
                probe += 1
            else:
                return candidate
            index = probe + 1  # `probe` lacks room: no window can start at or before it

    def drop_before(self, time: float) -> None:
        """Forget the past: make ``time`` (s) the new origin."""
        times = self.times
        index = bisect_right(times, time + TIME_EPSILON) - 1
        if index > 0:
            del times[:index]
            del self.free[:index]
        if time > times[0]:
            times[0] = time
