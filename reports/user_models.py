"""Which replays a report table or figure is about: the user models declare it, the report asks the registry.

Some tables and figures reproduce a paper's results on one kind of replay only: the lateness of Madon, Da Costa,
Pierson 2024 (Table 2, Figs. 4 and 5), their submissions (Figs. 2 and 8) and session graphs (Fig. 6) are about
replays whose users react to the simulated schedule; the scheduler comparison of Rauch 2022 (Tables I-III) is
about the recorded submission times. Each user model names such kinds in its registry entry
(:attr:`batreplay.replay.registry.UserModelEntry.report_kinds`; plain names, the replay layer does not import
the reports):

- a kind that some models declare shows the replays of those models only (a table lists their rows, a figure
  draws their curves, and says so in a note when the campaign has none);
- a kind that no model declares (``scheduling``, ``cumulative``...) shows every replay.

A new user model thus chooses the report's tables and figures it appears in without a change to the report code.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from batreplay.replay.registry import REGISTRY

if TYPE_CHECKING:
    from batreplay.campaign.spec import ReplayPoint


def declaring_models(kind: str) -> tuple[str, ...]:
    """The user models, in registry order, whose entry declares the table or figure ``kind``; empty when the kind
    is about every replay."""
    return tuple(name for name, entry in REGISTRY.items() if kind in entry.report_kinds)


def shows(kind: str, model: str) -> bool:
    """Whether the table or figure ``kind`` shows the replays of the user model ``model``: the kind is declared by
    that model, or by none."""
    models = declaring_models(kind)
    return not models or model in models


def replays_shown(kind: str, replays: Iterable[ReplayPoint]) -> list[ReplayPoint]:
    """The replays of a campaign (in its order) that the table or figure ``kind`` shows (:func:`shows`)."""
    return [replay for replay in replays if shows(kind, replay.model)]


def labels_shown(kind: str, replays: Iterable[ReplayPoint]) -> list[str]:
    """The labels (``a60``) of :func:`replays_shown`."""
    return [replay.label for replay in replays_shown(kind, replays)]


def none_shown(kind: str) -> str:
    """The end of a note saying that a campaign has no replay for ``kind``: ``"the campaign has no feedback,
    adjusted, distribution, fluid or schlagkamp replay"`` (the declaring models, in registry order)."""
    models = declaring_models(kind)
    named = models[0] if len(models) == 1 else f"{', '.join(models[:-1])} or {models[-1]}"
    return f"the campaign has no {named} replay"
