"""LDP frequency oracles as Systems (a system package: the auditor imports nothing of it).

* Reference oracles written from their papers, vectorized, with their exact ε (:mod:`ldp_oracles.registry`:
  ``REFERENCE``): GRR, SUE, OUE, BLH, OLH, FLH, SS, SHE, THE, ADP, RAPPOR, HR, HM, CMS, HCMS, SR, PCS.
* multi-freq-ldpy's and pure-ldp's clients as oracles whose reports are exactly what the library returns
  (:mod:`ldp_oracles.mfl_clients`, :mod:`ldp_oracles.pure_ldp_clients`, :mod:`ldp_oracles.pure_ldp_sketches`),
  under the libraries' global generators seeded from the audit's stream (:mod:`ldp_oracles.seeding`).
* :func:`ldp_oracles.system.ldp_system` — ``"LIBRARY:PROTOCOL"`` at (k, ε) as a System, with the decoding
  statistics it offers the auditor (:mod:`ldp_oracles.statistics`) and LDP-Auditor's guess
  (:mod:`ldp_oracles.guesses`).

docs/README-ldp.md says what is audited, how, and what the libraries release.
"""
