"""One whole trial of Algorithm 1 with eq. 22, compiled: W workers, the mechanism, the buffer, the
update, the transcript (:func:`run_trial`; :func:`pgc.a3c.trainer.train_batch` drives it)."""

from __future__ import annotations

import math

import numba as nb

from ..mechanism_codes import MECH_EXTERNAL
from .layout import (
    ALPHA_PER_STEP,
    C_AGENTS,
    C_BUF_COUNT,
    C_CANARIES,
    C_CANARIES_SUBMITTED,
    C_DONE,
    C_FIN_POS,
    C_KEPT,
    C_N_FIN,
    C_NONFINITE,
    C_PENDING_BAD,
    C_PREPARED,
    C_STARTED,
    C_STEPS,
    C_SUBMITTED,
    C_TICK,
    C_TICK_VERSION,
    C_VERSION,
    F_BETA,
    F_CLIP,
    F_EPSILON,
    F_EXPLORE_DECAY,
    F_EXPLORE_START,
    F_GAMMA,
    F_LAM,
    F_LR,
    F_MECH_SCALE,
    F_PLANTED_NOISE_FACTOR,
    F_RMS_DECAY,
    F_RMS_EPS,
    F_SCORE_SCALE,
    F_TARGET,
    I_ALPHA_CLOCK,
    I_BOOTSTRAP,
    I_BUFFER,
    I_CANARIES,
    I_CANARY_AGENT_BASE,
    I_CANARY_CRAFTED,
    I_CANARY_SPREAD,
    I_CANARY_START,
    I_CANARY_UPDATE,
    I_CAP,
    I_MEAN_LOSS,
    I_MECH,
    I_N_STEP,
    I_OPTIMIZER,
    I_PROTECT_ORDER,
    I_PROTECT_SCORE,
    I_PROTECT_TIMING,
    I_RECORD,
    I_REDUCED_DIM,
    I_REWARD,
    I_ROUNDS,
    I_SAMPLE,
    I_STOP_AT_SUCCESS,
    I_SUBMISSIONS,
    I_WINDOW,
    I_WORKERS,
    I_ZERO_INFO,
    L_ACTIVE,
    L_AGENT,
    L_CANARY,
    L_ELAPSED,
    L_ROUND,
    L_START,
    L_TERMINATED,
    L_VERSION,
    L_WAITING,
    OPTIMIZER_RMSPROP,
    R_AGENT,
    R_ARRIVAL,
    R_CANARY,
    R_NONFINITE,
    R_ROUND,
    R_START,
    R_TERMINATED,
    R_VERSION,
    R_WORKER,
    STATUS_DONE,
    STATUS_NEED_MECHANISM,
    STATUS_PAUSED,
)
from .mechanism_twins import laplace_scalar, privatize_row
from .network import finish_episode, forward, softmax2
from .physics import play_step


