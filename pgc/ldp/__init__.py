"""LDP frequency oracles as Systems (a system package: the auditor imports nothing of it).

* Reference oracles written from their papers, vectorized, with their exact ε (:mod:`pgc.ldp.registry`:
  ``REFERENCE``): GRR, SUE, OUE, BLH, OLH, FLH, SS, SHE, THE, ADP, RAPPOR, HR, HM, CMS, HCMS, SR, PCS.
* multi-freq-ldpy's and pure-ldp's clients as oracles whose reports are exactly what the library returns
  (:mod:`pgc.ldp.mfl_clients`, :mod:`pgc.ldp.pure_ldp_clients`, :mod:`pgc.ldp.pure_ldp_sketches`),
  under the libraries' global generators seeded from the audit's stream (:mod:`pgc.ldp.seeding`).
* :func:`pgc.ldp.system.ldp_system` — ``"LIBRARY:PROTOCOL"`` at (k, ε) as a System, with the decoding
  statistics it offers the auditor (:mod:`pgc.ldp.statistics`) and LDP-Auditor's guess
  (:mod:`pgc.ldp.guesses`).

docs/README-ldp.md says what is audited, how, and what the libraries release.
"""
