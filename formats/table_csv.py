"""Writing a table's columns as CSV, byte for byte as pandas' ``DataFrame.to_csv(index=False)`` writes them, without
building a DataFrame: the run directory's ``jobs.csv`` and Batsim's ``out_schedule.csv`` are written this way.

The CSV syntax (separators, quoting, line ends) is the standard library's :mod:`csv` writer, configured as pandas
configures it (``QUOTE_MINIMAL``, ``"`` doubled, ``\\n``); only the text of each value is made here, as pandas makes
it for the column's type:

- float64 columns: ``repr`` (the shortest text that reads back as the same double: ``0.1``, ``1e-05``, ``1e+16``,
  ``-0.0``, ``inf``; pandas' ``astype(str)`` gives the very same text), or ``float_format % value`` when a format is
  given (``"%.6f"``); NaN is written as an empty field;
- integer columns: the decimal integer (no ``.0``); boolean columns: ``True`` / ``False``;
- columns of Python objects (text, and pandas' ``str`` / ``string`` columns): strings as they are, ``None`` and
  NaN (and a text column's missing values) empty, numbers as above without ``float_format`` (pandas applies it to
  float columns only).

A column of another type (float32, dates, durations, complex numbers, pandas' nullable ``Int64``...; a ``pd.NA``
among objects) is refused (TypeError) rather than written differently from pandas. It imports numpy, never pandas.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

import numpy as np

#: pandas' CSV dialect for ``to_csv``: minimal quoting with ``"`` (doubled inside a field), ``\n`` line ends.
_DIALECT = {"quoting": csv.QUOTE_MINIMAL, "quotechar": '"', "doublequote": True, "lineterminator": "\n"}


def _float_fields(values: list[float], float_format: str | None) -> list[str]:
    text = repr if float_format is None else float_format.__mod__
    fields = list(map(text, values))
    if "nan" in fields or "-nan" in fields:  # NaN -> empty (a float_format writes it "nan" too)
        fields = ["" if value != value else field for value, field in zip(values, fields)]
    return fields


def _object_field(value: Any, name: str) -> Any:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, float):  # np.float64 too (a subclass); a float32 would be written otherwise
        return "" if value != value else repr(float(value))
    raise TypeError(f"CSV column {name!r}: cannot write {value!r} ({type(value).__name__}) as pandas would")


def _object_fields(values: list, name: str) -> list:
    if set(map(type, values)) <= {str}:  # text only (job ids, profile names): written as it is
        return values
    return [_object_field(value, name) for value in values]


def csv_fields(values: Any, *, float_format: str | None = None, name: str = "") -> list:
    """The fields of one column as ``DataFrame.to_csv`` writes them (see the module docstring).

    Args:
        values: a numpy array, a pandas Series or a list (then typed value by value, as an object column).
        float_format: ``%``-format of the values of a float column (None: ``repr``).
        name: the column's name, for error messages.

    Raises:
        TypeError: a column or value of a type pandas would write otherwise (dates, complex numbers, ``pd.NA``...).
    """
    if hasattr(values, "to_numpy"):  # a pandas Series: its values as numpy holds them (object for text)
        if isinstance(values.dtype, np.dtype):
            values = values.to_numpy()
        elif str(values.dtype) in ("str", "string"):  # pandas' text types: missing values written empty
            values = values.to_numpy(dtype=object, na_value=None)
        else:  # (an Int64 column would come out as floats, "1.0" where pandas writes "1")
            raise TypeError(f"CSV column {name!r}: values of type {values.dtype} are not written as pandas would")
    if not isinstance(values, np.ndarray):
        return _object_fields(list(values), name)
    kind = values.dtype.kind
    if values.dtype == np.float64:  # (pandas writes float32 values with their own shortest text)
        return _float_fields(values.tolist(), float_format)
    if kind in "iu":
        return list(map(str, values.tolist()))
    if kind == "b":
        return list(map(str, values.tolist()))
    if kind in "OU":
        return _object_fields(values.tolist(), name)
    raise TypeError(f"CSV column {name!r}: values of type {values.dtype} are not written as pandas would")


def write_csv_table(stream: TextIO, columns: Mapping[str, Any], *, float_format: str | None = None,
                    header: bool = True) -> None:
    """Write ``columns`` (name -> values, all of the same length; see :func:`csv_fields`) to ``stream`` as
    ``pandas.DataFrame(columns).to_csv(stream, index=False, float_format=float_format)`` does: a header line
    (unless ``header`` is False: more rows of a table written in parts), then one line per row.

    Raises:
        ValueError: no column, or columns of different lengths.
        TypeError: see :func:`csv_fields`.
    """
    if not columns:
        raise ValueError("a CSV table needs at least one column")
    fields: list[Sequence] = [csv_fields(values, float_format=float_format, name=name)
                              for name, values in columns.items()]
    lengths = {name: len(column) for name, column in zip(columns, fields)}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"CSV columns of different lengths: {lengths}")
    writer = csv.writer(stream, **_DIALECT)
    if header:
        writer.writerow(list(columns))
    writer.writerows(zip(*fields))
