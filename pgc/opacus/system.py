"""An Opacus client as a System: the server sees the client's model update after its local DP-SGD steps, run by
Opacus as shipped (``PrivacyEngine.make_private``: its per-sample gradients, clipping, noise and data loader).

Secrets are the two neighbouring local data sets the claim is about:

* ``add-remove`` (Opacus's accounting): the local data with and without one record — a record of the user's data
  (``record=i``), an input-space canary added to it (``record="canary"``: a point five standard deviations out
  along every feature, with the rarest label), or a white-box gradient canary (``record="gradient"``: a Dirac
  gradient of norm C inserted into the batches that sample it, :mod:`.canary`);
* ``replace-one``: the local data as given, and with record ``i`` replaced by the canary.

A release is one round from the same initial model: the flattened parameter change on the channel ``update``, and
the number of examples the client reports beside it (as federated clients do) on ``examples``. The claim covers
``update`` only. With ``per_step`` (the white-box view of every intermediate model, the view DP-SGD's accounting
is for), the change made by each local step follows on the channel ``steps``, covered by the claim too. With
``black_box`` the auditor sees neither: one release is the trained model's loss on the differing record (the
membership-inference view of the final model, a post-processing of the update that the claim covers) on the
channel ``loss``.

Each secret has its own copy of the model and its own Opacus objects, built once; a release resets the parameters
and reseeds one ``torch.Generator`` (the data loader's and the noise's) from the audit's seed, so releases are
reproducible and no global random state is touched.
"""

from __future__ import annotations

import copy
import functools
import warnings
from typing import Any

import numpy as np

from pgc.contracts import PrivacyClaim
from pgc.errors import UserError

from .claims import RELATIONS, opacus_epsilon, pld_epsilon
from .client import OpacusClient
from .pool import ReleasePool, one_thread

SECRETS = {"add-remove": ("without", "with"), "replace-one": ("original", "replaced")}
CANARIES = ("canary", "gradient")  # an input-space canary record; a white-box gradient canary (.canary)


def input_canary(client: OpacusClient) -> tuple[Any, Any]:
    """(features, label) of a record far outside the data: five standard deviations above the mean of every feature;
    the rarest class (cross entropy) or five standard deviations above the mean label (mse)."""
    import torch

    x = client.features.double()
    point = (x.mean(0) + 5.0 * x.std(0).clamp_min(1e-3)).to(client.features.dtype)
    if client.loss == "cross_entropy":
        counts = torch.bincount(client.labels.long())
        label = torch.tensor(int(torch.argmin(counts)), dtype=client.labels.dtype)
    else:
        y = client.labels.double()
        label = (y.mean(0) + 5.0 * y.std(0).clamp_min(1e-3)).to(client.labels.dtype)
    return point, label


