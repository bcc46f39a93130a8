"""What kind of channel an audit row audited: its family (:class:`ChannelFamily`), the linked submissions it
composes (k) and the channel it composes (its base channel), as one value (:class:`ChannelKind`).

The producer of a row knows these and records them on the row (:class:`pgc.schemas.audit_rows.Audited`'s
``channel_family``, ``composition`` and ``base_channel``); :func:`channel_kind` reads them back. Rows of files
written before they were recorded have only their channel's label: :func:`kind_from_label` reads the kind off it
(the one place the label rules live), and a row's JSON carries the three keys only where they differ from what its
label gives, so such files read and write back unchanged.

Pure Python: imports nothing from the project.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from typing import Any, Protocol


class ChannelFamily(str, enum.Enum):
    """The family a channel belongs to in a report's summary; its value is the summary's word."""

    OUTPUT = "output"  # a mechanism's own output (its canary audit)
    ALL = "all"  # a joint release: every channel together
    GRADIENT = "gradient"
    SCORE = "score"
    TIMING = "timing"  # when, in which order or how long: arrival, arrival order, lengths
    OTHER = "other"  # none of them: the summary names such a channel by its base channel

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class ChannelKind:
    """A row's channel family, the linked submissions it composes (``k``; 1: one submission) and its base channel
    (the channel without its composition: "gradient" for "gradient×3", "gradient split" for "gradient×3 split")."""

    family: ChannelFamily
    k: int
    base: str

    @property
    def family_name(self) -> str:
        """The summary's word for the family: its value, or for a channel of no family its base channel."""
        return self.base if self.family is ChannelFamily.OTHER else self.family.value

    def fields(self) -> dict[str, Any]:
        """The row's flat keys that record this kind (for ``AuditRow.make`` / ``AuditRow.updated``)."""
        return {"channel_family": self.family, "composition": self.k, "base_channel": self.base}

    @classmethod
    def single(cls, family: ChannelFamily, channel: str) -> ChannelKind:
        """One submission of ``channel`` (its own base channel)."""
        return cls(family, 1, channel)


# the label rules: what a row whose producer recorded no kind is read as
K_IN_LABEL = re.compile(r"[×x]\s*(\d+)")
_OUTPUT = re.compile(r"canary|mechanism|black-box|white-box")
_JOINT = re.compile(r"\ball\b|joint|combined|together|everything")
_TIMING = re.compile(r"timing|time|arrival|order|length")


def kind_from_label(channel: str) -> ChannelKind:
    """The kind a channel's label names: the family by its words (canary / mechanism / black-box / white-box:
    output; all / joint / combined / together / everything: all; gradient; score; timing / time / arrival / order /
    length: timing; else other), k by "×k" (1 without), the base channel the label without its k."""
    low = channel.lower()
    m = K_IN_LABEL.search(channel)
    base = " ".join(K_IN_LABEL.sub(" ", channel.split(" (k=")[0]).split())
    return ChannelKind(_family_of(low), int(m.group(1)) if m else 1, base)


def _family_of(low: str) -> ChannelFamily:
    if _OUTPUT.search(low):
        return ChannelFamily.OUTPUT
    if _JOINT.search(low):
        return ChannelFamily.ALL
    if "gradient" in low:
        return ChannelFamily.GRADIENT
    if "score" in low:
        return ChannelFamily.SCORE
    if _TIMING.search(low):
        return ChannelFamily.TIMING
    return ChannelFamily.OTHER


class RecordedKind(Protocol):
    """What :func:`channel_kind` reads of a row's audited part (:class:`pgc.schemas.audit_rows.Audited`)."""

    @property
    def channel_family(self) -> ChannelFamily | None: ...
    @property
    def composition(self) -> int | None: ...
    @property
    def base_channel(self) -> str | None: ...


class LabelledRow(Protocol):
    """What :func:`channel_kind` reads of a row (:class:`pgc.schemas.audit_rows.AuditRow`): its channel's label
    and the kind its producer recorded."""

    @property
    def channel(self) -> str: ...
    @property
    def audited(self) -> RecordedKind | None: ...


def channel_kind(row: LabelledRow) -> ChannelKind:
    """The kind of ``row``'s channel: what its producer recorded (a row read from a file always has it); where a
    row built in memory records none or part of it, what its label names (:func:`kind_from_label`) fills in."""
    audited = row.audited
    if audited is None:
        return kind_from_label(row.channel)
    family, k, base = audited.channel_family, audited.composition, audited.base_channel
    if family is not None and k is not None and base is not None:
        return ChannelKind(family, k, base)  # all three recorded: the label is not read
    label = kind_from_label(row.channel)
    return ChannelKind(family or label.family, label.k if k is None else k, label.base if base is None else base)


LABEL_KEYS = ("channel_family", "composition", "base_channel")


def with_label_kind(data: dict[str, Any]) -> dict[str, Any]:
    """A row's JSON object with the kind keys it lacks filled from its label (rows of older files; rows whose kind
    equals their label's are written without them)."""
    if all(k in data for k in LABEL_KEYS) or not isinstance(data.get("channel"), str):
        return data
    label = kind_from_label(data["channel"])
    filled = {"channel_family": label.family.value, "composition": label.k, "base_channel": label.base}
    return {**{k: v for k, v in filled.items() if k not in data}, **data}


def without_label_kind(out: dict[str, Any]) -> dict[str, Any]:
    """A row's JSON object without the kind keys that equal what its label gives (read back by
    :func:`with_label_kind`)."""
    channel = out.get("channel")
    if not isinstance(channel, str) or not any(k in out for k in LABEL_KEYS):
        return out
    label = kind_from_label(channel)
    same = {"channel_family": label.family.value, "composition": label.k, "base_channel": label.base}
    return {k: v for k, v in out.items() if k not in same or v != same[k]}
