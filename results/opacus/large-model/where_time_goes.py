"""Where an audit of the ~100,000-parameter client spends its time, per release and per statistic (README.md).

Run from the repository root: ``.venv/bin/python results/opacus/large-model/where_time_goes.py >
results/opacus/large-model/where_time_goes.txt``. It times, for one release of examples/opacus/large_client.py:make
(100,942 parameters):

1. Opacus's training round alone (the adapter's trainer, one intra-op thread), and the flattening of the parameters;
2. ``OpacusSystem.release`` in one process and on two worker processes (their updates sent back through a pipe);
3. what the auditor does to each release before any statistic sees it (``draw_releases``: the checks, the rounding to
   30 significant bits, the joint channel ``all`` laid out around its base channels), on 1,250 synthetic releases drawn
   in one call (one of the four calls of a 5,000-release training split) and in certification chunks;
4. each candidate statistic of the ``update`` channel fitted on 500 releases per side and scoring 500 more per side
   (the training split of a 2e3-per-side audit), with numpy's peak memory during it.
"""

from __future__ import annotations

import pickle
import sys
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "examples" / "opacus"))

PARAMETERS = 100_942


def per_release_ms(seconds: float, n: int) -> str:
    return f"{1000 * seconds / n:.2f} ms per release"


def training(system) -> None:
    from pgc.opacus.pool import one_thread

    trainer = system._trainer("with")
    with one_thread():
        trainer.release(0)
        start = time.perf_counter()
        for seed in range(1, 301):
            trainer.release(seed)
        seconds = time.perf_counter() - start
        print(f"Opacus training round (trainer, one thread), 300 releases: {per_release_ms(seconds, 300)}")
        start = time.perf_counter()
        for _ in range(300):
            trainer._flat(trainer.params)
        print(f"  of which flattening to float64: {per_release_ms(time.perf_counter() - start, 300)}")


def adapter(make) -> None:
    from pgc.opacus.system import OpacusSystem

    rng = np.random.default_rng(0)
    one = OpacusSystem(make(), workers=1)
    start = time.perf_counter()
    one.release("with", 500, rng)
    print(f"OpacusSystem.release, one process, 500 releases: {per_release_ms(time.perf_counter() - start, 500)}")
    two = OpacusSystem(make(), workers=2)
    start = time.perf_counter()
    two.release("with", 4, rng)
    print(f"OpacusSystem.release, two workers: start {time.perf_counter() - start:.1f} s")
    start = time.perf_counter()
    two.release("with", 2000, rng)
    print(f"OpacusSystem.release, two workers, 2,000 releases: {per_release_ms(time.perf_counter() - start, 2000)}")
    two.close()
    chunk = np.zeros((156, PARAMETERS))  # one of a pool's eight chunks of 1,250 releases
    start = time.perf_counter()
    pickle.loads(pickle.dumps(chunk, protocol=5))
    print(f"pickling a worker's chunk and reading it back: {per_release_ms(time.perf_counter() - start, 156)}")


def auditor() -> None:
    from audit.certification.tester import chunk_rows
    from audit.engine.releases import draw_releases

    n = 1250
    update = np.random.default_rng(0).normal(size=(n, PARAMETERS))

    class System:  # hands out the precomputed updates: the auditor's own work alone is timed
        name = "large"
        served = 0

        def release(self, secret, m, rng, *, broadcast=None):
            rows = update[self.served : self.served + m]
            self.served += m
            return {"update": rows, "examples": np.full(m, 200.0)}

    for label, rows in (("one call (a training split's)", n), ("certification chunks", chunk_rows(2 * PARAMETERS + 1))):
        system = System()
        tracemalloc.start()
        start = time.perf_counter()
        for first in range(0, n, rows):
            draw_releases(system, 0, min(rows, n - first), None, None, ["update", "examples", "all"], system_channels)
        seconds = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1] / 2**30
        tracemalloc.stop()
        print(
            f"auditor, {n:,} releases in {label} of {rows:,}: checked, rounded to 30 significant bits and laid out "
            f"with the joint channel 'all' {per_release_ms(seconds, n)}; numpy peak {peak:.2f} GiB for "
            f"{update.nbytes / 2**30:.2f} GiB of releases"
        )


system_channels = ("update", "examples")


def statistics(make) -> None:
    from audit.statistics import LaplaceLogLikelihood, default_statistics
    from pgc.opacus.system import OpacusSystem

    system = OpacusSystem(make(), workers=2)
    rng = np.random.default_rng(0)
    pos, neg = system.release("with", 1000, rng)["update"], system.release("without", 1000, rng)["update"]
    system.close()
    fit_p, sel_p, fit_n, sel_n = pos[:500], pos[500:], neg[:500], neg[500:]
    candidates = default_statistics() + [LaplaceLogLikelihood(scaled=True)] + list(system.audit_statistics("update"))
    total = 0.0
    tracemalloc.start()
    for stat in candidates:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        start = time.perf_counter()
        scorer = stat.fit(fit_p, fit_n)
        if scorer is not None:
            scorer(sel_p), scorer(sel_n)
        seconds = time.perf_counter() - start
        total += seconds
        peak = (tracemalloc.get_traced_memory()[1] - base) / 2**30
        note = "" if scorer is not None else "  (does not apply)"
        print(f"  {stat.name:28s} {seconds:6.2f} s  numpy peak +{peak:.2f} GiB{note}")
    print(f"  all candidates of the update channel: {total:.1f} s")


def main() -> None:
    from large_client import make

    from pgc.opacus.system import OpacusSystem

    warnings.filterwarnings("ignore")
    training(OpacusSystem(make(), workers=1))
    adapter(make)
    auditor()
    print("statistics of the update channel, fitted on 500 and scoring 500 releases per side:")
    statistics(make)


if __name__ == "__main__":
    main()
