"""Ch. 3: the differentially private advising framework (Algorithms 4-5, §3.5.2.2, Table 3.5).

A student j asks a neighbour i for advice at a state. What the teacher sends, and the student sees:

* ``teacher_q``: the teacher's Q-values aligned to the student's actions, as EUCLIDEAN DISTANCE (Algorithm 5
  lines 1-15) uses them: raw when both have the same actions (line 3); otherwise each Q_i(s, a_p) +
  Laplace(S/ε) (lines 5, 8, 12), the teacher's action missing from the student dropped (line 5), the
  student's action missing from the teacher added with Q = 0 (line 8 as the text reads it) or the one
  differing action put in the student's slot (line 12). The student computes d_E² (eq. 3.1) from these.
* ``advised_action`` (one-hot over the student's actions; all zero when d_E² ≤ d): when d_E² > d (line 19)
  the teacher draws an action from π' = Normalise(π + ξ(Q_i + Laplace(S/ε))) (lines 20-24; Normalise is
  Algorithm 4, which line 31's "Algorithm 2" means). π is the student's distribution (uniform) and ξ = 0.1.

Table 3.5: ε = 1, S = 1, rewards 2 (optimal action) and 0, d = 0.7; the student has actions A, B, C, E
and Q = 0 (experiment 1: agents that differ in one action). The student's Q-values are the broadcast: an
adversarial student chooses them (``broadcast_space``: [0, 2]^4) to make the advice tell most. Converged Q-values
equal rewards (§3.5.2.1).
Claim (§3.5.2.2): ε-DP for Q-tables that differ in one row (Tables 3.3-3.4). ``noise="fresh"`` draws each
Laplace(S/ε) of lines 5-22 anew (the text reuses the one noisy Q: ``noise="shared"``, the default).
``reference=True`` sends Q_i + Laplace(2/ε) always (2: the range of one converged Q-value) and advises from
that same vector: the textbook ε-DP release.
"""

from __future__ import annotations

import math

import numpy as np

from pgc.contracts import PrivacyClaim
from pgc.errors import UserError

from .found_pairs import FOUND_PAIRS
from .spaces import SecretSpace, index_from

NOISE_READINGS = ("shared", "fresh")
REWARD_RANGE = 2.0  # rewards 2 and 0 (Table 3.5): a converged Q-value lies in [0, 2]


def normalise(p: np.ndarray, centre: float = 0.5, floor: float = 0.001) -> np.ndarray:
    """Algorithm 4, row-wise: lift a row whose minimum d < Δ by p <- c_o - ρ(c_o - p), ρ = (c_o - Δ)/(c_o - d);
    then divide by the sum."""
    p = np.array(p, dtype=np.float64, copy=True)
    d = p.min(axis=-1, keepdims=True)
    rho = (centre - floor) / (centre - d)
    p = np.where(d < floor, centre - rho * (centre - p), p)
    return p / p.sum(axis=-1, keepdims=True)


def aligned_q(teacher_actions, teacher_q, student_actions) -> tuple[np.ndarray, bool]:
    """The teacher's Q-values in the student's action order (Algorithm 5's four cases) and whether line 3
    applies (the same actions: no noise)."""
    q = dict(zip(teacher_actions, teacher_q, strict=False))
    if set(teacher_actions) == set(student_actions):
        return np.array([q[a] for a in student_actions]), True
    missing_in_teacher = [a for a in student_actions if a not in q]
    extra_in_teacher = [a for a in teacher_actions if a not in student_actions]
    out = []
    for a in student_actions:
        if a in q:
            out.append(q[a])
        elif (
            len(teacher_actions) == len(student_actions) and len(extra_in_teacher) == 1 and len(missing_in_teacher) == 1
        ):
            out.append(q[extra_in_teacher[0]])  # line 12: a_diff2's value in a_diff1's slot
        else:
            out.append(0.0)  # line 8: the missing action added with its initial Q-value, 0
    return np.array(out, dtype=np.float64), False


def teacher_table(secret) -> tuple[list[str], np.ndarray]:
    if not isinstance(secret, dict) or "actions" not in secret or "q" not in secret:
        raise UserError('a secret is a teacher\'s Q-table: {"actions": ["A", ...], "q": [numbers]}')
    actions, q = [str(a) for a in secret["actions"]], np.asarray(secret["q"], dtype=np.float64)
    if len(set(actions)) != len(actions) or q.shape != (len(actions),) or not np.all(np.isfinite(q)):
        raise UserError("a teacher's Q-table has distinct actions and one finite Q-value per action")
    return actions, q


