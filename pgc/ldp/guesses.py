"""LDP-Auditor's distinguishing attack (Arcolezi & Gambs, PETS 2024, §4): one guess of the user's value per
report, and the event "guess = v".

The paper's attacks guess uniformly among the values a report supports best: the reported value (GRR), the
set bits (UE; any value when none is set), the subset's members (SS), the values whose hash matches (LH; any
value when none does), the entries above θ (THE), the most likely one-hot under the Laplace noise (SHE). With
an oracle's ``support`` as its aggregator's decoding, every one of them is the same rule: a uniform draw among
the argmax of ``support(report, ·)`` over the whole domain; for the protocols the paper does not attack
(RAPPOR, HR, HM, CMS, HCMS, SR, PCS, FLH, ADP) the same rule is the natural extension.

:func:`guess_hits` counts, for a batch of reports, how many guesses equal ``value``; the draw among ties comes
from the caller's generator (never the one that drew the reports). :class:`GuessRecorder` wraps an oracle's
System and counts the hits of every release it passes through, call by call, so the LDP-Auditor bound can be
computed on exactly the releases another audit certified on.
"""

from __future__ import annotations

import numpy as np

from pgc.errors import UserError

GUESS_CHUNK = 8192  # reports decoded at once: (chunk, k) supports


def guess_hits(oracle, reports: np.ndarray, value: int, rng: np.random.Generator) -> int:
    """How many of the reports' guesses (uniform among the argmax of the support over 0..k−1) equal ``value``."""
    hits = 0
    candidates = np.arange(oracle.k)
    for start in range(0, len(reports), GUESS_CHUNK):
        support = oracle.support(reports[start : start + GUESS_CHUNK], candidates)
        best = support.max(axis=1, keepdims=True)
        top = support == best
        ties = top.sum(axis=1)
        chosen = top[:, value] & (rng.random(len(support)) * ties < 1.0)  # P = 1/ties when value is among the best
        hits += int(np.count_nonzero(chosen))
    return hits


class GuessRecorder:
    """An oracle System whose releases also feed LDP-Auditor's guess counter: ``calls`` holds
    (secret, reports, hits of "guess = target") per call of ``release``, in order. Everything else is the
    wrapped System's (its name, claim, statistics ...), so auditing the recorder audits the System."""

    def __init__(self, system, target: int, rng: np.random.Generator):
        self.system, self.target, self.rng = system, int(target), rng
        self.calls: list[tuple[object, int, int]] = []

    def __getattr__(self, attribute):
        return getattr(self.system, attribute)

    def release(self, secret, n: int, rng: np.random.Generator, *, broadcast=None):
        out = self.system.release(secret, n, rng, broadcast=broadcast)
        reports = np.asarray(out[self.system.channels[0]])
        self.calls.append((secret, int(n), guess_hits(self.system.oracle, reports, self.target, self.rng)))
        return out

    def counts_after(self, secret, skip: int) -> tuple[int, int]:
        """(hits, reports) of ``secret``'s calls after its first ``skip`` reports (which must end on a call)."""
        seen = hits = total = 0
        for s, n, h in self.calls:
            if s != secret:
                continue
            if seen >= skip:
                hits, total = hits + h, total + n
            seen += n
            if seen > skip and seen - n < skip:
                raise UserError("the skipped reports do not end on a call boundary")
        return hits, total
