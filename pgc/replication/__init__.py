"""Experiment orchestration on top of the core: the paper's §4 grid with zero-information controls
(:mod:`pgc.replication.grid`), the search over the paper's unstated choices (:mod:`pgc.replication.search`) and
the runs of both on disk (:mod:`pgc.replication.runs`).

The core package :mod:`pgc` imports nothing from here.
"""