class AdvisingSystem:
    report_section = "published-claims"  # pgc report: the "Published claims" section

    def __init__(
        self,
        epsilon: float = 1.0,
        sensitivity: float = 1.0,
        threshold: float = 0.7,
        xi: float = 0.1,
        student_actions=("A", "B", "C", "E"),
        noise: str = "shared",
        reference: bool = False,
    ):
        if not (epsilon > 0 and math.isfinite(epsilon)) or sensitivity <= 0 or noise not in NOISE_READINGS:
            raise UserError(f"epsilon > 0, sensitivity > 0 and noise one of {NOISE_READINGS}")
        self.epsilon, self.sensitivity, self.threshold, self.xi = float(epsilon), float(sensitivity), threshold, xi
        self.student_actions = tuple(student_actions)
        self.noise, self.reference = noise, bool(reference)
        self.channels = ("teacher_q", "advised_action")
        self.claim = PrivacyClaim(self.epsilon, 0.0, self.channels)  # §3.5.2.2
        self.name = f"advising-{'laplace-reference' if reference else 'teacher'} ε={epsilon:g}" + (
            "" if noise == "shared" else " fresh-noise"
        )
        self.relation = "Tables 3.3-3.4: teacher Q-tables that differ in one row (one action's converged Q-value)"
        self.secret_space = SecretSpace(self.relation, 7, self._pair)

    def release(self, secret, n: int, rng: np.random.Generator, *, broadcast=None) -> dict[str, np.ndarray]:
        actions, q = teacher_table(secret)
        aligned, same = aligned_q(actions, q, self.student_actions)
        k = aligned.size
        scale = (REWARD_RANGE if self.reference else self.sensitivity) / self.epsilon
        noisy = aligned[None, :] + rng.laplace(0.0, scale, (n, k))
        sent = aligned[None, :].repeat(n, 0) if same and not self.reference else noisy  # line 3: raw
        student_q = self._student_q(broadcast, k)
        distance = np.sum((sent - student_q[None, :]) ** 2, axis=1)  # eq. 3.1 against the student's Q
        advice_q = (
            noisy if (self.noise == "shared" or self.reference) else aligned[None, :] + rng.laplace(0.0, scale, (n, k))
        )
        policy = normalise(np.full((n, k), 1.0 / k) + self.xi * advice_q)  # lines 20-22, Algorithm 4
        u = rng.random(n)
        chosen = (u[:, None] > np.cumsum(policy, axis=1)).sum(axis=1).clip(max=k - 1)  # line 24
        advised = np.zeros((n, k))
        asked = distance > self.threshold  # line 19
        advised[np.arange(n)[asked], chosen[asked]] = 1.0
        return {"teacher_q": sent, "advised_action": advised}

    broadcast_space = (np.zeros(4), np.full(4, REWARD_RANGE))  # the student's Q-values, which the teacher receives

    @staticmethod
    def _student_q(broadcast, k: int) -> np.ndarray:
        """The student's Q-values (the broadcast: an adversarial student chooses them); 0 by default."""
        if broadcast is None:
            return np.zeros(k)
        q = np.asarray(broadcast, dtype=np.float64).reshape(-1)
        if q.shape != (k,) or not np.all(np.isfinite(q)):
            raise UserError(f"the student's Q-values (the broadcast) are {k} finite numbers")
        return q

    def canaries(self) -> dict:
        other = {"actions": ["A", "B", "C", "D"], "q": [0.0, 0.0, 0.0, 2.0]}
        same = {"actions": list(self.student_actions), "q": [0.0, 0.0, 0.0, 2.0]}
        zero = lambda t: {"actions": t["actions"], "q": [0.0] * len(t["actions"])}  # noqa: E731
        return {
            "one row: the differing action's Q 2 vs 0": (other, zero(other)),
            "same actions as the student (line 3): one Q 2 vs 0": (same, zero(same)),
            **FOUND_PAIRS["advising"],
        }

    def describe_secret(self, secret) -> str:
        actions, q = teacher_table(secret)
        return "teacher " + " ".join(f"{a}:{v:.3g}" for a, v in zip(actions, q, strict=False))

    def _pair(self, x: np.ndarray):
        actions = list(self.student_actions)
        if x[0] >= 0.5:
            actions[-1] = "D"  # one action differs from the student's (experiment 1)
        q = [round(REWARD_RANGE * v, 6) for v in x[1:5]]
        q2 = list(q)
        q2[index_from(x[5], 4)] = round(REWARD_RANGE * x[6], 6)
        return {"actions": actions, "q": q}, {"actions": actions, "q": q2}


def system(
    epsilon: float = 1.0,
    sensitivity: float = 1.0,
    threshold: float = 0.7,
    xi: float = 0.1,
    noise: str = "shared",
    reference: bool = False,
):
    """The teacher's side of one advice at Table 3.5's setting (ε = 1, S = 1, d = 0.7)."""
    return AdvisingSystem(epsilon, sensitivity, threshold, xi, ("A", "B", "C", "E"), noise, reference)
