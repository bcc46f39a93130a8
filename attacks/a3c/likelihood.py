"""Likelihood (Bayes) attackers and the side-channel attacker.

Each returns, for every attacked submission i and candidate ψ_p, an estimate of log p(view_i | ψ_p)
(up to a constant shared by all ψ); :mod:`attacks.a3c.runner` sums these over linked submissions and takes
the MAP (uniform prior), or the posterior mean over a grid for a range.

Gradient channel, by mechanism (shadow episodes c_{p,j}, j = 1..J, at the submission's θ'):

* Laplace (Alg. 2, eq. 21): p(g̃|ψ_p) ≈ (1/J) Σ_j Π_i Lap(g̃_i − clip(c_{p,j})_i; C/ε) — Monte Carlo over
  episodes, computed in log space with logsumexp; L1 distances by ``torch.cdist(p=1)``.
* NoNoise (ε = ∞): a product-Laplace kernel density on the clean clipped gradients; the bandwidth is
  chosen by held-out log loss on a split of the shadow episodes.
* PRS (Alg. 3, eq. 24): the bit likelihood p(ũ|M, ψ_p) ≈ (1/J) Σ_j Π_k P(ũ_k | clip(M c_{p,j})_k).
  With d̂ = 1 the aggregator recovers (M, ũ) from Mᵀũ exactly up to a joint sign flip that leaves the
  likelihood unchanged (P(ũ=+C | M) = P(ũ=−C | −M) by eq. 24), so no extra channel is needed; for
  d̂ > 1 the decomposition is not unique and the white-box channel ``prs_internals`` is required.

Score / timing channel (NOT protected by the mechanism): the empirical score distribution of the
shadow episodes, smoothed by a discrete Laplace kernel of width h; with the gradient it enters
jointly, p(g̃, ζ | ψ) ≈ (1/J) Σ_j K(ζ − ζ_j) Lap(g̃ − c_j), so the two channels are never double-counted.

Calibration (every channel). A fixed narrow kernel (h = 1) on J ≈ 100 shadow scores spread over
tens of values is a noisy, over-confident likelihood: a target score in a tail is "explained" by
whichever ψ happened to draw one shadow episode near it. Summed over k linked submissions this Monte
Carlo noise of ONE shadow bank decides the guess for every target at once, so the bank-conditional
accuracy can fall below chance while the attacker reports 60 % confidence. The same holds for the
gradient at large ε, where the Laplace density is peaked and (1/J) Σ_j is dominated by the nearest
shadow episode. Therefore (when J ≥ 4) the score width h is chosen by held-out posterior log loss of
the score alone (half the shadow episodes predict the other half), and then a shrinkage weight λ by
held-out posterior log loss of the whole likelihood (the held-out half goes through the actual
mechanism, fresh noise); every candidate's likelihood is shrunk toward the pooled one:

    p̂_λ(view | ψ) = (1 − λ) p̂(view | ψ) + λ · (1/|Ψ|) Σ_ψ' p̂(view | ψ').

λ = 1 (all candidates equal: the uniform posterior) is chosen when the shadow episodes carry no
usable signal, e.g. for candidates with identical physics; ties are then broken at random by the
runner.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from attacks.a3c.shadow import Contexts, ShadowBank
from attacks.a3c.threat import AttackView, ThreatModel
from pgc.contracts import AttackScores
from pgc.errors import UserError
from pgc.mechanisms import Laplace, NoNoise, ProjectedRandomSign, bit_flip_plus_probability, l1_clip

_CHUNK = 20_000_000  # elements of one distance block


def _logmeanexp(logits: torch.Tensor, dim: int) -> torch.Tensor:
    return torch.logsumexp(logits, dim=dim) - math.log(logits.shape[dim])


def kernel_loglik(
    x: np.ndarray,
    centers: np.ndarray,
    scale: float | None,
    x_scores: np.ndarray | None = None,
    center_scores: np.ndarray | None = None,
    score_bandwidth: float = 1.0,
) -> np.ndarray:
    """log (1/J) Σ_j exp(−‖x_i − c_{p,j}‖₁/scale − |ζ_i − ζ_{p,j}|/h) for x (n, d), centers (P, J, d).

    ``scale=None`` drops the gradient term (score only); ``x_scores=None`` drops the score term.
    Constants shared by all ψ (−d log 2·scale, the score kernel's normaliser) are omitted.
    """
    p, j, d = centers.shape
    n = len(x)
    out = np.empty((n, p))
    y = torch.from_numpy(np.ascontiguousarray(centers.reshape(p * j, d), dtype=np.float64))
    ys = None if x_scores is None else torch.from_numpy(np.asarray(center_scores, np.float64).reshape(1, p * j))
    step = max(1, _CHUNK // max(1, p * j * (d if scale is not None else 1)))
    for a in range(0, n, step):
        b = min(n, a + step)
        logits = torch.zeros((b - a, p * j), dtype=torch.float64)
        if scale is not None:
            xa = torch.from_numpy(np.ascontiguousarray(x[a:b], dtype=np.float64))
            logits -= torch.cdist(xa, y, p=1.0) / scale
        if x_scores is not None:
            xs = torch.from_numpy(np.asarray(x_scores[a:b], np.float64)[:, None])
            logits -= (xs - ys).abs() / score_bandwidth
        out[a:b] = _logmeanexp(logits.reshape(b - a, p, j), dim=2).numpy()
    return out


def prs_bit_loglik(
    matrices: np.ndarray,
    signs: np.ndarray,
    centers: np.ndarray,
    mech: ProjectedRandomSign,
    x_scores: np.ndarray | None = None,
    center_scores: np.ndarray | None = None,
    score_bandwidth: float = 1.0,
) -> np.ndarray:
    """log (1/J) Σ_j Π_k P(ũ_ik | clip(M_i c_{p,j})_k) (eq. 24), matrices (n, d̂, d), signs (n, d̂)."""
    p, j, d = centers.shape
    n, d_hat, _ = matrices.shape
    eps_coord = mech.epsilon / d_hat
    y = centers.reshape(p * j, d)
    out = np.empty((n, p))
    step = max(1, _CHUNK // max(1, p * j * d_hat * 4))
    plus = signs > 0
    for a in range(0, n, step):
        b = min(n, a + step)
        u = np.einsum("nkd,md->nmk", matrices[a:b], y)  # (b−a, PJ, d̂)
        p_plus = bit_flip_plus_probability(np.clip(u, -mech.clip, mech.clip), mech.clip, eps_coord)
        p_obs = np.where(plus[a:b, None, :], p_plus, 1.0 - p_plus)
        logits = np.log(np.clip(p_obs, 1e-300, None)).sum(axis=2)
        if x_scores is not None:
            distance = np.abs(np.asarray(x_scores[a:b], float)[:, None] - center_scores.reshape(1, -1))
            logits = logits - distance / score_bandwidth
        t = torch.from_numpy(logits.reshape(b - a, p, j))
        out[a:b] = _logmeanexp(t, dim=2).numpy()
    return out


def recover_prs_release(outputs: np.ndarray, mech: ProjectedRandomSign) -> tuple[np.ndarray, np.ndarray]:
    """(M, ũ) from the aggregator's Mᵀũ when d̂ = 1: M = output/C, ũ = +C (the sign-flipped
    decomposition (−M, −C) has the same likelihood, see the module docstring)."""
    d = outputs.shape[1]
    if mech.reduced_dim_for(d) != 1:
        raise UserError(
            "PRS output Mᵀũ with d̂ > 1 cannot be decomposed uniquely; "
            "use the channel prs_internals (white-box) or the learned attacker"
        )
    m = outputs / mech.clip
    units = m / math.sqrt(3.0)
    if not np.allclose(units, np.round(units), atol=1e-4) or np.abs(np.round(units)).max(initial=0) > 1:
        raise UserError("gradients are not PRS outputs of d̂ = 1 (entries must be 0 or ±√3·C)")
    return m[:, None, :], np.full((len(outputs), 1), mech.clip)


def score_channel(threat: ThreatModel, view: AttackView) -> tuple[str | None, np.ndarray | None]:
    """The score-like channel the threat model allows: the score itself, else the timing duration."""
    if threat.uses("score"):
        return "score", view.scores.astype(np.float64)
    if threat.uses("timing"):
        return "timing", view.durations.astype(np.float64)
    return None, None


class LikelihoodAttacker:
    """Bayes attacker: exact mechanism density, Monte Carlo over shadow episodes (see module doc)."""

    name = "likelihood"

    SCORE_WIDTHS = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0)
    SHRINKAGE = (0.0, 0.05, 0.1, 0.2, 0.35, 0.5, 0.65, 0.8, 0.9, 0.95, 1.0)

    def __init__(
        self,
        score_bandwidth: float = 1.0,
        use_gradient: bool = True,
        use_side_channels: bool = True,
        calibrate: bool = True,
    ):
        if not score_bandwidth > 0:
            raise UserError("score_bandwidth must be > 0")
        self.score_bandwidth = float(score_bandwidth)
        self.use_gradient = use_gradient
        self.use_side_channels = use_side_channels
        self.calibrate = calibrate
        self.shrinkage = 0.0  # λ of the last loglik call (see module doc)
        self.kde_bandwidth: float | None = None
        self.coordinate_scale: np.ndarray | None = None  # ε = ∞: per-coordinate spread the kernel is measured in

    def applies_to(self, threat: ThreatModel) -> bool:
        if self.use_gradient:
            if not threat.uses("gradient"):
                return False
            m = threat.mechanism
            if isinstance(m, ProjectedRandomSign):
                return m.reduced_dim_for(threat.hyper.dim) == 1 or threat.uses("prs_internals")
            return isinstance(m, (Laplace, NoNoise))
        return self.use_side_channels and score_channel_name(threat) is not None

    def channels_used(self, threat: ThreatModel) -> list[str]:
        used = []
        if self.use_gradient:
            used.append("gradient")
            if isinstance(threat.mechanism, ProjectedRandomSign) and threat.uses("prs_internals"):
                used.append("prs_internals")
        if self.use_side_channels and score_channel_name(threat):
            used.append(score_channel_name(threat))
        return used

    def scores(
        self, threat: ThreatModel, view: AttackView, contexts: Contexts, bank: ShadowBank, rng: np.random.Generator
    ) -> AttackScores:
        """The :class:`pgc.contracts.Attacker` contract: per-submission log-likelihoods."""
        loglik = self.loglik(threat, view, contexts, bank, rng)
        return AttackScores(loglik=loglik, kde_bandwidth=self.kde_bandwidth)

    def loglik(
        self, threat: ThreatModel, view: AttackView, contexts: Contexts, bank: ShadowBank, rng: np.random.Generator
    ) -> np.ndarray:
        if not self.applies_to(threat):
            raise UserError(f"{self.name} attacker does not apply to this threat model")
        _, side = score_channel(threat, view) if self.use_side_channels else (None, None)
        mech = threat.mechanism
        if self.use_gradient and isinstance(mech, NoNoise):
            self.kde_bandwidth = self._select_bandwidth(mech, bank, side is not None, rng)
        self.shrinkage = 0.0
        if self.calibrate and bank.budget >= 4:
            if side is not None:
                self.score_bandwidth, _ = select_score_model(bank.scores, self.SCORE_WIDTHS, self.SHRINKAGE)
            self.shrinkage = self._select_shrinkage(threat, contexts, bank, rng)
        return shrink(self._raw_loglik(threat, view, contexts, bank), self.shrinkage)

    def _raw_loglik(self, threat: ThreatModel, view: AttackView, contexts: Contexts, bank: ShadowBank) -> np.ndarray:
        """Monte Carlo log-likelihoods (n, P) with the current widths, before shrinkage."""
        _, side = score_channel(threat, view) if self.use_side_channels else (None, None)
        mech = threat.mechanism
        out = np.empty((len(view), len(bank.psis)))
        prs_m = prs_s = None
        if self.use_gradient and isinstance(mech, ProjectedRandomSign):
            if threat.uses("prs_internals") and view.prs_matrices is not None:
                prs_m, prs_s = view.prs_matrices, view.prs_signs
            else:
                prs_m, prs_s = recover_prs_release(view.gradients, mech)
        for c in range(len(contexts)):
            rows = np.flatnonzero(contexts.of_row == c)
            if rows.size == 0:
                continue
            cs = bank.scores[c] if side is not None else None
            xs = side[rows] if side is not None else None
            if not self.use_gradient:
                out[rows] = kernel_loglik(
                    np.zeros((rows.size, 1)), np.zeros(bank.scores[c].shape + (1,)), None, xs, cs, self.score_bandwidth
                )
            elif isinstance(mech, ProjectedRandomSign):
                out[rows] = prs_bit_loglik(
                    prs_m[rows], prs_s[rows], bank.gradients[c], mech, xs, cs, self.score_bandwidth
                )
            else:
                centers = self._clean_view(mech, bank.gradients[c])
                x = view.gradients[rows]
                if isinstance(mech, Laplace):
                    scale = mech.noise_scale
                else:  # kernel density in standardized coordinates
                    scale = self.kde_bandwidth
                    centers, x = centers / self.coordinate_scale, x / self.coordinate_scale
                out[rows] = kernel_loglik(x, centers, scale, xs, cs, self.score_bandwidth)
        return out

    def _select_shrinkage(
        self, threat: ThreatModel, contexts: Contexts, bank: ShadowBank, rng: np.random.Generator, max_contexts: int = 8
    ) -> float:
        """λ by held-out posterior log loss: the second half of each (context, ψ)'s shadow episodes goes
        through the actual mechanism (fresh noise from ``rng``) and is attacked with the first half as
        the bank; the λ (see module doc) with the smallest cross-entropy wins, the larger on ties."""
        m, p, j, d = bank.gradients.shape
        half = j // 2
        ctx = np.sort(rng.choice(m, size=min(m, max_contexts), replace=False))
        fit = ShadowBank(bank.psis, bank.gradients[ctx, :, :half], bank.scores[ctx, :, :half])
        held = bank.gradients[ctx, :, half:].reshape(-1, d)
        held_scores = bank.scores[ctx, :, half:].reshape(-1)
        per_ctx = p * (j - half)
        of_row = np.repeat(np.arange(len(ctx)), per_ctx)
        truth = np.tile(np.repeat(np.arange(p), j - half), len(ctx))
        mech = threat.mechanism
        matrices = signs = None
        if isinstance(mech, ProjectedRandomSign):
            rel = mech.release(held, rng)
            noisy = rel.output
            if threat.uses("prs_internals"):
                matrices, signs = rel.matrices, rel.signs
        else:
            noisy = mech(held, rng)
        sub = Contexts(contexts.thetas[ctx], contexts.alphas[ctx], of_row)
        pseudo = AttackView(
            noisy,
            sub.thetas[of_row],
            sub.alphas[of_row],
            held_scores,
            held_scores.copy(),
            np.arange(len(held)),
            matrices,
            signs,
        )
        raw = self._raw_loglik(threat, pseudo, sub, fit)
        best, best_loss = 0.0, math.inf
        for lam in sorted(self.SHRINKAGE, reverse=True):
            mixed = torch.from_numpy(shrink(raw, lam))
            post = mixed - torch.logsumexp(mixed, dim=1, keepdim=True)
            loss = -float(post[torch.arange(len(truth)), torch.from_numpy(truth)].mean())
            if loss < best_loss - 1e-9:
                best, best_loss = float(lam), loss
        return best

    @staticmethod
    def _clean_view(mech, grads: np.ndarray) -> np.ndarray:
        """The mechanism's deterministic part (clipping) applied to shadow gradients (P, J, d)."""
        p, j, d = grads.shape
        flat = grads.reshape(p * j, d)
        if isinstance(mech, Laplace):
            flat = l1_clip(flat, mech.clip / 2.0)  # eq. 19
        elif isinstance(mech, NoNoise) and mech.clip is not None:
            flat = l1_clip(flat, mech.clip / 2.0)
        return flat.reshape(p, j, d)

    def _select_bandwidth(self, mech: NoNoise, bank: ShadowBank, with_scores: bool, rng: np.random.Generator) -> float:
        """Kernel width for ε = ∞ by held-out log loss: half the shadow episodes predict the other half."""
        n_ctx = min(len(bank.gradients), 8)
        ctx = rng.choice(len(bank.gradients), size=n_ctx, replace=False)
        half = bank.budget // 2
        if half < 1:
            return 1.0
        pooled = self._clean_view(mech, bank.gradients[ctx].reshape(-1, *bank.gradients.shape[2:]))
        sd = pooled.reshape(-1, pooled.shape[-1]).std(axis=0)
        positive = sd[sd > 0]
        floor = positive.min() if positive.size else 1.0
        self.coordinate_scale = np.where(sd > 0, sd, floor)
        fits, helds = [], []
        for c in ctx:
            clean = self._clean_view(mech, bank.gradients[c]) / self.coordinate_scale
            fits.append(clean[:, :half])
            helds.append(clean[:, half:])
        # candidate widths around the typical per-coordinate spread of held-out points to the fit set;
        # distances are computed once, the widths only rescale them
        spread = np.median(np.abs(helds[0] - fits[0].mean(axis=1, keepdims=True)))
        if not spread > 0:
            spread = 1e-12
        d = bank.gradients.shape[-1]
        blocks = []
        for fit, held in zip(fits, helds, strict=False):
            p, jh, _ = held.shape
            x = torch.from_numpy(np.ascontiguousarray(held.reshape(p * jh, d)))
            y = torch.from_numpy(np.ascontiguousarray(fit.reshape(-1, d)))
            blocks.append((torch.cdist(x, y, p=1.0).reshape(p * jh, p, -1), np.repeat(np.arange(p), jh)))
        best, best_loss = spread, math.inf
        for h in spread * np.geomspace(1 / 64, 64, 25):
            loss = 0.0
            for dist, truth in blocks:
                ll = _logmeanexp(-dist / (h * d), dim=2)
                post = ll - torch.logsumexp(ll, dim=1, keepdim=True)
                loss -= float(post[np.arange(len(truth)), truth].mean())
            if loss < best_loss - 1e-12:
                best, best_loss = h, loss
        return float(best * bank.gradients.shape[-1])


