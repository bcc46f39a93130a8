"""Learned attacker: a torch MLP trained on shadow-simulated, mechanism-randomized submissions.

Training data are the attacker's shadow episodes (``budget`` per candidate ψ per context, the same
simulation budget as the likelihood attacker); every epoch passes the clean gradients through the
*actual* mechanism again with fresh noise from the attacker's generator (data augmentation that costs
no simulation). Features are the standardized privatized gradient, plus the score (ζ / cap) when the
threat model allows the score or timing channel.

Classification (Ψ finite): cross-entropy; the output log-softmax is, under the balanced training
prior = the uniform attack prior, log p(ψ|x) = log p(x|ψ) + const, so linked submissions add.
Regression (a range): the MLP predicts ψ (squared error); linked submissions are averaged.

All torch randomness comes from one ``torch.Generator`` seeded from the attacker's numpy generator.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
from torch import nn

from attacks.a3c.likelihood import score_channel, score_channel_name
from attacks.a3c.shadow import Contexts, ShadowBank
from attacks.a3c.threat import AttackView, ThreatModel
from pgc.contracts import AttackScores
from pgc.errors import UserError
from pgc.mechanisms import Laplace, NoNoise
from pgc.optim.networks import seeded_mlp

SCORE_BUMPS = 24


class LearnedAttacker:
    name = "learned"

    def __init__(
        self,
        hidden: int = 128,
        epochs: int = 40,
        batch_size: int = 512,
        lr: float = 2e-3,
        weight_decay: float = 1e-4,
        use_side_channels: bool = True,
        max_train: int = 60_000,
    ):
        if hidden < 1 or epochs < 1 or batch_size < 1 or not lr > 0:
            raise UserError("hidden, epochs, batch_size must be >= 1 and lr > 0")
        self.hidden, self.epochs, self.batch_size, self.lr = hidden, epochs, batch_size, lr
        self.weight_decay = weight_decay
        self.use_side_channels = use_side_channels
        self.max_train = max_train
        self.train_loss: float | None = None

    def applies_to(self, threat: ThreatModel) -> bool:
        return threat.uses("gradient")

    def channels_used(self, threat: ThreatModel) -> list[str]:
        used = ["gradient"]
        if self.use_side_channels and score_channel_name(threat):
            used.append(score_channel_name(threat))
        return used

    # ------------------------------------------------------------------------------------------
    @staticmethod
    def _score_basis(side: np.ndarray, cap: int) -> np.ndarray:
        """The score as radial-basis bumps in log ζ (fine at short episodes, coarse near the cap) plus
        ζ/cap: score distributions are multimodal, a single scalar is hard for a small MLP to cut."""
        centers = np.linspace(0.0, np.log(cap + 1.0), SCORE_BUMPS)
        width = centers[1] - centers[0]
        z = np.log1p(np.maximum(side, 0.0))[:, None]
        return np.concatenate([np.exp(-0.5 * ((z - centers) / width) ** 2), side[:, None] / cap], axis=1)

    def _features(
        self, grads: np.ndarray, side: np.ndarray | None, mu: np.ndarray, sd: np.ndarray, cap: int
    ) -> torch.Tensor:
        """Standardized features; mu/sd cover the gradient coordinates and, last, the score basis."""
        x = grads if side is None else np.concatenate([grads, self._score_basis(side, cap)], axis=1)
        return torch.from_numpy(np.ascontiguousarray((x - mu) / sd, dtype=np.float32))

    @staticmethod
    def _privatizer(threat: ThreatModel, clean: np.ndarray):
        """rng → a fresh privatized copy of ``clean``. The mechanism's deterministic part is applied once
        for the built-in mechanisms (same distribution as calling the mechanism; cheaper per epoch)."""
        mech = threat.mechanism
        if isinstance(mech, Laplace):
            clipped = mech.clip_only(clean)
            return lambda rng: clipped + rng.laplace(0.0, mech.noise_scale, size=clipped.shape)
        if isinstance(mech, NoNoise):
            fixed = mech(clean, np.random.default_rng(0))  # deterministic: the generator is not used
            return lambda rng: fixed
        return lambda rng: mech(clean, rng)

    def scores(
        self, threat: ThreatModel, view: AttackView, contexts: Contexts, bank: ShadowBank, rng: np.random.Generator
    ) -> AttackScores:
        """The :class:`pgc.contracts.Attacker` contract: log-scores, or predictions for a range."""
        out = self.fit_predict(threat, view, contexts, bank, rng)
        return AttackScores(regression=out) if threat.is_regression else AttackScores(loglik=out)

    def _network(self, n_in: int, n_out: int, gen: torch.Generator) -> nn.Sequential:
        """The MLP, Glorot-initialised from ``gen`` (:func:`pgc.optim.networks.seeded_mlp`)."""
        return seeded_mlp(n_in, self.hidden, n_out, gen)

    def fit_predict(
        self, threat: ThreatModel, view: AttackView, contexts: Contexts, bank: ShadowBank, rng: np.random.Generator
    ) -> np.ndarray:
        """Train on the bank, then return log-scores (n, P) for classification or predictions (n,) for
        regression."""
        if not self.applies_to(threat):
            raise UserError("the learned attacker needs the gradient channel")
        m, p, j, d = bank.gradients.shape
        use_side = self.use_side_channels and score_channel_name(threat) is not None
        clean = bank.gradients.reshape(m * p * j, d)
        labels_idx = np.tile(np.repeat(np.arange(p), j), m)
        side_train = bank.scores.reshape(-1) if use_side else None
        if len(clean) > self.max_train:
            keep = rng.choice(len(clean), size=self.max_train, replace=False)
            clean, labels_idx = clean[keep], labels_idx[keep]
            side_train = None if side_train is None else side_train[keep]
        regression = threat.is_regression
        # standardization from one privatized pass (attacker-side data only)
        privatize = self._privatizer(threat, clean)
        first = privatize(rng)
        cap = threat.hyper.cap
        stacked = first if side_train is None else np.concatenate([first, self._score_basis(side_train, cap)], axis=1)
        mu = stacked.mean(axis=0)
        sd = stacked.std(axis=0)
        sd[~(sd > 0)] = 1.0
        gen = torch.Generator().manual_seed(int(rng.integers(2**63)))
        n_in = d + (SCORE_BUMPS + 1 if use_side else 0)
        n_out = 1 if regression else p
        net = self._network(n_in, n_out, gen)
        opt = _Adam(list(net.parameters()), lr=self.lr, weight_decay=self.weight_decay)
        lo, hi = threat.psi_range if regression else (0.0, 1.0)
        y = torch.from_numpy(labels_idx)
        if regression:
            y_reg = torch.from_numpy(((bank.psis[labels_idx] - lo) / (hi - lo) * 2.0 - 1.0).astype(np.float32))
        x_first = self._features(first, side_train, mu, sd, cap)

        def features(rng: np.random.Generator) -> torch.Tensor:
            noisy = privatize(rng)
            return x_first if noisy is first else self._features(noisy, side_train, mu, sd, cap)

        target = y_reg if regression else y
        self.train_loss = self._train(net, opt, x_first, features, target, regression, gen, rng)
        _, side = score_channel(threat, view) if use_side else (None, None)
        with torch.no_grad():
            out = net(self._features(view.gradients, side, mu, sd, cap))
        if regression:
            return ((out[:, 0].numpy().astype(np.float64) + 1.0) / 2.0) * (hi - lo) + lo
        return torch.log_softmax(out, dim=1).numpy().astype(np.float64)

    def _train(
        self,
        net: nn.Sequential,
        opt: _Adam,
        x_first: torch.Tensor,
        features: Callable[[np.random.Generator], torch.Tensor],
        target: torch.Tensor,
        regression: bool,
        gen: torch.Generator,
        rng: np.random.Generator,
    ) -> float:
        """Mini-batch training, each epoch on fresh privatized features (the first epoch on ``x_first``); the
        last epoch's mean loss."""
        n_train = len(target)
        loss_value = float("nan")
        for epoch in range(self.epochs):
            x = x_first if epoch == 0 else features(rng)
            perm = torch.randperm(n_train, generator=gen)
            total = 0.0
            for a in range(0, n_train, self.batch_size):
                idx = perm[a : a + self.batch_size]
                out = net(x[idx])
                if regression:
                    loss = ((out[:, 0] - target[idx]) ** 2).mean()
                else:
                    loss = nn.functional.cross_entropy(out, target[idx])
                net.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                total += loss.item() * len(idx)
            loss_value = total / n_train
        return loss_value


class _Adam:
    """Plain Adam (Kingma & Ba) with L2 weight decay; avoids torch.optim's slow first import."""

    def __init__(
        self,
        params: list[torch.Tensor],
        lr: float,
        weight_decay: float = 0.0,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
    ):
        self.params, self.lr, self.wd, self.betas, self.eps = params, lr, weight_decay, betas, eps
        self.m = [torch.zeros_like(p) for p in params]
        self.v = [torch.zeros_like(p) for p in params]
        self.t = 0

    @torch.no_grad()
    def step(self) -> None:
        self.t += 1
        b1, b2 = self.betas
        c1, c2 = 1 - b1**self.t, 1 - b2**self.t
        for p, m, v in zip(self.params, self.m, self.v, strict=False):
            g = p.grad if self.wd == 0 else p.grad + self.wd * p
            m.mul_(b1).add_(g, alpha=1 - b1)
            v.mul_(b2).addcmul_(g, g, value=1 - b2)
            p.addcdiv_(m / c1, (v / c2).sqrt_().add_(self.eps), value=-self.lr)
