"""The packed arrays a trial's settings and state travel in between Python and :func:`run_trial`.

A compiled trial takes its settings as two flat arrays (``icfg`` int64, ``fcfg`` float64) and keeps
its state in flat arrays too (the counters ``ctr``, the per-lane integers ``lane_i``, the recorded
integers per submission ``rec_i``), so that one compiled signature serves every setting and a call
that returns mid-trial resumes from the arrays alone.

Each array's fields are named once, in the tuples below. The index constants are generated from
them: ``PREFIX_NAME`` is the position of ``"name"`` in its tuple (``C_TICK`` = the position of
``"tick"`` in :data:`COUNTERS`, ``I_WORKERS`` of ``"workers"`` in :data:`INT_SETTINGS`, …) and
``N_…`` is the tuple's length. :func:`pack` fills a settings array by field name.
"""

from __future__ import annotations

import numpy as np

# trial counters (int64 array ``ctr``), prefix C_
COUNTERS = (
    "tick",  # environment-step clock
    "submitted",  # submissions received
    "version",  # θ's version: number of updates applied
    "buf_count",  # submissions in the buffer B
    "agents",  # agents started (the next agent's index)
    "steps",  # environment steps played, all workers
    "nonfinite",  # clean gradients replaced by zeros (non-finite rule)
    "kept",  # θ versions recorded
    "fin_pos",  # position in this tick's arrivals
    "n_fin",  # arrivals in this tick
    "done",  # the trial is over
    "started",  # the first episodes have been started
    "tick_version",  # θ's version when this tick's arrivals began
    "prepared",  # the pending submission is sanitized (waiting for its mechanism)
    "pending_bad",  # the pending submission hit the non-finite rule
    "canaries",  # canary agents started
    "canaries_submitted",  # canary submissions received
)
# integer settings (``icfg``), prefix I_
INT_SETTINGS = (
    "workers",
    "submissions",
    "rounds",
    "buffer",
    "window",
    "stop_at_success",
    "zero_info",
    "mech",
    "reduced_dim",
    "cap",
    "bootstrap",
    "sample",
    "record",
    "protect_score",
    "protect_timing",
    "protect_order",
    "reward",
    "n_step",
    "mean_loss",
    "optimizer",
    "alpha_clock",
    "canaries",
    "canary_crafted",
    "canary_update",
    "canary_agent_base",
    "canary_spread",
    "canary_start",
)
# float settings (``fcfg``), prefix F_; ``mech_scale``: the mechanism's extra float (the secure
# Laplace's snapping grid, the Gaussian's σ; see pgc.a3c.twins.compiled_spec)
FLOAT_SETTINGS = (
    "lr",
    "explore_start",
    "explore_decay",
    "target",
    "epsilon",
    "clip",
    "mech_scale",
    "gamma",
    "lam",
    "beta",
    "score_scale",
    "rms_decay",
    "rms_eps",
    "planted_noise_factor",
)
# canary settings (pgc.a3c.config.TrainConfig.canaries): ``canaries`` M, ``canary_crafted`` 1 when canary
# agents play the crafted θ, ``canary_update`` 1 when their submissions enter the buffer,
# ``canary_agent_base`` the agent number of canary 0 (canary k is agent base + k), ``canary_spread``
# the number of agent starts the M canaries are spread over, ``canary_start`` the number of regular
# agents started before the first canary.
# ``planted_noise_factor``: a planted bug for testing audits (1 = off): the compiled mechanism draws
# its noise for ε·factor
# per-lane integers (``lane_i`` columns), prefix L_; ``waiting``: with a fixed schedule (``timing``)
# the episode is over and the lane waits for start + cap to submit; ``canary``: the lane's canary
# index, or −1 for a regular agent
LANE_INTS = ("elapsed", "agent", "round", "version", "start", "active", "terminated", "waiting", "canary")
# recorded integers per submission (``rec_i`` columns), prefix R_; ``canary`` as in LANE_INTS
RECORD_INTS = ("agent", "round", "worker", "version", "start", "arrival", "terminated", "nonfinite", "canary")

_ARRAYS = {
    "C": ("COUNTERS", COUNTERS),
    "I": ("ICFG", INT_SETTINGS),
    "F": ("FCFG", FLOAT_SETTINGS),
    "L": ("LANE_I", LANE_INTS),
    "R": ("REC_I", RECORD_INTS),
}


def index_constants() -> dict[str, int]:
    """``{"C_TICK": 0, …, "N_COUNTERS": 15, …}``: every array's field indices and its length."""
    out: dict[str, int] = {}
    for prefix, (array, names) in _ARRAYS.items():
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate field names in {array}")
        out.update({f"{prefix}_{name.upper()}": i for i, name in enumerate(names)})
        out[f"N_{array}"] = len(names)
    return out


globals().update(index_constants())

# codes of integer settings
OPTIMIZER_SGD = 0  # eq. 22: θ ← θ − η·mean(B)
OPTIMIZER_RMSPROP = 1  # s ← ρs + (1−ρ)·mean(B)², θ ← θ − η·mean(B)/(√s + eps) (Keras RMSprop)
ALPHA_PER_AGENT = 0  # §4: α = max{0, 0.5 − n/1800}, n the agent's index in start order
ALPHA_PER_STEP = 1  # the same line with n the global environment-step count (updated every step)

# what run_trial returns
STATUS_DONE = 0
STATUS_NEED_MECHANISM = 1  # ``pending`` holds the sanitized clean gradient; pass the noisy one back
STATUS_PAUSED = 2


def pack(names: tuple[str, ...], values: dict, dtype) -> np.ndarray:
    """A settings array holding ``values[name]`` at the position of each name; every field once."""
    missing, unknown = set(names) - set(values), set(values) - set(names)
    if missing or unknown:
        raise ValueError(f"settings to pack: missing {sorted(missing)}, unknown {sorted(unknown)}")
    return np.array([values[name] for name in names], dtype=dtype)


__all__ = [
    "COUNTERS",
    "INT_SETTINGS",
    "FLOAT_SETTINGS",
    "LANE_INTS",
    "RECORD_INTS",
    "index_constants",
    "pack",
    "OPTIMIZER_SGD",
    "OPTIMIZER_RMSPROP",
    "ALPHA_PER_AGENT",
    "ALPHA_PER_STEP",
    "STATUS_DONE",
    "STATUS_NEED_MECHANISM",
    "STATUS_PAUSED",
    *index_constants(),
]
