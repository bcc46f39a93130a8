"""The four privacy-preserving RL systems of Shen, "Differential Privacy in Reinforcement Learning" (2022),
built as the thesis writes them, each a System with the thesis' own claim (see docs/README-thesis.md):

* :mod:`pgc.dprl.advising` — ch. 3, the differentially private advising framework (Algorithm 5);
* :mod:`pgc.dprl.planning` — ch. 4, private multi-agent planning (Algorithms 7-8, eq. 4.2, Theorem 4.3);
* :mod:`pgc.dprl.dpdrl` — ch. 5, DP-DRL observation obfuscation (Algorithms 9-11, Theorem 5.1);
* :mod:`pgc.dprl.oneparam` — ch. 6, the one-parameter defence of a classifier's confidences (Algorithm 12,
  eqs. 6.1-6.2, Theorem 6.1).

Each module has a factory ``system(**settings)`` whose defaults are the thesis' main experimental setting,
and each System offers ``secret_space``: neighbouring pairs drawn from a point of the unit box, so the
auditor can search for the worst pair itself (``audit_system(..., search_pair=True)``).
This package imports nothing from audit/, attacks/ or reports/.
"""
