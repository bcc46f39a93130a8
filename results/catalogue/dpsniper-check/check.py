"""DP-Sniper's own code beside audit.dp_sniper on the same outputs, for every catalogue algorithm at ε = 0.1.

Both sides read one stream of outputs per (pair, side), drawn from the catalogue System in fixed chunks from a seed
of its own and written in DP-Sniper's format; every pair's classifier starts from the same initial weights (torch's
nn.Linear under a fixed torch seed). DP-Sniper's side runs the authors' DPSniper, MlAttack, PrEstimator and
EpsEstimator classes as their MyExperiment and DDSearch chain them, in one process (the authors' DDSearch only adds
a process pool around the per-pair loop). Its torch.utils.tensorboard import is answered by a no-op writer (the
writer only logs training losses). Usage: python check.py DPSNIPER_CHECKOUT OUT_JSON [ALGORITHM ...]
"""

import json
import sys
import time
import types

import numpy as np


class _NoWriter:
    def __init__(self, *args, **kwargs):
        pass

    def add_scalar(self, *args, **kwargs):
        pass

    def close(self):
        pass


sys.modules["torch.utils.tensorboard"] = types.SimpleNamespace(SummaryWriter=_NoWriter)
sys.path.insert(0, sys.argv[1])

import torch  # noqa: E402
from dpsniper.attack.dpsniper import DPSniper  # noqa: E402
from dpsniper.classifiers.classifier_factory import LogisticRegressionFactory  # noqa: E402
from dpsniper.classifiers.feature_transformer import FlagsFeatureTransformer  # noqa: E402
from dpsniper.classifiers.torch_optimizer_factory import SGDOptimizerFactory  # noqa: E402
from dpsniper.input.input_domain import InputBaseType, InputDomain  # noqa: E402
from dpsniper.input.pattern_generator import PatternGenerator  # noqa: E402
from dpsniper.mechanisms.abstract import Mechanism  # noqa: E402
from dpsniper.probability.estimators import EpsEstimator, PrEstimator  # noqa: E402
from dpsniper.search.ddconfig import DDConfig  # noqa: E402
from dpsniper.search.ddwitness import DDWitness  # noqa: E402
from dpsniper.utils.paths import set_output_directory  # noqa: E402
from dpsniper.utils.torch import torch_initialize  # noqa: E402

from audit.peers import dp_sniper as ours  # noqa: E402
from pgc.catalogue import CATALOGUE, catalogue_system  # noqa: E402
from pgc.schemas.bench_study_results import DdSearchWitness, DpsniperCheck, DpsniperCheckRow, DpsniperCheckSettings  # noqa: E402

N, N_FINAL, CONFIDENCE, SEED, CHUNK = 100_000, 1_000_000, 0.9, 20260512, 50_000


class Stream:
    """One (pair, side)'s outputs in DP-Sniper's format, drawn in fixed chunks: the same numbers for every reader."""

    def __init__(self, system, secret, seed):
        self.system, self.secret, self.rng = system, secret, np.random.default_rng(seed)
        self.chunks, self.offset = [], 0

    def take(self, n):
        while sum(len(c) for c in self.chunks) - self.offset < n:
            self.chunks.append(self.system.to_dpsniper(self.system.release(self.secret, CHUNK, self.rng)["output"]))
        data = np.concatenate(self.chunks)[self.offset : self.offset + n]
        self.offset += n
        while self.chunks and self.offset >= len(self.chunks[0]):
            self.offset -= len(self.chunks.pop(0))
        return data


def streams(system, pairs, index):
    return {
        name: (Stream(system, a1, [SEED, index, i, 0]), Stream(system, a2, [SEED, index, i, 1]))
        for i, (name, (a1, a2)) in enumerate(pairs.items())
    }


class Replay(Mechanism):
    def __init__(self, a1, a2, pair_streams):
        self.a1, self.a2, self.pair_streams = np.asarray(a1), np.asarray(a2), pair_streams

    def m(self, a, n_samples=1):
        side = 0 if np.array_equal(np.asarray(a), self.a1) else 1
        assert side == 0 or np.array_equal(np.asarray(a), self.a2)
        return self.pair_streams[side].take(n_samples)


def their_pairs(algorithm):
    d = algorithm.domain
    domain = InputDomain(
        d.dimensions, InputBaseType.FLOAT if d.base_type == "float" else InputBaseType.INT, [d.low, d.high]
    )
    return list(PatternGenerator(domain, d.component_wise).get_input_pairs())


def initial_weights(pairs, dim, index):
    inits = []
    for i in range(len(pairs)):
        torch.manual_seed(SEED + 1000 * index + i)
        layer = torch.nn.Linear(dim, 1)
        inits.append((layer.weight.detach().numpy().ravel().copy(), float(layer.bias.detach())))
    return inits


