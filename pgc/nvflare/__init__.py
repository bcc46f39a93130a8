"""NVIDIA FLARE's client filters as Systems (a system package: it imports nvflare; the auditor imports nothing of it).

* :class:`pgc.nvflare.system.FilterSystem` — a ``Filter`` run through its real ``process`` path on a
  ``Shareable`` carrying a DXO model update, what the server receives split into ``update``, ``scalars`` and
  ``meta``; :func:`pgc.nvflare.system.filter_system` on the built-in updates.
* :mod:`pgc.nvflare.updates` — a small network's real training updates, and updates at a filter's bound.
* :mod:`pgc.nvflare.claims` — what a filter promises, read from its parameters and its recorded accounting.

docs/README-nvflare.md has the claims, the verdicts and their derivations.
"""