@nb.njit(cache=True, inline="always", error_model="numpy")
def start_episode(
    w,
    new_agent,
    icfg,
    fcfg,
    ctr,
    agent_psi,
    base_physics,
    theta,
    lane_i,
    lane_state,
    lane_phys,
    lane_alpha,
    lane_theta,
    env_gen,
    canary_psi,
    canary_theta,
):
    """Alg. 1: worker w starts an episode; its agent copies θ' ← θ (the θ after this tick's updates).

    Canary agents (``I_CANARIES`` = M > 0; one submission each): a new agent is canary k = the
    number of canaries started so far while k < M and k·S ≤ (agents started − s₀)·M, S =
    ``I_CANARY_SPREAD``, s₀ = ``I_CANARY_START``: after s₀ regular agents the M canaries are spread
    evenly over the next S agent starts (the trainer takes S = max(M, N + M − s₀ − 2W), so that the
    last canaries start while the trial still runs). Canary k plays ψ =
    ``canary_psi[k]`` greedily (α = 0) with the crafted θ ``canary_theta`` or, when not crafted, the
    current θ like every agent; it is agent ``I_CANARY_AGENT_BASE`` + k and takes no regular agent's
    number, so the regular agents' ψ_n and α are those of the run without canaries."""
    canary = -1
    if new_agent:
        m = icfg[I_CANARIES]
        k = ctr[C_CANARIES]
        begun = ctr[C_AGENTS] - icfg[I_CANARY_START]
        if k < m and begun >= 0 and k * icfg[I_CANARY_SPREAD] <= (begun + k) * m:
            canary = k
            ctr[C_CANARIES] += 1
            lane_i[w, L_AGENT] = icfg[I_CANARY_AGENT_BASE] + k
        else:
            lane_i[w, L_AGENT] = ctr[C_AGENTS]  # agents are numbered in start order
            ctr[C_AGENTS] += 1
        lane_i[w, L_ROUND] = 0
    else:  # §3.2.1: the same agent's next round
        lane_i[w, L_ROUND] += 1
        canary = lane_i[w, L_CANARY]
    lane_i[w, L_CANARY] = canary
    agent = lane_i[w, L_AGENT]
    for f in range(base_physics.shape[0]):
        lane_phys[w, f] = base_physics[f]
    if canary >= 0:
        lane_phys[w, 0] = canary_psi[canary]
        lane_alpha[w] = 0.0
    else:
        lane_phys[w, 0] = agent_psi[agent]  # ψ_n
        lane_alpha[w] = max(0.0, fcfg[F_EXPLORE_START] - agent / fcfg[F_EXPLORE_DECAY])  # §4: α = max{0, 0.5 − n/1800}
    lane_i[w, L_VERSION] = ctr[C_VERSION]
    lane_i[w, L_START] = ctr[C_TICK]
    lane_i[w, L_ELAPSED] = 0
    lane_i[w, L_ACTIVE] = 1
    for j in range(4):  # gymnasium's reset: U(-0.05, 0.05)^4
        lane_state[w, j] = env_gen.uniform(-0.05, 0.05)
    sent = canary_theta if canary >= 0 and icfg[I_CANARY_CRAFTED] != 0 else theta  # the model the agent receives
    for j in range(16):  # θ' in the kernel layout (KERNEL_ORDER)
        for i in range(4):
            lane_theta[w, 16 * i + j] = sent[4 * j + i]
    for k in range(64, sent.shape[0]):
        lane_theta[w, k] = sent[k]


