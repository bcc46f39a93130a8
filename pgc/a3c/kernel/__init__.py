"""Compiled core: CartPole physics, the actor-critic and its A3C gradient, the built-in mechanisms,
and whole trials of Algorithm 1 (numba).

A lane is one agent playing one episode with its own parameter copy θ' (d = 112 floats, or 131 with
biases, in the kernel layout :data:`KERNEL_ORDER`) and its own physics row (:mod:`pgc.a3c.env`).

================================  =====================================================================
module                            what it holds
================================  =====================================================================
:mod:`pgc.a3c.kernel.physics`         the CartPole step of a lane and the store of its (s_t, a_t)
:mod:`pgc.a3c.kernel.network`         forward pass, softmax, rewards, the backward sweep of eqs. 12–18
:mod:`pgc.a3c.kernel.mechanism_twins` :func:`privatize_row`: the built-in mechanisms on one row, same draws
                                  as :mod:`pgc.mechanisms`
:mod:`pgc.a3c.kernel.layout`          the packed settings and state arrays, their fields named once
:mod:`pgc.a3c.kernel.trial`           :func:`run_trial`: one whole trial (W workers, mechanism, buffer,
                                  eq. 22, transcript)
:mod:`pgc.a3c.kernel.lanes`           :func:`advance`: many lanes at fixed models until an episode ends
                                  (:class:`pgc.a3c.rollout.LaneEngine`)
================================  =====================================================================

:mod:`pgc.a3c.reference_trial` is the plain-Python reading of one trial that :func:`run_trial` is
tested against.

The compiled entry points release the GIL (``nogil=True``): a trial runs for seconds in one call, and
the threads beside it (a tuning worker's heartbeat, which tells the study that its trial is alive)
must keep running meanwhile.

numba's cache (``cache=True``) keys the functions of this package on all its sources together
(:mod:`pgc.a3c.kernel._cache`): a function inlines helpers from the other modules, so an edit to any of
them recompiles every function.
"""

from . import _cache

_cache.install()  # before the modules below define their cached functions

from ..mechanism_codes import (  # noqa: E402,F401
    MECH_EXTERNAL,
    MECH_GAUSSIAN,
    MECH_LAPLACE,
    MECH_LAPLACE_SECURE,
    MECH_NONE,
    MECH_PRS,
    SNAP_BOUND_SCALES,
)
from .lanes import advance, warm_up  # noqa: E402,F401
from .layout import *  # noqa: E402,F401,F403  (the C_/I_/F_/L_/R_ index constants, N_ lengths, codes, pack)
from .mechanism_twins import laplace_scalar, privatize_row  # noqa: E402,F401
from .network import KERNEL_ORDER, KERNEL_ORDER_BIASED, REWARD_TERMINAL, REWARD_UNIT, episode_gradient, to_kernel_layout  # noqa: E402,F401
from .physics import TRAJ_FIELDS  # noqa: E402,F401
from .trial import run_trial  # noqa: E402,F401
