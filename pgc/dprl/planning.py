"""Ch. 4: differentially private multi-agent planning, what an intermediate agent releases about its local map
(Algorithms 7-8, §4.5.2, eq. 4.2, Theorem 4.3, Corollary 4.1).

A local map is a graph: nodes (bases, centres) and routes with lengths. The agent releases:

* ``degree_histogram`` (Algorithm 7): the 1K-distribution P(k), k = 1..d_max, plus Lap(ΔS·d_max/ε) per bin
  (line 6), rounded to a count ("[Lap(·)]"), with ΔS = 1 (§4.5.2.1) and d_max = 4 (Fig. 4.4(a)) public;
  ``d_max="data"`` takes d_max from the map itself, and then ``bins`` (how many bins were sent) is a channel;
* ``route_probabilities`` (Algorithm 8 line 4, §4.5.2.3, eq. 4.2): at each node, the route probabilities
  initialised in proportion to 1/length, redistributed by u'_i = exp(ε_v u_i/2) / Σ_j exp(ε_v u_j/2) with
  Δu = 1 and ε_v = ε/k_v for a node of degree k_v (the proof of Theorem 4.3), nodes in name order;
* ``fake_route_length`` (§4.5.2.1): the length of a fake route that rewiring adds, "randomly generated based
  on the average length of the existing real routes": uniform on [0.5, 1.5] × that average.

Claim (Theorem 4.3, Theorem 4.4): ε-DP with ε = 0.5 (§4.8.1) for maps that differ in one node (node privacy),
covering the topology and the lengths; maps have degrees ≤ d_max (d_max is "the maximum node degree in a map").
``relation="edge"``: maps that differ in one route's length.
``reference=True`` releases only the histogram, with Laplace noise sized for the node sensitivity derived
here: removing a node of degree d moves the node's own bin and each neighbour's degree one bin down, so
‖ΔP‖₁ ≤ 1 + 2·d_max.
"""

from __future__ import annotations

import math

import numpy as np

from pgc.contracts import PrivacyClaim
from pgc.errors import UserError
from pgc.schemas.channels import ChannelFamily, ChannelKind

from .found_pairs import FOUND_PAIRS
from .spaces import SecretSpace, index_from

MAX_NODES = 12  # route_probabilities has MAX_NODES × d_max columns (name order, zero-padded)
RELATIONS = ("node", "edge")

# Fig. 4.4(a): agent b's local map between centres A and B (degrees A 2, B 2, (b,1) 4, (b,2) 3, (b,3) 3,
# (b,4) 2, (b,5) 2, as §4.5.2.1 counts them). The text gives A~(b,1) = 50; the other lengths are chosen.
FIGURE_4_4A = {
    "nodes": ["A", "B", "b1", "b2", "b3", "b4", "b5"],
    "edges": [
        ["A", "b1", 50],
        ["A", "b2", 40],
        ["b1", "b2", 30],
        ["b1", "b3", 45],
        ["b1", "B", 60],
        ["b2", "b4", 35],
        ["b3", "b4", 25],
        ["b3", "b5", 40],
        ["b5", "B", 55],
    ],
}


def parse_map(secret) -> tuple[list[str], list[tuple[str, str, float]]]:
    """(nodes, edges) of a map ``{"nodes": [...], "edges": [[u, v, length], ...]}``; a clear error otherwise."""
    if not isinstance(secret, dict) or "edges" not in secret:
        raise UserError('a secret is a map: {"nodes": [names], "edges": [[u, v, length], ...]}')
    edges = []
    for e in secret["edges"]:
        if len(e) != 3 or not (isinstance(e[2], (int, float)) and e[2] > 0 and math.isfinite(e[2])) or e[0] == e[1]:
            raise UserError(f"an edge is [u, v, positive length] between two nodes, got {e!r}")
        edges.append((str(e[0]), str(e[1]), float(e[2])))
    nodes = sorted({str(v) for v in secret.get("nodes", [])} | {u for u, _, _ in edges} | {v for _, v, _ in edges})
    if len(nodes) > MAX_NODES:
        raise UserError(f"a map has at most {MAX_NODES} nodes")
    return nodes, edges


