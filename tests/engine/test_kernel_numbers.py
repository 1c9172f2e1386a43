"""The kernel's number helpers equal the slower forms they replace, on any double (hypothesis)."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from batreplay.engine.kernel import long_double_difference, printed_time

# times as the engine meets them: whole seconds of a log, plus the nanoseconds of internal messages; and any double
log_times = st.builds(lambda seconds, ns: seconds + ns * 1e-9, st.integers(0, 10**9), st.integers(0, 10**6))
doubles = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e15, max_value=1e15)


def bits(value: float) -> bytes:
    return struct.pack("<d", value)


@settings(max_examples=3000)
@given(st.one_of(log_times, doubles, st.builds(lambda k: k / 2e6, st.integers(0, 10**12))))
def test_printed_time_is_the_six_decimal_text_read_back(value):
    """round(value, 6) is float("%.6f" % value), to the bit (halfway cases k / 2e6 included), for a numpy float64
    too (numpy's own round differs on some)."""
    assert bits(printed_time(value)) == bits(float("%.6f" % value))
    assert bits(printed_time(np.float64(value))) == bits(float("%.6f" % value))


def test_printed_time_of_special_values():
    assert bits(printed_time(-0.0)) == bits(-0.0)
    assert printed_time(math.inf) == math.inf
    assert printed_time(0.0000005) == 0.0 and printed_time(0.0000015) == 0.000002  # half to even, binary value
    assert printed_time(272440.00000098) == 272440.000001


@settings(max_examples=3000)
@given(st.one_of(st.tuples(log_times, log_times), st.tuples(doubles, doubles),
                 st.tuples(st.integers(0, 10**9).map(float), log_times)))
def test_long_double_difference_equals_numpy_long_double(pair):
    later, earlier = pair
    expected = float(np.longdouble(later) - np.longdouble(earlier))
    assert bits(long_double_difference(later, earlier)) == bits(expected)


@pytest.mark.skipif(np.finfo(np.longdouble).nmant != 63, reason="long double is not x87 80-bit here")
@pytest.mark.parametrize("scale", [0, 12, 30, -20])
@pytest.mark.parametrize("tail", [12, 25, 50])
def test_long_double_difference_follows_long_double_where_double_rounds_otherwise(scale, tail):
    """2**s - (-(2**(s-53) + 2**(s-53-t))): rounded once to double it goes up to the next double; in long double the
    last term is rounded away first, leaving a tie that the cast to double rounds to even, 2**s (scale 0, tail 25:
    1 - (-(2**-53 + 2**-78)) is 1 + 2**-52 in double, 1.0 as Batsim computes it)."""
    later, earlier = 2.0**scale, -(2.0 ** (scale - 53) + 2.0 ** (scale - 53 - tail))
    assert later - earlier == later + 2.0 ** (scale - 52)
    assert long_double_difference(later, earlier) == float(np.longdouble(later) - np.longdouble(earlier)) == later
