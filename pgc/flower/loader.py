"""``pgc audit --flower MODULE:APP``: a user's ClientApp and what its module states beside it.

The module (or file) that defines the ClientApp ``APP`` also defines

* ``initial_parameters()`` — the global parameters the server sends (a list of numpy arrays);
* ``AUDIT_PAIRS`` (optional) — ``{name: (data set, neighbouring data set)}``, the names its ``client_fn``
  reads from ``context.run_config[DATASET_KEY]``;
* ``AUDIT_RELATION`` (optional) — what makes the pairs neighbours (default "one record replaced");
* ``AUDIT_CLAIM`` (optional) — a :class:`pgc.contracts.PrivacyClaim` when no mod states one;
* ``AUDIT_WORKERS`` (optional) — processes that send a release's messages (default: the CPUs this process
  may use; 1 for a client that must not be forked);
* ``AUDIT_METRICS`` (optional) — the keys of the numeric metrics the client may report, each a channel
  ``metrics.KEY`` (default: those of one probe reply per named data set).
"""

from __future__ import annotations

from collections.abc import Sequence

from pgc.systems.registry import SystemSpecError, spec_module, system_factory

from .system import FlowerClientSystem


def flower_client_from_spec(spec: str, datasets: Sequence[str] | None = None) -> FlowerClientSystem:
    """The FlowerClientSystem of ``MODULE:APP`` (or ``path/to/file.py:APP``); ``datasets`` names the pair
    instead of the module's ``AUDIT_PAIRS``."""
    from flwr.clientapp import ClientApp

    app = system_factory(spec, "flower")
    if not isinstance(app, ClientApp):
        raise SystemSpecError(f"flower {spec}: {type(app).__name__} is not a flwr ClientApp")
    module = spec_module(spec)
    make_parameters = getattr(module, "initial_parameters", None)
    if not callable(make_parameters):
        raise SystemSpecError(
            f"flower {spec}: the module defines no initial_parameters() returning the global "
            "parameters (a list of numpy arrays)"
        )
    pairs = dict(getattr(module, "AUDIT_PAIRS", {}) or {})
    if datasets:
        pairs = {f"{datasets[0]} vs {datasets[1]}": (datasets[0], datasets[1])}
    if not pairs:
        raise SystemSpecError(f"flower {spec}: give --datasets A B, or define AUDIT_PAIRS in the module")
    return FlowerClientSystem(
        app,
        make_parameters(),
        pairs,
        claim=getattr(module, "AUDIT_CLAIM", None),
        name=f"flower {spec.rpartition(':')[0]}",
        relation=getattr(module, "AUDIT_RELATION", "one record replaced"),
        workers=getattr(module, "AUDIT_WORKERS", None),
        metrics=getattr(module, "AUDIT_METRICS", None),
    )