def degree_distribution(nodes, edges, d_max: int) -> np.ndarray:
    """The 1K-distribution: P(k) = the number of nodes of degree k, k = 1..d_max."""
    degree = {v: 0 for v in nodes}
    for u, v, _ in edges:
        degree[u] += 1
        degree[v] += 1
    return np.array([sum(1 for d in degree.values() if d == k) for k in range(1, d_max + 1)], dtype=np.float64)


def redistribute(u: np.ndarray, epsilon: float, utility_sensitivity: float = 1.0) -> np.ndarray:
    """Eq. 4.2: u'_i = exp(ε u_i / (2Δu)) / Σ_j exp(ε u_j / (2Δu))."""
    e = np.exp(epsilon * (u - u.max()) / (2.0 * utility_sensitivity))
    return e / e.sum()


def route_probabilities(nodes, edges, epsilon: float, d_max: int) -> np.ndarray:
    """Per node (name order, padded to MAX_NODES), its routes' probabilities ∝ 1/length (Algorithm 8 line 4)
    redistributed by eq. 4.2 at ε/k_v (k_v routes), in the order the routes are listed; d_max slots per node."""
    out = np.zeros((MAX_NODES, d_max))
    for slot, v in enumerate(nodes):
        lengths = np.array([w for a, b, w in edges if v in (a, b)])
        if lengths.size == 0:
            continue
        initial = (1.0 / lengths) / (1.0 / lengths).sum()
        redistributed = redistribute(initial, epsilon / lengths.size)
        out[slot, : min(d_max, lengths.size)] = redistributed[:d_max]
    return out.reshape(-1)


class PlanningMapSystem:
    report_section = "published-claims"  # pgc report: the "Published claims" section
    # the fake route's length: a length side channel (timing); the map's other channels are of no family
    channel_kinds = {"fake_route_length": ChannelKind.single(ChannelFamily.TIMING, "fake_route_length")}

    def __init__(self, epsilon: float = 0.5, d_max: int | str = 4, relation: str = "node", reference: bool = False):
        if not (epsilon > 0 and math.isfinite(epsilon)) or relation not in RELATIONS:
            raise UserError(f"epsilon > 0; relation one of {RELATIONS}")
        self.data_d_max = d_max == "data"
        if not self.data_d_max and not (isinstance(d_max, int) and d_max >= 1):
            raise UserError("d_max is a positive integer or 'data'")
        self.epsilon, self.d_max, self.relation_name = float(epsilon), 4 if self.data_d_max else d_max, relation
        self.reference = bool(reference)
        self.bins_cap = MAX_NODES - 1  # the histogram's columns when d_max is the map's own
        self.channels = (
            ("degree_histogram",)
            if reference
            else ("degree_histogram", "route_probabilities", "fake_route_length")
            + (("bins",) if self.data_d_max else ())
        )
        self.claim = PrivacyClaim(self.epsilon, 0.0, self.channels)  # Theorem 4.3 (and 4.4: lengths hidden)
        self.name = f"planning-{'laplace-reference' if reference else 'map'} ε={epsilon:g}" + (
            " d_max=data" if self.data_d_max else ""
        )
        self.relation = (
            "node privacy (Definition 4.5): maps that differ in one node and its routes"
            if relation == "node"
            else "maps that differ in one route's length"
        )
        self.secret_space = SecretSpace(self.relation, 43, _node_pair if relation == "node" else _length_pair)

    def release(self, secret, n: int, rng: np.random.Generator, *, broadcast=None) -> dict[str, np.ndarray]:
        nodes, edges = parse_map(secret)
        if self.reference:  # Laplace at the node sensitivity 1 + 2·d_max, degrees capped at d_max
            p = degree_distribution(nodes, edges, self.d_max)
            return {
                "degree_histogram": p[None, :] + rng.laplace(0.0, (1 + 2 * self.d_max) / self.epsilon, (n, self.d_max))
            }
        d_max = self.d_max
        if self.data_d_max:
            d_max = int(degree_distribution(nodes, edges, self.bins_cap).nonzero()[0].max(initial=-1) + 1) or 1
        p = degree_distribution(nodes, edges, d_max)
        noisy = np.rint(p[None, :] + rng.laplace(0.0, d_max / self.epsilon, (n, d_max)))  # ΔS = 1, line 6
        width = self.bins_cap if self.data_d_max else d_max
        hist = np.zeros((n, width))
        hist[:, :d_max] = noisy
        mean_length = float(np.mean([w for _, _, w in edges])) if edges else 0.0
        out = {
            "degree_histogram": hist,
            "route_probabilities": np.repeat(route_probabilities(nodes, edges, self.epsilon, width)[None, :], n, 0),
            "fake_route_length": mean_length * rng.uniform(0.5, 1.5, (n, 1)),
        }
        if self.data_d_max:
            out["bins"] = np.full((n, 1), float(d_max))
        return out

    def canaries(self) -> dict:
        fig = FIGURE_4_4A

        def without(name: str) -> dict:
            return {
                "nodes": [v for v in fig["nodes"] if v != name],
                "edges": [e for e in fig["edges"] if name not in e[:2]],
            }

        longer = {
            "nodes": fig["nodes"],
            "edges": [e if e[:2] != ["A", "b1"] else ["A", "b1", 60] for e in fig["edges"]],
        }
        pairs = {
            "Fig. 4.4(a) vs without (b,1)": (fig, without("b1")),
            "Fig. 4.4(a) vs without (b,5)": (fig, without("b5")),
            "Fig. 4.4(a) vs A~(b,1) 60 instead of 50": (fig, longer),
        }
        if self.relation_name == "edge":
            pairs = dict(reversed(list(pairs.items())))
        return pairs | FOUND_PAIRS["planning"]

    def describe_secret(self, secret) -> str:
        nodes, edges = parse_map(secret)
        text = f"{len(nodes)} nodes, {len(edges)} routes: " + " ".join(f"{u}-{v}:{w:g}" for u, v, w in edges)
        return text if len(text) <= 200 else text[:197] + "..."