@nb.njit(cache=True, nogil=True, error_model="numpy")
def run_trial(
    env_gen,
    mech_gen,
    score_gen,
    order_gen,
    icfg,
    fcfg,
    agent_psi,
    base_physics,
    theta,
    buf_sum,
    opt_state,
    ctr,
    lane_i,
    lane_state,
    lane_phys,
    lane_alpha,
    lane_theta,
    traj,
    lane_grad,
    fin,
    pending,
    noisy,
    prs_matrix,
    pause_after,
    scores,
    reported,
    rec_i,
    rec_psi,
    rec_grad,
    kept_versions,
    kept_thetas,
    canary_psi,
    canary_theta,
):
    """Run (or resume) one trial of Algorithm 1 until it ends, needs a mechanism, or pauses.

    Asynchrony: the environment-step clock. Each tick every worker plays one step; the submissions
    arriving in one tick are aggregated in worker order; then every finished worker copies the
    resulting θ for its next agent. Each submission: non-finite rule, (zero-information control),
    the mechanism, the buffer; when it holds MAX_BUF submissions, eq. 22: θ ← θ − η·mean(B).

    All state lives in the arrays passed in, so a call can return in the middle of a tick and the
    next call resumes there: with ``icfg[I_MECH] == MECH_EXTERNAL`` it returns STATUS_NEED_MECHANISM
    for every submission (``pending`` = clean row; the caller writes the noisy row into ``noisy``);
    with ``pause_after > 0`` it returns STATUS_PAUSED after about that many submissions.

    Mitigations (:mod:`pgc.a3c.protect`; all off by default, and then none of their generators is drawn
    from): ``I_PROTECT_SCORE`` — the reported score is clip(ζ, 0, cap) + Lap(``F_SCORE_SCALE``)
    from ``score_gen`` (written to ``reported``; ``scores`` keeps the true ζ), and the stopping rule
    reads the reported scores; ``I_PROTECT_TIMING`` — fixed schedule: a lane whose episode ends
    before the cap waits (plays no steps) and submits in the tick at which start + cap is reached;
    ``I_PROTECT_ORDER`` — shuffler: the tick's arrivals are permuted uniformly with ``order_gen``
    (the restarts follow the same order) and the recorded worker is −1.

    Canaries (:func:`start_episode`): ``I_SUBMISSIONS`` counts them, and once it is reached the trial
    waits (no new agents) for the canaries still playing, so every canary started submits; a canary's submission goes
    through the same mechanism, score mechanism, schedule and record as any other, and enters the
    buffer only with ``I_CANARY_UPDATE``. ``F_PLANTED_NOISE_FACTOR`` (1 unless a test plants the bug)
    multiplies the ε the compiled mechanism draws its noise for.
    """
    n_workers = icfg[I_WORKERS]
    n_submissions = icfg[I_SUBMISSIONS]
    buffer_size = icfg[I_BUFFER]
    kind = icfg[I_MECH]
    record = icfg[I_RECORD] != 0
    cap = icfg[I_CAP]
    sample_actions = icfg[I_SAMPLE] != 0
    bootstrap = icfg[I_BOOTSTRAP] != 0
    protect_score = icfg[I_PROTECT_SCORE] != 0
    protect_timing = icfg[I_PROTECT_TIMING] != 0
    protect_order = icfg[I_PROTECT_ORDER] != 0
    reward_kind = icfg[I_REWARD]
    n_step = icfg[I_N_STEP]
    mean_loss = icfg[I_MEAN_LOSS] != 0
    rmsprop = icfg[I_OPTIMIZER] == OPTIMIZER_RMSPROP
    alpha_per_step = icfg[I_ALPHA_CLOCK] == ALPHA_PER_STEP
    gamma = fcfg[F_GAMMA]
    lam = fcfg[F_LAM]
    beta = fcfg[F_BETA]
    d = theta.shape[0]
    if ctr[C_STARTED] == 0:
        ctr[C_STARTED] = 1
        for w in range(n_workers):
            start_episode(
                w,
                True,
                icfg,
                fcfg,
                ctr,
                agent_psi,
                base_physics,
                theta,
                lane_i,
                lane_state,
                lane_phys,
                lane_alpha,
                lane_theta,
                env_gen,
                canary_psi,
                canary_theta,
            )
        if record:
            kept_versions[0] = 0
            for j in range(d):
                kept_thetas[0, j] = theta[j]
            ctr[C_KEPT] = 1
    submitted_this_call = 0
    while ctr[C_DONE] == 0:
        # ---- every worker plays one step -------------------------------------------------
        if ctr[C_FIN_POS] >= ctr[C_N_FIN]:
            n_fin = 0
            for w in range(n_workers):
                if lane_i[w, L_ACTIVE] == 0:
                    # fixed schedule: a waiting lane submits in the tick that reaches start + cap
                    if lane_i[w, L_WAITING] != 0 and ctr[C_TICK] + 1 >= lane_i[w, L_START] + cap:
                        lane_i[w, L_WAITING] = 0
                        fin[n_fin] = w
                        n_fin += 1
                    continue
                z0, z1, _ = forward(
                    lane_theta, w, lane_state[w, 0], lane_state[w, 1], lane_state[w, 2], lane_state[w, 3]
                )
                if alpha_per_step:
                    lane_alpha[w] = max(0.0, fcfg[F_EXPLORE_START] - ctr[C_STEPS] / fcfg[F_EXPLORE_DECAY])
                # §4: with probability α a uniformly random action; otherwise argmax π (Alg. 1,
                # ties -> 0) or, with sample_actions, a draw from π
                if lane_alpha[w] > 0.0 and env_gen.random() < lane_alpha[w]:
                    a = 0 if env_gen.random() < 0.5 else 1
                elif sample_actions:
                    _, logp1, _, _ = softmax2(z0, z1)
                    a = 1 if env_gen.random() < math.exp(logp1) else 0
                else:
                    a = 0 if z0 >= z1 else 1
                t = lane_i[w, L_ELAPSED]
                lane_i[w, L_ELAPSED] = t + 1
                ctr[C_STEPS] += 1
                over, term, x, x_dot, th, th_dot = play_step(w, a, t, lane_state, lane_phys, traj, cap)
                if over:
                    finish_episode(
                        w,
                        traj,
                        t + 1,
                        term,
                        x,
                        x_dot,
                        th,
                        th_dot,
                        lane_theta,
                        gamma,
                        lam,
                        beta,
                        bootstrap,
                        reward_kind,
                        n_step,
                        mean_loss,
                        lane_grad,
                    )
                    lane_i[w, L_ACTIVE] = 0
                    lane_i[w, L_TERMINATED] = 1 if term else 0
                    if protect_timing and ctr[C_TICK] + 1 < lane_i[w, L_START] + cap:
                        lane_i[w, L_WAITING] = 1  # ended early: wait for the fixed submission tick
                    else:
                        fin[n_fin] = w
                        n_fin += 1
            ctr[C_TICK] += 1
            if protect_order:  # shuffler: a uniformly random order of this tick's arrivals
                for i in range(n_fin - 1, 0, -1):
                    k = min(int(order_gen.random() * (i + 1)), i)
                    tmp = fin[i]
                    fin[i] = fin[k]
                    fin[k] = tmp
            ctr[C_FIN_POS] = 0
            ctr[C_N_FIN] = n_fin
            ctr[C_TICK_VERSION] = ctr[C_VERSION]
            if n_fin == 0:
                continue
        # ---- the tick's submissions, in worker order ----------------------------------------
        while ctr[C_FIN_POS] < ctr[C_N_FIN] and ctr[C_DONE] == 0:
            w = fin[ctr[C_FIN_POS]]
            if ctr[C_PREPARED] == 0:  # non-finite rule, then the zero-information control
                bad = False
                for j in range(d):
                    pending[j] = lane_grad[w, j]
                    if not math.isfinite(pending[j]):
                        bad = True
                if bad or icfg[I_ZERO_INFO] != 0:
                    for j in range(d):
                        pending[j] = 0.0
                if bad:
                    ctr[C_NONFINITE] += 1
                ctr[C_PENDING_BAD] = 1 if bad else 0
                ctr[C_PREPARED] = 1
                if kind == MECH_EXTERNAL:
                    return STATUS_NEED_MECHANISM
            if kind != MECH_EXTERNAL:  # Alg. 2 / Alg. 3
                privatize_row(
                    kind,
                    pending,
                    noisy,
                    mech_gen,
                    fcfg[F_EPSILON] * fcfg[F_PLANTED_NOISE_FACTOR],
                    fcfg[F_CLIP],
                    icfg[I_REDUCED_DIM],
                    fcfg[F_MECH_SCALE],
                    prs_matrix,
                )
            ctr[C_PREPARED] = 0
            # aggregator: buffer, then eq. 22 (a canary's submission only with I_CANARY_UPDATE)
            applied = lane_i[w, L_CANARY] < 0 or icfg[I_CANARY_UPDATE] != 0
            if applied:
                for j in range(d):
                    buf_sum[j] += noisy[j]
                ctr[C_BUF_COUNT] += 1
            if applied and ctr[C_BUF_COUNT] == buffer_size:
                if rmsprop:  # the aggregator's RMSprop on mean(B) (a reading knob; eq. 22 is SGD)
                    rho = fcfg[F_RMS_DECAY]
                    for j in range(d):
                        mean_g = buf_sum[j] / buffer_size
                        opt_state[j] = rho * opt_state[j] + (1.0 - rho) * mean_g * mean_g
                        theta[j] -= fcfg[F_LR] * mean_g / (math.sqrt(opt_state[j]) + fcfg[F_RMS_EPS])
                        buf_sum[j] = 0.0
                else:
                    step = fcfg[F_LR] / buffer_size
                    for j in range(d):
                        theta[j] -= step * buf_sum[j]  # eq. 22: θ ← θ − η·mean(B)
                        buf_sum[j] = 0.0
                ctr[C_BUF_COUNT] = 0
                ctr[C_VERSION] += 1
            n = ctr[C_SUBMITTED]
            if lane_i[w, L_CANARY] >= 0:
                ctr[C_CANARIES_SUBMITTED] += 1
            scores[n] = lane_i[w, L_ELAPSED]
            if protect_score:  # the score's own ε-LDP mechanism, before it leaves the agent
                reported[n] = min(max(float(lane_i[w, L_ELAPSED]), 0.0), float(cap)) + laplace_scalar(
                    score_gen, fcfg[F_SCORE_SCALE]
                )
            if record:
                rec_i[n, R_AGENT] = lane_i[w, L_AGENT]
                rec_i[n, R_ROUND] = lane_i[w, L_ROUND]
                rec_i[n, R_WORKER] = -1 if protect_order else w
                rec_i[n, R_VERSION] = lane_i[w, L_VERSION]
                rec_i[n, R_START] = lane_i[w, L_START]
                rec_i[n, R_ARRIVAL] = ctr[C_TICK]
                rec_i[n, R_TERMINATED] = lane_i[w, L_TERMINATED]
                rec_i[n, R_NONFINITE] = ctr[C_PENDING_BAD]
                rec_i[n, R_CANARY] = lane_i[w, L_CANARY]
                rec_psi[n] = lane_phys[w, 0]
                for j in range(d):
                    rec_grad[n, j] = noisy[j]
            n += 1
            ctr[C_SUBMITTED] = n
            ctr[C_FIN_POS] += 1
            submitted_this_call += 1
            # the trial ends after its N-th submission, or with stop_at_success right at its first
            # success (eq. 26): later arrivals of the same tick are not applied. With canaries it ends
            # once the last canary started has submitted too (at most W submissions later)
            if n >= n_submissions:
                if ctr[C_CANARIES_SUBMITTED] >= ctr[C_CANARIES]:
                    ctr[C_DONE] = 1
            elif icfg[I_STOP_AT_SUCCESS] != 0 and n >= icfg[I_WINDOW]:
                m = icfg[I_WINDOW]
                total = 0.0
                if protect_score:
                    for i in range(n - m, n):
                        total += reported[i]
                else:
                    for i in range(n - m, n):
                        total += scores[i]
                if total / m >= fcfg[F_TARGET]:
                    ctr[C_DONE] = 1
        # ---- end of the tick: keep θ, finished workers start new agents --------------------
        if record and ctr[C_VERSION] != ctr[C_TICK_VERSION]:
            kept_versions[ctr[C_KEPT]] = ctr[C_VERSION]
            for j in range(d):
                kept_thetas[ctr[C_KEPT], j] = theta[j]
            ctr[C_KEPT] += 1
        if ctr[C_DONE] == 0:
            for i in range(ctr[C_N_FIN]):
                w = fin[i]
                if ctr[C_SUBMITTED] >= icfg[I_SUBMISSIONS]:
                    continue  # waiting for the last canaries: finished workers start no new agent
                new_agent = lane_i[w, L_ROUND] + 1 >= icfg[I_ROUNDS]
                start_episode(
                    w,
                    new_agent,
                    icfg,
                    fcfg,
                    ctr,
                    agent_psi,
                    base_physics,
                    theta,
                    lane_i,
                    lane_state,
                    lane_phys,
                    lane_alpha,
                    lane_theta,
                    env_gen,
                    canary_psi,
                    canary_theta,
                )
        ctr[C_FIN_POS] = 0
        ctr[C_N_FIN] = 0
        if pause_after > 0 and submitted_this_call >= pause_after and ctr[C_DONE] == 0:
            return STATUS_PAUSED
    return STATUS_DONE