class _Trainer:
    """One local data set trained by Opacus: the model copy, its DP optimizer and Poisson (or shuffled) loader; with
    ``canary`` (parameter coordinates), a gradient canary at each, inserted into the batches that sample it; with
    ``per_step``, each step's change follows the update (of the ``watch`` coordinates only, where given)."""

    def __init__(
        self,
        client: OpacusClient,
        features: Any,
        labels: Any,
        initial: list,
        per_step: bool,
        canary: list[int] | None = None,
        watch: list[int] | None = None,
        query: tuple[Any, Any] | None = None,
        data_drift: bool = False,
    ) -> None:
        import torch
        from opacus import PrivacyEngine
        from torch.utils.data import DataLoader, TensorDataset

        self.generator = torch.Generator()
        model = copy.deepcopy(client.model)
        optimizer = torch.optim.SGD(model.parameters(), lr=client.lr)
        loader = DataLoader(
            TensorDataset(features, labels),
            batch_size=client.batch_size,
            shuffle=not client.poisson_sampling,
            generator=self.generator,
        )
        with warnings.catch_warnings():
            # the audit seeds its own generator; Opacus's secure mode (a cryptographic RNG) is not what is audited
            warnings.filterwarnings("ignore", message="Secure RNG turned off")
            engine = PrivacyEngine(accountant=client.accountant)
        self.model, self.optimizer, self.loader = engine.make_private(
            module=model,
            optimizer=optimizer,
            data_loader=loader,
            noise_multiplier=client.noise_multiplier,
            max_grad_norm=client.max_grad_norm,
            poisson_sampling=client.poisson_sampling,
            noise_generator=self.generator,
            loss_reduction=client.loss_reduction,
        )
        self.params = [p for p in self.model.parameters() if p.requires_grad]
        self.canary = None
        if canary is not None:
            from .canary import GradientCanary

            self.canary = GradientCanary(self.params, canary, client, len(self.loader))
        self.initial, self.initial_flat = initial, self._flat(initial)
        self.steps, self.per_step, self.watch = client.local_steps, per_step, watch
        self.max_grad_norm = client.max_grad_norm
        self.data_drift: list[np.ndarray] | None = [] if data_drift else None
        self._watched, self._watch_order = self._watched_columns() if data_drift else ([], np.zeros(0, dtype=int))
        loss = torch.nn.functional.cross_entropy if client.loss == "cross_entropy" else torch.nn.functional.mse_loss
        self.loss = functools.partial(loss, reduction=client.loss_reduction)  # as Opacus is told it reduces
        self.query_loss = functools.partial(loss, reduction="sum")
        self.query = None if query is None else (query[0][None], query[1][None])  # one record: a batch of one

    def release(self, seed: int) -> np.ndarray:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Full backward hook is firing")
            return self._round(seed)

    def _round(self, seed: int) -> np.ndarray:
        import torch

        self.generator.manual_seed(seed)
        with torch.no_grad():
            for p, p0 in zip(self.params, self.initial, strict=True):
                p.copy_(p0)
        done, trajectory = 0, []
        if self.data_drift is not None:
            self.data_drift = []
        while done < self.steps:
            if self.canary is not None:
                self.canary.start_pass(self.generator)
            for batch, (x, y) in enumerate(self.loader):  # torch warns that inputs need no gradient: harmless here
                self.optimizer.zero_grad(set_to_none=True)
                if len(x):
                    self.loss(self.model(x), y).backward()
                else:  # an empty Poisson batch: the step adds noise only
                    for p in self.params:
                        p.grad_sample = torch.zeros((0, *p.shape), dtype=p.dtype)
                if self.data_drift is not None:
                    self.data_drift.append(self._clipped_data_sum())
                if self.canary is not None:
                    self.canary.insert(self.params, self.canary.sampled(batch, self.generator))
                self.optimizer.step()
                if self.per_step:
                    flat = self._flat(self.params)
                    trajectory.append(flat if self.watch is None else flat[self.watch])
                done += 1
                if done == self.steps:
                    break
        if self.query is not None:  # black-box: the trained model's loss on the record, nothing else
            with torch.no_grad():
                return np.array([float(self.query_loss(self.model(self.query[0]), self.query[1]))])
        update = self._flat(self.params) - self.initial_flat
        if not self.per_step:
            return update
        start = self.initial_flat if self.watch is None else self.initial_flat[self.watch]
        return np.concatenate([update, *np.diff(np.stack([start, *trajectory]), axis=0)])

    def _clipped_data_sum(self) -> np.ndarray:
        """The batch's records' clipped gradients summed at the watched coordinates, before any canary joins the
        batch: each record's gradient scaled by Opacus's flat clipping factor min(1, C / (‖g‖₂ + 1e-6))."""
        import torch

        with torch.no_grad():
            flats = [p.grad_sample.reshape(len(p.grad_sample), -1) for p in self.params]
            watched = torch.cat([flat[:, columns] for flat, columns in zip(flats, self._watched, strict=True)], dim=1)
            if not len(watched):
                return np.zeros(watched.shape[1])
            norms = torch.stack([flat.norm(dim=1) for flat in flats], dim=1).norm(dim=1)
            factor = (self.max_grad_norm / (norms + 1e-6)).clamp(max=1.0)
            return (factor @ watched).double().numpy()[self._watch_order]

    def _watched_columns(self) -> tuple[list, np.ndarray]:
        """Per parameter, the local indices of the watched flat coordinates it holds (all of them without
        ``watch``), and the order that puts their concatenation back in the order of ``watch``."""
        import torch

        sizes = [p.numel() for p in self.params]
        watch = np.arange(sum(sizes)) if self.watch is None else np.asarray(self.watch)
        starts = np.concatenate([[0], np.cumsum(sizes)])
        columns, order = [], []
        for start, end in zip(starts[:-1], starts[1:], strict=True):
            held = np.flatnonzero((watch >= start) & (watch < end))
            columns.append(torch.as_tensor(watch[held] - start))
            order.append(held)
        return columns, np.argsort(np.concatenate(order), kind="stable")

    @staticmethod
    def _flat(params: list) -> np.ndarray:
        import torch

        with torch.no_grad():
            return torch.cat([p.detach().reshape(-1) for p in params]).double().numpy().copy()