def shrink(loglik: np.ndarray, lam: float) -> np.ndarray:
    """log[(1 − λ) p_ψ + λ · mean_ψ' p_ψ'] for log-likelihoods (n, P) sharing one constant across ψ."""
    if lam <= 0.0:
        return loglik
    t = torch.from_numpy(np.asarray(loglik, np.float64))
    pooled = _logmeanexp(t, dim=1)[:, None].expand_as(t)
    if lam >= 1.0:
        return pooled.numpy().copy()
    out = torch.logaddexp(t + math.log1p(-lam), pooled + math.log(lam))
    return out.numpy()


def select_score_model(scores: np.ndarray, widths, shrinkages, max_contexts: int = 8) -> tuple[float, float]:
    """(h, λ) minimising the held-out posterior log loss of the score-only likelihood.

    ``scores`` is (m, P, J); the first half of every (context, ψ)'s episodes is the fit set, the second
    half is held out (episodes are i.i.d., so the split needs no randomness). Among equal losses the
    larger λ (the more cautious posterior) and then the wider kernel win."""
    m, p, j = scores.shape
    half = j // 2
    blocks = []
    for c in range(min(m, max_contexts)):
        fit = torch.from_numpy(np.asarray(scores[c, :, :half], np.float64)).reshape(1, p * half)
        held = torch.from_numpy(np.asarray(scores[c, :, half:], np.float64)).reshape(-1, 1)
        truth = torch.from_numpy(np.repeat(np.arange(p), j - half))
        blocks.append(((held - fit).abs().reshape(-1, p, half), truth))
    best, best_loss = (max(widths), 1.0), math.inf
    for h in sorted(widths, reverse=True):
        lls = [(_logmeanexp(-dist / h, dim=2), truth) for dist, truth in blocks]
        for lam in sorted(shrinkages, reverse=True):
            loss = 0.0
            for ll, truth in lls:
                mixed = torch.from_numpy(shrink(ll.numpy(), lam))
                post = mixed - torch.logsumexp(mixed, dim=1, keepdim=True)
                loss -= float(post[torch.arange(len(truth)), truth].mean())
            if loss < best_loss - 1e-9:
                best, best_loss = (float(h), float(lam)), loss
    return best


def score_channel_name(threat: ThreatModel) -> str | None:
    if threat.uses("score"):
        return "score"
    if threat.uses("timing"):
        return "timing"
    return None


class SideChannelAttacker(LikelihoodAttacker):
    """Score / timing only: the empirical (kernel-smoothed) score distribution per ψ."""

    name = "side-channel"

    def __init__(self, score_bandwidth: float = 1.0):
        super().__init__(score_bandwidth=score_bandwidth, use_gradient=False, use_side_channels=True)