def run_theirs(algorithm, system, pairs, inits, index, config):
    best, best_mech, per_pair = None, None, {}
    flags = list(algorithm.flags)
    dim = algorithm.width * (1 + len(flags))
    pair_streams = streams(system, pairs, index)
    for i, (name, (a1, a2)) in enumerate(pairs.items()):
        a1, a2 = np.asarray(a1), np.asarray(a2)
        mech = Replay(a1, a2, pair_streams[name])
        factory = LogisticRegressionFactory(
            feature_transform=FlagsFeatureTransformer(flags) if flags else None,
            in_dimensions=dim,
            optimizer_factory=SGDOptimizerFactory(learning_rate=0.3, momentum=0.3, step_size=500),
            regularization_weight=0.001,
            epochs=10,
            label=algorithm.name,
        )
        torch.manual_seed(SEED + 1000 * index + i)  # the classifier is created under the seed of initial_weights
        attack = DPSniper(mech, factory, config).best_attack(a1, a2)
        witness = DDWitness(a1, a2, attack)
        witness.compute_eps_using_estimator(EpsEstimator(PrEstimator(mech, config.n_check, config)))
        per_pair[name] = float(witness.eps)
        if best is None or witness > best:
            best, best_mech, best_name = witness, mech, name
    best.compute_eps_using_estimator(EpsEstimator(PrEstimator(best_mech, config.n_final, config)))
    return DdSearchWitness(
        pair=best_name,
        epsilon=float(best.eps),
        epsilon_lower_bound=float(best.lower_bound),
        threshold=float(best.attack.thresh),
        tie_probability=float(best.attack.q),
        per_pair=per_pair,
    )


def run_ours(algorithm, system, pairs, inits, index):
    pair_streams = streams(system, pairs, index)
    config = ours.DPSniperConfig(n_train=N, n=N, n_check=N, n_final=N_FINAL, confidence=CONFIDENCE)
    queue = iter(inits)
    result = ours.dd_search(
        list(pairs),
        lambda pair, side, n: pair_streams[pair][side].take(n),
        config,
        lambda d: next(queue),
        algorithm.flags,
    )
    return DdSearchWitness(
        pair=result.pair,
        epsilon=result.epsilon,
        epsilon_lower_bound=result.epsilon_lower_bound,
        p1=result.p1,
        p2=result.p2,
        threshold=result.threshold,
        tie_probability=result.tie_probability,
        per_pair=result.per_pair,
    )


def main():
    out, wanted = sys.argv[2], sys.argv[3:]
    torch_initialize(torch_threads=1)  # float64 tensors, as the authors' experiments run
    set_output_directory("/tmp/dpscheck/dpsniper-out")
    config = DDConfig(n_train=N, n=N, n_check=N, n_final=N_FINAL, n_processes=1, confidence=CONFIDENCE)
    rows = []
    for index, algorithm in enumerate(CATALOGUE):
        if wanted and algorithm.name not in wanted:
            continue
        system = catalogue_system(algorithm.name)
        pairs = system.canaries()
        theirs_raw = their_pairs(algorithm)
        assert [tuple(np.asarray(p[0]).tolist()) + tuple(np.asarray(p[1]).tolist()) for p in theirs_raw] == [
            a + b for a, b in pairs.values()
        ], f"{algorithm.name}: input pairs differ"
        inits = initial_weights(pairs, algorithm.width * (1 + len(algorithm.flags)), index)
        start = time.perf_counter()
        theirs = run_theirs(algorithm, system, pairs, inits, index, config)
        mid = time.perf_counter()
        mine = run_ours(algorithm, system, pairs, inits, index)
        lb_t, lb_o = theirs.epsilon_lower_bound, mine.epsilon_lower_bound
        row = DpsniperCheckRow(
            algorithm=algorithm.name,
            broken=algorithm.broken,
            claimed_epsilon=algorithm.claimed_epsilon,
            dpsniper=theirs,
            ours=mine,
            dpsniper_s=mid - start,
            ours_s=time.perf_counter() - mid,
            within_10_percent=None if lb_t <= 0 else bool(abs(lb_o - lb_t) <= 0.1 * lb_t),
        )
        rows.append(row)
        print(
            f"{algorithm.name}: DP-Sniper {lb_t:.4f} [{theirs.pair}], ours {lb_o:.4f} [{mine.pair}] "
            f"({row.dpsniper_s:.0f} s, {row.ours_s:.0f} s)",
            flush=True,
        )
    settings = DpsniperCheckSettings(
        n_train=N,
        n=N,
        n_check=N,
        n_final=N_FINAL,
        confidence=CONFIDENCE,
        seed=SEED,
        chunk=CHUNK,
        torch=torch.__version__,
        numpy=np.__version__,
    )
    with open(out, "w") as f:
        json.dump(DpsniperCheck(settings=settings, rows=rows).to_dict(), f, indent=1)


if __name__ == "__main__":
    main()
