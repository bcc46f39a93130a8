"""pgc — pgc-audit's systems, records and tools, beside the auditor (:mod:`audit`), the attackers
(:mod:`attacks`) and the reports (:mod:`reports`).

Subpackages, by floor (docs/ARCHITECTURE.md; ``tests/test_layering.py`` enforces it):

* contracts and pure helpers: :mod:`pgc.contracts`, :mod:`pgc.mechanisms`, :mod:`pgc.systems`, :mod:`pgc.tasks`,
  :mod:`pgc.optim`;
* result records: :mod:`pgc.schemas`;
* systems: :mod:`pgc.a3c` (PGC-A3C), :mod:`pgc.fedlinucb`, :mod:`pgc.gympg`, :mod:`pgc.dprl`,
  :mod:`pgc.toysystems`, :mod:`pgc.flower`, :mod:`pgc.ldp`, :mod:`pgc.nvflare`;
* where tasks run: :mod:`pgc.engines`;
* studies on top of the auditor: :mod:`pgc.audits`, :mod:`pgc.tuning`, :mod:`pgc.replication`;
* over them: :mod:`pgc.benchmarks` and :mod:`pgc.studies` (the studies the commands run);
* the command line: :mod:`pgc.cli`.

Importing ``pgc`` imports none of them.
"""

__version__ = "0.1.0"
