"""Run options, each declared once, beside the attribute it sets.

A part of a run description (how the workload is converted, the user model, the scheduler, the engine, the run
itself) declares each of its options as a dataclass field made by :func:`option`: type, default, allowed values
or range, unit, help text, and where a campaign file gives it. Everything else is derived from that declaration
(:func:`declared_options`):

- the part checks its values with it (:func:`check_fields`, called from the part's ``__post_init__``), so the
  command line, a campaign file, the web GUI and ``run.json`` all meet the same check and the same message;
- ``batreplay run`` gets one flag per option (:meth:`Option.argument`: ``--walltime-factor``, its type, choices,
  default and help);
- a campaign file reads the option under its key (:attr:`Option.campaign`: the ``[[logs]]`` table for workload
  conversion, ``[[experiments]]`` for the scheduler and the engine's per-run features), and an instance's id
  hashes it (:attr:`Option.recorded`);
- the web GUI's New-run form shows a field for it (:attr:`Option.form`), checked in the page (a pattern for the
  number's sign and form) and on the server (:meth:`Option.parse_text`, then the part).

This module imports nothing of the package and no third-party library: the command line builds its parser from
the declarations without loading pandas or numpy.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

#: The default of a required option's field (it has none).
MISSING = dataclasses.MISSING
#: Key of a dataclass field's metadata that holds its :class:`Option`.
OPTION_KEY = "batreplay.option"
#: Where a campaign file gives an option: a ``[[logs]]`` table (and ``[defaults]``), an ``[[experiments]]`` table,
#: the ``[campaign]`` table, or the ``[matrix]`` axes (read by the campaign's own rules).
CAMPAIGN_PLACES = ("log", "experiment", "campaign", "matrix")
_KIND_NAMES = {str: "text", int: "an integer", float: "a number", bool: "true or false", dict: "a JSON object",
               Path: "a path"}


#: Keys of a run description (``RunSpec.to_dict()``, ``run.json``'s ``spec``) that say where a run writes, how long
#: it may take and what the user calls it, not what it simulates: left out of the GUI's run ids, of the parameters
#: in which the Runs page says runs differ, and of what makes two runs one experiment (adequacy repetitions).
RUN_CONDUCT: tuple[str, ...] = ("out_dir", "force", "timeout", "label")


class OptionError(ValueError):
    """A value an option does not accept; the message names the option and its command-line flag, in one line."""


@dataclass(frozen=True)
class Option:
    """The declaration of one run option (see the module docstring for what is derived from it).

    Attributes:
        help: one sentence or two for ``--help``, campaign documentation and the form's tooltip (no default: it is
            added from :attr:`default`).
        kind: the value's type: ``str``, ``int``, ``float``, ``bool``, ``dict`` (a JSON object) or ``Path`` (a file
            or folder, given as text or a path).
        choices: the allowed values of a ``str`` option, or a function that returns them when asked (a registry
            that may grow, such as the user models), or None; read them with :attr:`allowed`.
        at_least, above, below, at_most: bounds of a number (inclusive, exclusive, exclusive, inclusive), or None.
        range_note: why the bounds are what they are, appended to an out-of-range message.
        unit: the unit of a number (``s``, ``flop/s``), shown in the help and the form.
        max_chars: for a ``str`` option, a short free text (a run's label): one line of printable text of at most
            this many characters, its surrounding blanks removed (:func:`text_problem`); None: no such rule.
        optional: None is allowed (the option is off, or takes a value computed elsewhere).
        campaign: where a campaign file gives it (:data:`CAMPAIGN_PLACES`), or None when campaigns do not.
        recorded: ``"always"``: every flat run description (``run.json``'s ``spec``) and campaign instance's
            parameters (which its id hashes) hold it; ``"when-set"``: only when it is not at its default, so that the
            run descriptions and instance ids written before the option existed stay the same.
        recorded_with: the name of another option of the same part: this one is recorded exactly when that one is
            (a speedup model's options go with the model), whatever :attr:`recorded` says.
        flag: the command-line flag, ``--`` and the name with dashes unless given.
        metavar: the flag's placeholder in ``--help``.
        default_text: how help texts say the default, when its value alone does not (``found on PATH`` for None).
        form: the web GUI's New-run form shows a field for it (False for options the form sets its own way).
        required: the command line requires it (a run has no default for it).
        command_line: False for an option of a Python API only (the Gymnasium environment's keyword arguments):
            messages name it without a flag.
        name: the option's name in flat run descriptions (``run.json``'s ``spec``, campaign instance parameters,
            the command line's flag): the field's name unless given (``replay`` for the field ``model`` of the
            user model's part).
        field: the dataclass field it sets; filled in by :func:`declared_options`, with ``default``.
    """

    help: str
    kind: type = str
    choices: tuple[str, ...] | Callable[[], tuple[str, ...]] | None = None
    at_least: float | None = None
    above: float | None = None
    below: float | None = None
    at_most: float | None = None
    range_note: str = ""
    unit: str = ""
    max_chars: int | None = None
    optional: bool = False
    campaign: str | None = None
    recorded: str = "when-set"
    recorded_with: str = ""
    flag: str | None = None
    metavar: str | None = None
    default_text: str = ""
    form: bool = True
    required: bool = False
    command_line: bool = True
    name: str = ""
    field: str = ""
    default: Any = None

    def __post_init__(self) -> None:
        if self.kind not in _KIND_NAMES:
            raise TypeError(f"option kind {self.kind!r}: expected one of {', '.join(k.__name__ for k in _KIND_NAMES)}")
        if self.campaign not in (None, *CAMPAIGN_PLACES):
            raise TypeError(f"option campaign place {self.campaign!r}: expected one of {CAMPAIGN_PLACES} or None")
        if self.recorded not in ("always", "when-set"):
            raise TypeError(f"option recorded {self.recorded!r}: expected 'always' or 'when-set'")

    @property
    def allowed(self) -> tuple[str, ...] | None:
        """The allowed values of a ``str`` option now (:attr:`choices`, called when it is a function), or None."""
        return tuple(self.choices()) if callable(self.choices) else self.choices

    @property
    def cli_flag(self) -> str:
        """The command-line flag: :attr:`flag`, or ``--`` and the name with dashes (``--walltime-factor``)."""
        return self.flag or "--" + self.name.replace("_", "-")

    @property
    def label(self) -> str:
        """How messages name the option: ``walltime_factor (--walltime-factor)``; ``jobs`` without a flag."""
        return f"{self.name} ({self.cli_flag})" if self.command_line else self.name

    def bounds_text(self) -> str:
        """The range of a number in words (``> 0``, ``from 1 to below 1.84467e+19``), or an empty string."""
        low = f"from {self.at_least:g}" if self.at_least is not None else None
        high = f"to below {self.below:g}" if self.below is not None else (
            f"to {self.at_most:g}" if self.at_most is not None else None)
        if low and high:
            return f"{low} {high}"
        parts = [f"{sign} {bound:g}" for sign, bound in ((">=", self.at_least), (">", self.above),
                                                         ("<", self.below), ("<=", self.at_most))
                 if bound is not None]
        return " and ".join(parts)

    def is_recorded(self, value: Any, leave_out: str = "defaults") -> bool:
        """Whether a flat description records ``value`` (see :attr:`recorded`; an option declared
        :attr:`recorded_with` another is decided by :func:`recorded_values`): an option declared ``"when-set"`` is
        left out at its default (``leave_out="defaults"``: campaign instance parameters, whose ids must not change
        when an option is added), or only when it is off, None, False or empty (``leave_out="off"``: ``run.json``,
        which records every option that applied)."""
        if self.recorded == "always":
            return True
        if leave_out == "off":
            return value not in (None, False) and value != {}
        return value != self.default

    def check(self, value: Any) -> Any:
        """``value`` as the option holds it: checked against the kind, choices and bounds; an integer given to a
        ``float`` option becomes a float.

        Raises:
            OptionError: the wrong type (a boolean is no number), a value not among the choices, a number out of
                range (NaN and infinities included).
        """
        if value is None:
            if self.optional:
                return None
            raise OptionError(f"{self.label} must be {self._expected()}, got None")
        if self.kind is Path and isinstance(value, (str, os.PathLike)):
            value = Path(value)
        if self.kind is float and isinstance(value, int) and not isinstance(value, bool):
            try:
                value = float(value)
            except OverflowError:
                raise OptionError(f"{self.label} {value}: beyond the range of a number") from None
        if not isinstance(value, self.kind) or (isinstance(value, bool) and self.kind is not bool):
            raise OptionError(f"{self.label} must be {self._expected()}, got {value!r}")
        if self.kind is str and self.max_chars is not None:
            value = value.strip()
            problem = text_problem(value, self.max_chars)
            if problem:
                raise OptionError(f"{self.label} must be {self._expected()}: {problem}")
        allowed = self.allowed
        if allowed is not None and value not in allowed:
            raise OptionError(f"{self.label} {value!r}: expected one of {', '.join(allowed)}")
        if self.kind in (int, float) and not self._in_range(value):
            note = f": {self.range_note}" if self.range_note else ""
            raise OptionError(f"{self.label} must be {self._expected()}, got {value!r}{note}")
        return value

    def _expected(self) -> str:
        what = _KIND_NAMES[self.kind]
        if self.kind is str and self.max_chars is not None:
            what = f"one line of text of 1 to {self.max_chars} characters"
        if self.kind in (int, float):
            bounds = self.bounds_text()
            what = f"{what} {bounds}" if bounds else what
            what += f" {self.unit}" if self.unit and bounds else ""
        return what + (" (or left out)" if self.optional else "")

    def _in_range(self, value: float) -> bool:
        if isinstance(value, float) and not math.isfinite(value):  # (an int of any size is finite)
            return False
        return ((self.at_least is None or value >= self.at_least) and (self.above is None or value > self.above)
                and (self.below is None or value < self.below) and (self.at_most is None or value <= self.at_most))

    def parse_text(self, text: str | None) -> Any:
        """The value of the text a user typed (a command-line argument, a form field): None for an empty text of
        an optional option, a number for a number, the object of a JSON text for a ``dict`` option, ``true`` or
        ``false`` for a boolean; then :meth:`check`.

        Raises:
            OptionError: text that is not of the option's kind (the JSON error's line and column given), or a value
                :meth:`check` refuses.
        """
        if text is None or (isinstance(text, str) and not text.strip() and self.kind is not str):
            return self.check(None if self.optional or self.kind is not dict else {})
        if not isinstance(text, str):
            return self.check(text)
        if self.kind in (str, Path):
            return self.check(text)
        if self.kind is dict:
            return self.check(json_object(text, self.cli_flag))
        if self.kind is bool:
            if text.strip().lower() not in ("true", "false"):
                raise OptionError(f"{self.label}: expected true or false, got {text!r}")
            return text.strip().lower() == "true"
        try:
            number = int(text) if self.kind is int else float(text)
        except ValueError:
            raise OptionError(f"{self.label}: {text.strip()!r} is not {_KIND_NAMES[self.kind]}") from None
        return self.check(number)

    def argument(self) -> tuple[str, dict[str, Any]]:
        """``(flag, keyword arguments)`` of :meth:`argparse.ArgumentParser.add_argument` for ``batreplay run``:
        a boolean is a switch, a number is read by ``int``/``float``, a JSON object is left as text for
        :meth:`parse_text` (its error then is one line, naming the flag); the help ends with the unit and the
        default."""
        kwargs: dict[str, Any] = {"help": self.help_text(), "dest": self.name, "default": self.default}
        if self.required:
            kwargs["required"] = True
            kwargs.pop("default")
        if self.kind is bool:
            kwargs["action"] = "store_true"
            return self.cli_flag, kwargs
        if self.kind is dict:  # read by parse_text (one-line error), not by argparse (usage and error)
            kwargs["metavar"] = "JSON"
            kwargs["default"] = dict(self.default or {})
        elif self.kind in (int, float):
            kwargs["type"] = self.kind
        if self.allowed is not None:
            kwargs["choices"] = self.allowed
        if self.metavar is not None:
            kwargs["metavar"] = self.metavar
        return self.cli_flag, kwargs

    def help_text(self) -> str:
        """:attr:`help`, then the unit and bounds of a number and the default in parentheses. ``%`` is escaped
        for argparse."""
        text = self.help.replace("%", "%%")
        extras = []
        if self.kind in (int, float) and (self.unit or self.bounds_text()):
            extras.append(" ".join(part for part in (self.bounds_text(), self.unit) if part))
        if self.kind is str and self.max_chars is not None:
            extras.append(f"one line, at most {self.max_chars} characters")
        if not self.required and self.kind is not bool:
            extras.append(f"default: {self.default_shown()}")
        return text + (f" ({'; '.join(extras)})" if extras else "")


    def default_shown(self) -> str:
        """The default as help texts say it: :attr:`default_text`, else the value (``%g`` for a number, JSON for an
        object, ``none`` for None)."""
        if self.default_text:
            return self.default_text
        if self.default is None:
            return "none"
        if self.kind is dict:
            return json.dumps(self.default)
        return f"{self.default:g}" if isinstance(self.default, float) else str(self.default)


#: Unicode categories a one-line text may not hold: control characters (line breaks, tabs, escapes), format
#: characters (zero-width and bidirectional controls, which make a text look like another), surrogates, and the line
#: and paragraph separators.
_NOT_IN_A_LINE = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


def text_problem(text: str, max_chars: int) -> str | None:
    """What makes ``text`` no short one-line text (:attr:`Option.max_chars`), or None: blank, longer than
    ``max_chars`` characters, or holding a character of :data:`_NOT_IN_A_LINE` (its position, from 1, and code point
    named: ``character 4 is U+000A, a line break``)."""
    if not text.strip():
        return "it is blank (leave the option out for none)"
    if len(text) > max_chars:
        return f"it has {len(text):,} characters"
    for position, character in enumerate(text, 1):
        category = unicodedata.category(character)
        if category in _NOT_IN_A_LINE:
            kind = ("a line break" if character in "\r\n" or category in ("Zl", "Zp") else
                    "an invisible format character" if category == "Cf" else
                    "a lone surrogate" if category == "Cs" else "a control character")
            return f"character {position} is U+{ord(character):04X}, {kind}"
    return None


def json_object(text: str, flag: str) -> dict[str, Any]:
    """The JSON object of ``text`` (the value of ``flag``: ``--scheduler-options``, ``--speedup-options``).

    Raises:
        OptionError: not valid JSON (the message gives the line and column of the error), or JSON that is not an
            object (``[1]``, ``3``, ``null``...).
    """
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise OptionError(f"{flag}: not valid JSON: {err.msg} at line {err.lineno} column {err.colno} "
                          f"(character {err.pos + 1}) of {text!r}") from None
    except RecursionError:
        raise OptionError(f"{flag}: JSON nested too deeply") from None
    if not isinstance(value, dict):
        raise OptionError(f"{flag}: expected a JSON object such as '{{\"name\": value}}', "
                          f"got {text.strip()!r} ({type(value).__name__})")
    return value


def option(default: Any = None, **declaration: Any) -> Any:
    """A dataclass field declaring a run option: ``walltime_factor: float | None = option(None, kind=float,
    above=0, optional=True, help=...)``; the keywords are :class:`Option`'s. A ``dict`` default is copied for
    each instance; ``dataclasses.MISSING`` makes a field without default (with ``required=True``)."""
    metadata = {OPTION_KEY: Option(**declaration)}
    if default is dataclasses.MISSING:  # a required field
        return dataclasses.field(metadata=metadata)
    if isinstance(default, dict):
        return dataclasses.field(default_factory=lambda: dict(default), metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


@cache
def declared_options(part: type) -> tuple[Option, ...]:
    """The options the dataclass ``part`` declares with :func:`option`, in field order, their names and defaults
    filled in from the fields."""
    found = []
    for item in dataclasses.fields(part):
        declaration = item.metadata.get(OPTION_KEY)
        if declaration is None:
            continue
        default = item.default if item.default is not dataclasses.MISSING else (
            item.default_factory() if item.default_factory is not dataclasses.MISSING else None)
        found.append(dataclasses.replace(declaration, name=declaration.name or item.name, field=item.name,
                                         default=default))
    return tuple(found)


def recorded_values(declarations: tuple[Option, ...], values: dict[str, Any], *,
                    leave_out: str = "defaults") -> dict[str, Any]:
    """The values, by option name, that a flat description records (:meth:`Option.is_recorded` with ``leave_out``,
    :attr:`Option.recorded_with`), in the order of ``declarations``; names absent from ``values`` are skipped."""
    by_name = {declaration.name: declaration for declaration in declarations}

    def recorded(declaration: Option) -> bool:
        if declaration.recorded_with:
            return recorded(by_name[declaration.recorded_with])
        return declaration.is_recorded(values[declaration.name], leave_out)

    return {d.name: values[d.name] for d in declarations if d.name in values and recorded(d)}


def check_fields(instance: Any, error: type[Exception] = OptionError) -> None:
    """Check every declared option of the dataclass ``instance`` (:meth:`Option.check`) and store the normalised
    value (an integer given to a float option becomes a float), frozen dataclasses included.

    Raises:
        error: the first value an option refuses, with :class:`OptionError`'s message.
    """
    for declaration in declared_options(type(instance)):
        try:
            value = declaration.check(getattr(instance, declaration.field))
        except OptionError as err:
            raise error(str(err)) from None
        object.__setattr__(instance, declaration.field, value)
