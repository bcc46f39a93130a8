"""Experiment orchestration on top of the core: the paper's §4 grid with zero-information controls
(:mod:`pgc.replication.grid`) and the search over the paper's unstated choices (:mod:`pgc.replication.search`).

The core package :mod:`pgc` imports nothing from here.
"""
