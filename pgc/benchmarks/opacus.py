"""``pgc bench opacus``: the releases per second of :class:`pgc.opacus.system.OpacusSystem` against a plain
per-release loop over the same Opacus objects.

The client is the issue's yardstick: a 1,020-parameter linear model (101 features, 10 classes), 200 records, batch 10,
one local step, σ = 1, C = 1, Opacus's Poisson sampling. Three paces, one release = one training round:

1. **plain loop** — the adapter's own trainer (one ``PrivacyEngine.make_private`` model, optimizer and data loader)
   stepped once per release in a Python loop at torch's default intra-op threads, as a hand-written wrapper runs it;
2. **plain loop, one thread** — the same loop with one intra-op thread;
3. **adapter** — ``OpacusSystem.release`` with ``--workers`` processes (after a first call that starts them; the
   start is printed apart).

The adapter's updates must equal the one-thread loop's on the same seeds (a release depends on its seed only).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from pgc.options import add_out, positive_int

from . import goals_exit

help = "Opacus client releases/s: the adapter (worker processes) vs a plain per-release loop"
GOAL = 1.5


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--releases", type=positive_int, default=2_000, help="releases timed per pace (default 2,000)")
    p.add_argument("--workers", type=positive_int, default=2, help="the adapter's processes (default 2)")
    add_out(p, help="JSON result file")


def bench_client():
    """The 1,020-parameter linear client (see the module docstring)."""
    import torch

    from pgc.opacus import OpacusClient

    generator = torch.Generator().manual_seed(0)
    x = torch.randn(200, 101, generator=generator)
    y = torch.randint(0, 10, (200,), generator=generator)
    model = torch.nn.Linear(101, 10)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(0.01 * torch.randn(p.shape, generator=generator))
    return OpacusClient(
        model=model, features=x, labels=y, noise_multiplier=1.0, max_grad_norm=1.0, batch_size=10, lr=0.5
    )


def _loop(trainer, seeds: np.ndarray) -> tuple[float, np.ndarray]:
    t0 = time.perf_counter()
    updates = np.stack([trainer.release(int(s)) for s in seeds])
    return len(seeds) / (time.perf_counter() - t0), updates


def run(args: argparse.Namespace) -> int:
    from pgc.files import write_json_atomic
    from pgc.opacus.pool import one_thread
    from pgc.opacus.system import OpacusSystem

    client = bench_client()
    seeds = np.random.default_rng(0).integers(0, 2**62, size=args.releases)
    serial = OpacusSystem(client)
    trainer = serial._trainer("with")
    params = sum(p.numel() for p in trainer.params)
    print(f"client: {params:,} parameters, {client.records} records, batch {client.batch_size}, one local step")
    _loop(trainer, seeds[:20])  # warm-up
    rates = {"plain loop": _loop(trainer, seeds)[0]}
    with one_thread():
        rates["plain loop, one thread"], reference = _loop(trainer, seeds)
    adapter = OpacusSystem(client, workers=args.workers)
    try:
        t0 = time.perf_counter()
        adapter.release("with", 2 * args.workers, np.random.default_rng(1))
        start = time.perf_counter() - t0
        t0 = time.perf_counter()
        updates = adapter._pool.updates("with", seeds) if adapter._pool else adapter.updates("with", seeds)
        rates[f"adapter, {args.workers} workers"] = len(seeds) / (time.perf_counter() - t0)
    finally:
        adapter.close()
    for label, rate in rates.items():
        print(f"{label:24} {rate:9.1f} releases/s  ({1e3 / rate:.3f} ms per release)")
    print(f"adapter start (processes, imports, Opacus objects): {start:.1f} s, once per audit")
    identical = bool(np.allclose(updates, reference, rtol=0, atol=1e-6))
    adapter_rate = rates[f"adapter, {args.workers} workers"]
    ratio, ratio_one = adapter_rate / rates["plain loop"], adapter_rate / rates["plain loop, one thread"]
    print(f"adapter updates equal the one-thread loop's on the same seeds: {identical}")
    print(f"adapter / plain loop: {ratio:.2f}x; adapter / plain loop at one thread: {ratio_one:.2f}x (goal ≥ {GOAL}x)")
    if args.out:
        from pgc.schemas.bench_library_results import OpacusBench

        result = OpacusBench(
            parameters=params,
            releases=args.releases,
            workers=args.workers,
            rates=rates,
            start_s=start,
            identical=identical,
            ratio=ratio,
            ratio_one_thread=ratio_one,
        )
        write_json_atomic(args.out, result.to_dict())
    missed = [] if identical else ["the adapter's updates differ from the plain loop's"]
    missed += [] if ratio >= GOAL else [f"adapter / plain loop {ratio:.2f}x < {GOAL}x"]
    return goals_exit(missed)