def _random_map(x: np.ndarray, size: int = 7, max_degree: int = 4) -> dict:
    """A map on ``size`` nodes from 21 edge coordinates (an edge where ≥ 0.5, in order, unless it would give a
    node more than ``max_degree`` routes: d_max is the map's largest degree) and 21 lengths in [10, 100]."""
    pairs = [(i, j) for i in range(size) for j in range(i + 1, size)]
    degree = [0] * size
    edges = []
    for t, (i, j) in enumerate(pairs):
        if x[t] >= 0.5 and degree[i] < max_degree and degree[j] < max_degree:
            degree[i] += 1
            degree[j] += 1
            edges.append([f"n{i}", f"n{j}", round(10.0 + 90.0 * float(x[21 + t]), 3)])
    return {"nodes": [f"n{i}" for i in range(size)], "edges": edges}


def _node_pair(x: np.ndarray):
    secret = _random_map(x)
    gone = f"n{index_from(x[42], 7)}"
    return secret, {
        "nodes": [v for v in secret["nodes"] if v != gone],
        "edges": [e for e in secret["edges"] if gone not in e[:2]],
    }


def _length_pair(x: np.ndarray):
    secret = _random_map(x)
    if not secret["edges"]:
        secret["edges"] = [["n0", "n1", 50.0]]
    changed = [list(e) for e in secret["edges"]]
    t = index_from(x[42], len(changed))
    changed[t][2] = round(10.0 + 90.0 * (1.0 - float(x[21 + t % 21])), 3) + 1.0
    return secret, {"nodes": secret["nodes"], "edges": changed}


def system(epsilon: float = 0.5, d_max: int | str = 4, relation: str = "node", reference: bool = False):
    """What an intermediate agent releases at §4.8.1's ε = 0.5 (Fig. 4.4(a)'s d_max = 4, public)."""
    return PlanningMapSystem(epsilon, d_max, relation, reference)
