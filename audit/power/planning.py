"""How long an audit takes on the project's 2-core machine, before it starts (pure arithmetic).

Rates measured on this machine (2 cores shared with other jobs; ``scripts/calibrate_planning.py`` runs the
audits it checks, estimate beside wall time, ``results/audit/planning/``):

* a mechanism's canary audit (five canary pairs, d = 112, training split included): 1 s, and 1.3·10⁻⁵ s
  per output (10⁶ per side in 13-19 s); for PRS also 6·10⁻⁷ s per output times d̂² (20,000 outputs at
  d̂ = 20 in 5 s) and the one-off exact likelihood-ratio table of its lexicographic statistic (a d̂-fold
  lattice convolution: 10-14 s at d̂ = 20, :class:`audit.statistics.PRSLexicographicLikelihoodRatio`);
* one environment audit pair: per release 2.3·10⁻⁵ s for each submission its channels test (one, and k
  more for each composition k), and 2.2·10⁻⁷ s per simulated agent-step — CartPole episodes last as many
  steps as they score, so a model that balances (μ ≈ 200) costs 5 times one that falls at once (μ ≈ 20);
  the episodes per release are the submissions tested and W·¼ more for the arrival rank;
* an adversarial pair: the crafted-model search (about 40 s; 8 s with ``--search-budget quick``) and
  2·10⁻⁴ s per certification sample.
"""

from __future__ import annotations

from collections.abc import Sequence

MECHANISM_FIXED_S = 1.0
MECHANISM_PER_OUTPUT_S = 1.3e-5
PRS_PER_OUTPUT_AND_ROW_SQUARED_S = 6.0e-7
PRS_TABLE_S_PER_OP = 1.2e-8
ENVIRONMENT_PER_SUBMISSION_S = 2.3e-5
ENVIRONMENT_PER_STEP_S = 2.2e-7
ORDER_FRACTION = 0.25  # the arrival rank's share of the samples (pgc.audits.environment)
SLOW_EPISODE = 200.0  # steps of an episode when the audited model is not known: one that balances
ADVERSARIAL_PER_SAMPLE_S = 2.0e-4
SEARCH_SECONDS = {"default": 40.0, "quick": 8.0}  # one crafted-model search per pair
REFERENCE_DIM = 112  # the rates' gradient dimension


def prs_table_seconds(reduced_dim: int) -> float:
    """The PRS likelihood-ratio table: d̂ − 1 convolutions of a lattice of up to (2d̂+1)^m cells with the
    81-cell law of one row (m columns, as the statistic lowers them for a large d̂)."""
    from audit.statistics import MAX_LATTICE_CELLS

    columns = 4
    while columns > 1 and (2 * reduced_dim + 1) ** columns > MAX_LATTICE_CELLS:
        columns -= 1
    return PRS_TABLE_S_PER_OP * 3**columns * (2 * reduced_dim + 1) ** columns * reduced_dim / (columns + 1)


def mechanism_audit_seconds(
    samples: int, dim: int = REFERENCE_DIM, reduced_dim: int = 1, rounds: int = 1, prs: bool = False
) -> float:
    """A canary audit of a mechanism: linear in samples, d and the rounds; PRS adds its matrix rows and table."""
    per_output = MECHANISM_PER_OUTPUT_S + (PRS_PER_OUTPUT_AND_ROW_SQUARED_S * reduced_dim**2 if prs else 0.0)
    return (
        MECHANISM_FIXED_S
        + samples * max(1, rounds) * max(1, dim) / REFERENCE_DIM * per_output
        + (prs_table_seconds(reduced_dim) if prs else 0.0)
    )


def environment_audit_seconds(
    samples: int, pairs: int, episode_length: float | None = None, compositions: Sequence[int] = (3,), workers: int = 9
) -> float:
    """One environment audit per pair, every channel, at a model whose episodes last ``episode_length``
    steps (None: :data:`SLOW_EPISODE`, a model that balances)."""
    steps = SLOW_EPISODE if episode_length is None else max(1.0, float(episode_length))
    submissions = 1 + sum(compositions)
    episodes = submissions + workers * ORDER_FRACTION
    per_release = ENVIRONMENT_PER_SUBMISSION_S * submissions + ENVIRONMENT_PER_STEP_S * steps * episodes
    return max(1, pairs) * samples * per_release


def adversarial_audit_seconds(samples: int, pairs: int, search_budget: str = "default") -> float:
    """One crafted-model search and certification per pair."""
    return max(1, pairs) * (samples * ADVERSARIAL_PER_SAMPLE_S + SEARCH_SECONDS.get(search_budget, 40.0))


def duration_text(seconds: float) -> str:
    """``1 h 05 min``, ``2 min 03 s``, ``42 s``, ``under 1 s``."""
    if seconds < 0.5:
        return "under 1 s"
    seconds = int(round(seconds))
    if seconds >= 3600:
        return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"
    return f"{seconds // 60} min {seconds % 60:02d} s" if seconds >= 60 else f"{seconds} s"