class OpacusSystem:
    """A client trained by Opacus, seen by the server (see the module docstring)."""

    channels = ("update", "examples")

    def __init__(
        self,
        client: OpacusClient,
        relation: str = "add-remove",
        record: int | str = 0,
        name: str = "opacus",
        workers: int = 1,
        per_step: bool = False,
        black_box: bool = False,
    ):
        if relation not in RELATIONS:
            raise UserError(f"relation must be one of {', '.join(RELATIONS)}, got {relation!r}")
        if record not in CANARIES and not (isinstance(record, int) and 0 <= record < client.records):
            raise UserError(
                f"record must be 'canary', 'gradient' or a record index in [0, {client.records}), got {record!r}"
            )
        if relation == "replace-one" and record in CANARIES:
            raise UserError("replace-one replaces a record of the data by the canary: give its index (record=I)")
        if black_box and (record == "gradient" or per_step):
            raise UserError(
                "black_box queries the trained model on the differing record: a gradient canary has no input to "
                "query and per_step is the white-box view (give record=I or 'canary', without per_step)"
            )
        self.client, self.neighbours, self.record = client, relation, record
        self.name = name
        q, sigma, steps, delta = client.sample_rate, client.noise_multiplier, client.local_steps, client.delta
        self.opacus_epsilon = opacus_epsilon(client.accountant, q, sigma, steps, delta)
        self.pld_epsilon = {r: pld_epsilon(r, q, sigma, steps, delta) for r in RELATIONS}
        epsilon = self.opacus_epsilon if relation == "add-remove" else self.pld_epsilon["replace-one"]
        self.per_step = per_step  # the white-box view: every local step's change beside the round's update
        self.black_box = black_box  # the final model's loss on the differing record only
        self.channels = (
            ("loss",) if black_box else ("update", "steps", "examples") if per_step else ("update", "examples")
        )
        # every record in every step (q = 1): the rounds are exactly a Gaussian mechanism of sensitivity C and noise
        # σC composed over the steps, μ = √steps / σ (Dong, Roth & Su 2022, Cor. 3.3), the curve the claim states
        exact = q == 1.0 and sigma > 0
        self.claim = PrivacyClaim(
            epsilon,
            delta,
            ("loss",) if black_box else ("update", "steps") if per_step else ("update",),
            gdp_mu=steps**0.5 / sigma if exact else None,
        )
        added = {
            "canary": "an input-space canary",
            "gradient": "a Dirac gradient canary of norm C (white-box), in the batches that sample it",
        }.get(str(record), f"record {record} of the local data")
        self.relation = (  # what makes the two secrets neighbours, in words
            f"one record added or removed: {added}"
            if relation == "add-remove"
            else f"one record replaced: record {record} by an input-space canary"
        )
        self._trainers: dict[str, _Trainer] = {}
        self._dirac: int | None = None  # the gradient canary's coordinate, found on first use
        self._parameters = sum(p.numel() for p in client.model.parameters() if p.requires_grad)  # an update's length
        if not (isinstance(workers, int) and workers >= 1):
            raise UserError(f"workers must be a positive integer, got {workers!r}")
        settings = dict(client=client, relation=relation, record=record, per_step=per_step, black_box=black_box)
        self._pool = ReleasePool(OpacusSystem, settings, workers) if workers > 1 else None

    def _data(self, secret: str) -> tuple[Any, Any]:
        import torch

        x, y = self.client.features, self.client.labels
        first, second = SECRETS[self.neighbours]
        if secret not in (first, second):
            raise UserError(f"{self.name}: a secret is {first!r} or {second!r}, got {secret!r}")
        if self.record == "gradient":  # the canary is a gradient, not a record: the data set is the same
            return x, y
        if self.neighbours == "add-remove":
            if self.record == "canary":
                if secret == first:
                    return x, y
                cx, cy = input_canary(self.client)
                return torch.cat([x, cx[None]]), torch.cat([y, cy[None]])
            if secret == second:
                return x, y
            keep = torch.arange(len(x)) != self.record
            return x[keep], y[keep]
        if secret == first:
            return x, y
        cx, cy = input_canary(self.client)
        x, y = x.clone(), y.clone()
        x[self.record], y[self.record] = cx, cy
        return x, y

    def _trainer(self, secret: str) -> _Trainer:
        if secret not in self._trainers:
            initial = [p.detach().clone() for p in self.client.model.parameters() if p.requires_grad]
            canary = [self._coordinate()] if self.record == "gradient" and secret == SECRETS["add-remove"][1] else None
            query = self._queried() if self.black_box else None
            self._trainers[secret] = _Trainer(
                self.client, *self._data(secret), initial, self.per_step, canary, query=query
            )
        return self._trainers[secret]

    def _queried(self) -> tuple[Any, Any]:
        """The record the black-box auditor queries the trained model on: the one that differs between the secrets
        (replace-one: the canary that replaces record i)."""
        if self.record == "canary" or self.neighbours == "replace-one":
            return input_canary(self.client)
        return self.client.features[self.record], self.client.labels[self.record]

    def release(self, secret: Any, n: int, rng: np.random.Generator, *, broadcast: Any = None) -> dict[str, np.ndarray]:
        secret = str(secret)
        examples = len(self._data(secret)[0])  # checks the secret; workers build their own trainers
        seeds = rng.integers(0, 2**62, size=n)
        updates = self._pool.updates(secret, seeds) if self._pool and n > 1 else self.updates(secret, seeds)
        if self.black_box:
            return {"loss": updates[:, :1]}
        size = self._parameters
        out = {"update": updates[:, :size], "examples": np.full((n, 1), float(examples))}
        return out | ({"steps": updates[:, size:]} if self.per_step else {})

    def updates(self, secret: str, seeds: np.ndarray) -> np.ndarray:
        """The updates of trainings seeded by ``seeds``, in this process (one intra-op thread); with ``per_step``, each
        followed by the change of every local step."""
        trainer = self._trainer(secret)
        size = 1 if self.black_box else self._parameters * (1 + self.client.local_steps * self.per_step)
        with one_thread():
            return np.stack([trainer.release(int(s)) for s in seeds]) if len(seeds) else np.zeros((0, size))

    def close(self) -> None:
        """Stops the worker processes, if any."""
        if self._pool is not None:
            self._pool.close()

    def audit_statistics(self, channel: str) -> list:
        """Projections on the differing record's clipped gradient at the initial model (:mod:`.statistics`); none
        for the black-box loss (a scalar: the default statistics threshold it)."""
        from .statistics import clipped_gradient, projection_tests

        if channel == "loss":
            return []

        x, y = self.client.features, self.client.labels
        if self.record == "gradient":
            from .canary import dirac_direction

            direction = dirac_direction(self._parameters, self._coordinate(), self.client.max_grad_norm)
        elif self.record == "canary":
            direction = clipped_gradient(self.client, *input_canary(self.client))
        else:
            direction = clipped_gradient(self.client, x[self.record], y[self.record])
            if self.neighbours == "replace-one":
                direction = clipped_gradient(self.client, *input_canary(self.client)) - direction
        return projection_tests(channel, direction, exact=self.record == "gradient")

    def _coordinate(self) -> int:
        """The gradient canary's parameter coordinate (:func:`.canary.dirac_coordinates`), found once."""
        if self._dirac is None:
            from .canary import dirac_coordinates

            (self._dirac,) = dirac_coordinates(self.client)
        return self._dirac

    def canaries(self) -> dict[str, tuple[str, str]]:
        first, second = SECRETS[self.neighbours]
        return {f"{second} vs {first}": (second, first)}

    def describe_secret(self, secret: Any) -> str:
        return f"local data {secret} the record" if self.neighbours == "add-remove" else f"local data {secret}"

    def accounting(self) -> dict[str, float]:
        """Opacus's ε (its accountant, add/remove) and dp-accounting's PLD ε for both relations, at the claim's δ."""
        return {
            f"opacus-{self.client.accountant}": self.opacus_epsilon,
            "pld-add-remove": self.pld_epsilon["add-remove"],
            "pld-replace-one": self.pld_epsilon["replace-one"],
        }
