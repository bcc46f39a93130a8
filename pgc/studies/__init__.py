"""Studies that combine the floors below: the federated bandits' regret study and first-user attack
(:mod:`pgc.studies.bandit`), the attacks on the thesis' systems beside the thesis' tables
(:mod:`pgc.studies.thesis`) and the main job's steps (:mod:`pgc.studies.pipeline`). Each takes plain
settings and returns the result record a command writes; the command parses, calls and prints."""
