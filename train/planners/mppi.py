"""MPPI (model-predictive path integral control) over the simulator itself: a privileged planner.

**Privileged**: it plans on the true model and the true map (the env's own snapshot and
look-ahead, ``env.get_state()`` and ``env.lookahead``), which no deployed robot has. It is the
reference a learned policy is measured against, not a competitor.

For N environments at once, each control step:

1. K action sequences of H steps per environment: the warm-started plan ``U`` ``(N, H, A)``
   plus Gaussian noise of standard deviation ``noise``, smoothed along the horizon as an AR(1)
   process (``eps_h = smoothing * eps_{h-1} + sqrt(1 - smoothing^2) * w_h``: each sample a
   smooth manoeuvre, not jitter), clipped to [-1, 1]; sample 0 is the plan itself;
2. all N x K sequences stepped on the simulator (or its kinematic twin, ``model=twin``) from
   the current state (``Snapshot.repeat``: rows ``i K + j``), each scored by ``objective``
   (default: the map planner's cost-to-go gained by the horizon's end, below);
3. the plan becomes the softmax-weighted mean of the samples, weights ``exp((R - max R) /
   (temperature * std R))`` (the temperature relative to the spread of the returns, so one
   value suits every task), and its first action is taken; the plan shifts by one step for
   the next call (the last action repeated). A new episode starts from a zero plan.

The defaults (:class:`MPPIConfig`: 16 samples over 2 s, the cost-to-go objective, the map
planner as the guide, a plan every 4th step, temperature 0.1) are the ones measured best on a
draw of our own (BENCHMARKS.md, "MPPI as the field drives it").

What a sample's return measures (``objective``): the env's discounted rewards (``reward``);
the straight distance to the goal it gained (``progress``); or the map planner's cost-to-go it
gained to the horizon's end (``cost_to_go``, :mod:`train.planners.path`): a terminal cost that
sees an obstacle or a trench past the horizon, where the straight distance leads into it. The
two progress objectives add ``END_BONUS`` for the goal and take it for a fatal end, and may
charge a low stability margin (``stability``). The noise may live on a few control knots,
linear between them (``knots``), and a plan may be refined over several ``iterations``, each
sampling around the last one's weighted mean with annealed noise (as DIAL-MPC does).

``replan`` k > 1 plans every k-th call and plays the plan's next actions in between (k times
cheaper; the noise is drawn only on planning calls). ``guide`` (a baseline's name, ``path``
(the default) or ``none``) adds an ancillary controller's suggestion: sample 1
of each row holds that policy's current action over the whole horizon (no noise), and a new
episode's plan starts from it instead of zeros. The planner then chooses between the guide's
line and its own samples by their simulated returns; the guide only proposes.

Rows that no longer matter (a suite's task whose counted episode has ended) can be left out:
set ``planner.active`` to an ``(N,)`` bool mask (``train.bench`` does) and only those rows are
planned, on a look-ahead of the active count rounded up to a multiple of ``ceil(N / 8)`` rows
(at most 8 look-ahead sizes, so at most 8 second simulators); the others get a zero action.
The noise is drawn for all N rows either way, so a row's samples do not depend on the others'.

Why not ``pytorch_mppi`` or TorchRL's ``MPPIPlanner``: ``pytorch_mppi.MPPI`` plans one system
(one state vector; its K samples are its only batch), so N environments would be N planners
stepped one after another; TorchRL's planner needs a TorchRL ``EnvBase`` model env over
tensordicts and clones it per call. Here the N x K rollouts are one batched look-ahead on the
env's own compiled step, sharing its maps.

    from train.planners.baselines import baseline
    act = baseline("mppi", env, seed=0)               # act(obs) -> (N, A) actions
    act = baseline("mppi:K=32,seconds=1.0,model=twin", env, seed=0)  # faster: the twin
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from offroad_env.surrogate import Surrogate
from train.planners.options import parse_options as parse_named
from train.planners.scoring import end_flags, progress as gained

__all__ = ["MPPIConfig", "MPPI", "mppi_policy", "parse_options", "OBJECTIVES", "MODELS",
           "UPDATES", "END_BONUS"]

#: what a sample's return measures (:class:`MPPIConfig`)
OBJECTIVES = ("reward", "progress", "cost_to_go")
#: how a plan is made from the scored samples (:class:`MPPIConfig`)
UPDATES = ("mean", "best")
#: what the samples are rolled on (:class:`MPPIConfig`)
MODELS = ("env", "twin")
#: the ``progress`` objective's bonus for the goal and penalty for a fatal end [m equivalent]
END_BONUS = 10.0


@dataclass(frozen=True)
class MPPIConfig:
    """``samples`` K, ``seconds`` (the horizon in simulated seconds, rounded to steps) or
    ``horizon`` H [steps] (when > 0 it is used and ``seconds`` is not), ``temperature`` (relative to the returns' spread), ``noise``
    (action standard deviation, actions in [-1, 1]), ``smoothing`` (the noise's AR(1)
    coefficient along the horizon, in [0, 1)), ``gamma`` (discount), ``seed``;

    * ``objective``: ``reward`` (the env's rewards), ``progress`` (the straight distance to the
      goal gained) or ``cost_to_go`` (the map planner's cost-to-go gained to the horizon's end,
      :mod:`train.planners.path`: a terminal cost that sees the obstacles past the horizon);
      both with ``END_BONUS`` for the goal and against a fatal end;
    * ``stability``: with a progress objective, the cost of a low stability margin: ``stability
      x`` the mean over the horizon of ``max(0, 1 - margin / margin_deg)`` (the force-angle
      margin of the ``stability`` observation term);
    * ``knots``: 0, noise at every step (AR(1)); ``k >= 2``, noise at ``k`` control knots spread
      over the horizon, linear between them (a smooth manoeuvre in fewer dimensions);
    * ``iterations``, ``anneal``: plans per control step (DIAL-MPC's annealing, as CEM refines
      its mean): each further iteration samples around the last one's weighted mean, with its
      noise scaled by ``anneal`` once more;
    * ``model``: what the samples are rolled on: ``env`` (the env itself) or ``twin`` (its
      kinematic twin over the same map, :class:`offroad_env.surrogate.Surrogate`: the physical
      model's actions on a ground-following model, several times cheaper a step);
    * ``update``: ``mean``, the plan becomes the samples' softmax-weighted mean (MPPI); ``best``,
      the best sample (predictive sampling, as mjpc and Hydrax have it: no averaging, so no
      pull of the clipped samples toward a slower mean)."""

    samples: int = 16
    horizon: int = 0
    temperature: float = 0.1
    noise: float = 0.5
    smoothing: float = 0.6
    gamma: float = 0.99
    seed: int = 0
    guide: str = "path"
    replan: int = 4
    objective: str = "cost_to_go"
    seconds: float = 2.0
    stability: float = 0.0
    margin_deg: float = 20.0
    knots: int = 0
    iterations: int = 1
    anneal: float = 0.5
    model: str = "env"
    update: str = "mean"

    def __post_init__(self):
        for name in ("samples", "horizon", "replan", "iterations"):
            v, lo = getattr(self, name), 0 if name == "horizon" else 1
            if not isinstance(v, int) or isinstance(v, bool) or v < lo:
                raise ValueError(f"MPPI {name} must be an int >= {lo}, got {v!r}")
        if not self.horizon and not self.seconds:
            raise ValueError("MPPI needs a horizon: seconds > 0 or horizon >= 1 steps")
        if not isinstance(self.knots, int) or isinstance(self.knots, bool) or self.knots < 0 \
                or self.knots == 1:
            raise ValueError(f"MPPI knots must be 0 (every step) or an int >= 2, got "
                             f"{self.knots!r}")
        for name, lo in (("seconds", 0.0), ("stability", 0.0), ("margin_deg", 0.0),
                         ("anneal", 0.0)):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v >= lo) or (
                    name in ("margin_deg", "anneal") and v <= 0):
                raise ValueError(f"MPPI {name} must be a finite number >= 0 (> 0 for "
                                 f"margin_deg and anneal), got {v!r}")
        if self.stability > 0 and self.objective == "reward":
            raise ValueError("MPPI stability weighs a progress objective's margin cost; give "
                             "objective=progress or cost_to_go")
        if self.horizon and self.replan > self.horizon:
            raise ValueError(f"MPPI replan ({self.replan}) must not exceed the horizon "
                             f"({self.horizon})")
        if self.update not in UPDATES:
            raise ValueError(f"MPPI update must be one of {UPDATES}, got {self.update!r}")
        if self.model not in MODELS:
            raise ValueError(f"MPPI model must be one of {MODELS}, got {self.model!r}")
        if self.objective not in OBJECTIVES:
            raise ValueError(f"MPPI objective must be one of {OBJECTIVES}, got "
                             f"{self.objective!r}")
        if not isinstance(self.guide, str):
            raise ValueError(f"MPPI guide must be a baseline's name, got {self.guide!r}")
        if self.guide == "none":  # the command line's way to say no guide
            object.__setattr__(self, "guide", "")
        if self.guide and self.samples < 2:
            raise ValueError("MPPI with a guide needs samples >= 2 (sample 1 is the guide's)")
        for name, lo, hi in (("temperature", 0.0, math.inf), ("noise", 0.0, math.inf),
                             ("smoothing", 0.0, 1.0), ("gamma", 0.0, 1.0 + 1e-12)):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and lo <= v < hi) or (
                    name in ("temperature", "noise") and v <= 0):
                raise ValueError(f"MPPI {name} must be in [{lo}, {hi}) (and > 0 for "
                                 f"temperature and noise), got {v!r}")


def parse_options(text: str) -> dict:
    """``"samples=32,horizon=15"`` (or ``K=32,H=15``) as MPPIConfig keywords."""
    types = {f: type(getattr(MPPIConfig(), f)) for f in MPPIConfig.__dataclass_fields__}
    return parse_named(text, types, {"K": "samples", "H": "horizon", "T": "temperature"}, "MPPI")


class MPPI:
    """The planner for a vector env (see the module docstring); call it with the current
    observations (unused: it reads the state) to get ``(N, A)`` actions."""

    privileged = True

    def __init__(self, env, config: MPPIConfig = MPPIConfig(), guide=None):
        self.env = env
        self.face = env.unwrapped
        self.cfg = c = config
        sim = self.face.sim
        self.n, self.a = sim.n, sim.action_dim
        self.dtype, self.device = sim.dtype, sim.device
        fc = self.face.config
        #: the horizon [steps]: ``horizon``, or ``seconds`` of simulated time rounded
        self.horizon = c.horizon or max(1, int(round(c.seconds / (fc.dt * fc.action_repeat))))
        if c.replan > self.horizon:
            raise ValueError(f"MPPI replan ({c.replan}) must not exceed the horizon "
                             f"({self.horizon} steps)")
        H = self.horizon
        self.plan = torch.zeros(self.n, H, self.a, dtype=self.dtype, device=self.device)
        self.gen = torch.Generator(self.device).manual_seed(c.seed)
        self.disc = c.gamma ** torch.arange(H, dtype=self.dtype, device=self.device)
        if bool(c.guide) != (guide is not None):
            raise ValueError(f"MPPI config guide {c.guide!r} needs its policy given as guide "
                             "(train.planners.baselines.baseline builds both)" if c.guide else
                             "a guide policy was given but the config names none")
        #: the guide's policy ``act(obs) -> (N, A)`` (None: no guide)
        self.guide = guide
        #: the map planner whose cost-to-go scores the horizon's end (``cost_to_go``)
        self.field = None
        if c.objective == "cost_to_go":
            self.field = guide if hasattr(guide, "cost_to_go_at") else None
            if self.field is None:
                from train.planners.path import PathPolicy
                self.field = PathPolicy(env, None)
        self._margin = None
        if c.stability > 0:
            where = {name: a for name, a, _ in self.face.obs_layout}
            if "stability" not in where:
                raise ValueError("MPPI stability reads the 'stability' observation term; this "
                                 f"env has {sorted(where)} (OffroadTraverse-v1 has it; another "
                                 "id takes it in obs_terms)")
            self._margin = where["stability"]
        #: where the samples are rolled: the env, or its kinematic twin (``model``)
        self.model = self.face
        if c.model == "twin":
            self.model = Surrogate(env)
        #: ``(N,)`` bool: the rows to plan (None: all); the others get a zero action
        self.active: torch.Tensor | None = None
        self._calls = 0

    def _noise(self, N: int, K: int, H: int, A: int) -> torch.Tensor:
        """``(N, K, H, A)`` the samples' noise (:class:`MPPIConfig`: AR(1) along the horizon, or
        linear between ``knots``), standard deviation ``noise``."""
        c = self.cfg
        if c.knots:
            w = torch.randn(N, K, c.knots, A, generator=self.gen, dtype=self.dtype,
                            device=self.device)
            t = torch.linspace(0.0, c.knots - 1.0, H, dtype=self.dtype, device=self.device)
            i0 = t.floor().long().clamp(max=c.knots - 2)
            f = (t - i0).view(1, 1, H, 1)
            return (w[:, :, i0] * (1.0 - f) + w[:, :, i0 + 1] * f) * c.noise
        w = torch.randn(N, K, H, A, generator=self.gen, dtype=self.dtype, device=self.device)
        eps = torch.empty_like(w)
        eps[:, :, 0] = w[:, :, 0]
        keep = math.sqrt(1.0 - c.smoothing ** 2)
        for h in range(1, H):
            eps[:, :, h] = c.smoothing * eps[:, :, h - 1] + keep * w[:, :, h]
        return eps * c.noise

    def __call__(self, obs=None) -> torch.Tensor:
        c, N, K, H, A = self.cfg, self.n, self.cfg.samples, self.horizon, self.a
        fresh = self.face.state_view().steps == 0  # a new episode: a new plan
        g = None
        if self.guide is not None:
            g = self.guide(obs).to(self.dtype).clamp(-1.0, 1.0)  # (N, A)
            first = g.unsqueeze(1).expand(N, H, A)
        else:
            first = torch.zeros_like(self.plan)
        self.plan = torch.where(fresh.view(N, 1, 1), first, self.plan)
        self._calls += 1
        if (self._calls - 1) % c.replan:  # between plans: play the plan
            act = self.plan[:, 0].clone()
            self.plan = torch.cat((self.plan[:, 1:], self.plan[:, -1:]), 1)
            if self.active is not None:
                act = torch.where(self.active.to(self.device).view(N, 1), act, 0.0)
            return act
        snap = self.face.get_state() if self.model is self.face else self.model.snapshot()
        rows, m = None, N
        if self.active is not None:
            act_rows = torch.nonzero(self.active.to(self.device)).flatten()
            m = int(act_rows.numel())
            if m == 0:
                return torch.zeros(N, A, dtype=self.dtype, device=self.device)
            if m < N:  # pad to a multiple of ceil(N / 8) with copies of the first active row
                q = -(-N // 8)
                size = min(N, -(-m // q) * q)
                rows = torch.cat((act_rows, act_rows[:1].expand(size - m)))
                snap = snap.select(rows)
                g = None if g is None else g[rows]
        plan = self.plan if rows is None else self.plan[rows]
        for it in range(c.iterations):
            eps = self._noise(N, K, H, A)  # drawn for all N rows: a row's own samples
            eps = eps if rows is None else eps[rows]
            if it:
                eps = eps * c.anneal ** it
            eps[:, 0] = 0.0  # sample 0: the plan itself
            V = (plan.unsqueeze(1) + eps).clamp(-1.0, 1.0)  # (M, K, H, A)
            if g is not None:  # sample 1: the guide's action held over the horizon
                V[:, 1] = g.unsqueeze(1)
            M = V.shape[0]
            ro = self.model.lookahead(snap.repeat(K), V.permute(2, 0, 1, 3).reshape(H, M * K, A))
            if c.objective == "reward":
                ret = (ro.reward * self.disc.unsqueeze(1)).sum(0).view(M, K)
            else:
                ret = self._progress(ro, rows, M, K)
            spread = ret.std(1, keepdim=True).clamp_min(1e-6)
            weights = torch.softmax((ret - ret.amax(1, keepdim=True)) / (c.temperature * spread),
                                    1)
            if c.update == "best":
                plan = V[torch.arange(M, device=V.device), ret.argmax(1)]
            else:
                plan = (weights.view(M, K, 1, 1) * V).sum(1)
        #: the last call's look-ahead (rows ``i K + j`` of the planned rows), sample weights
        #: ``(M, K)`` and samples ``(M, K, H, A)``, for plots
        self.last_rollout, self.last_weights, self.last_samples = ro, weights, V
        shifted = torch.cat((plan[:, 1:], plan[:, -1:]), 1)
        if rows is None:
            self.plan = shifted
            return plan[:, 0].clone()
        act = torch.zeros(N, A, dtype=self.dtype, device=self.device)
        act[rows[:m]] = plan[:m, 0]
        self.plan[rows[:m]] = shifted[:m]
        return act

    def _progress(self, ro, rows, M: int, K: int) -> torch.Tensor:
        """``(M, K)`` returns of the ``progress`` and ``cost_to_go`` objectives
        (:class:`MPPIConfig`)."""
        live = torch.arange(self.n, device=self.device) if rows is None else rows
        goal, fatal, _ = end_flags(ro.end_reason[-1])
        ret = (gained(self.face.state_view(), ro, live.repeat_interleave(K), self.field)
               + torch.where(goal, END_BONUS, 0.0) - torch.where(fatal, END_BONUS, 0.0))
        if self._margin is not None:
            margin = ro.obs[:, :, self._margin].to(torch.float64)  # (H, M K)
            short = (1.0 - margin / math.radians(self.cfg.margin_deg)).clamp(min=0.0)
            ret = ret - self.cfg.stability * short.mean(0)
        return ret.to(self.dtype).view(M, K)


def mppi_policy(env, seed: int = 0, guide_policy=None, **options) -> MPPI:
    """The MPPI planner for ``env`` (a vector env of this package) with MPPIConfig
    ``options``; ``guide_policy``: the policy named by ``options["guide"]`` (built by
    :func:`train.planners.baselines.baseline`, which is how a ``"mppi:...,guide=path"`` name
    gets one)."""
    if not hasattr(env.unwrapped, "lookahead"):
        raise ValueError("MPPI plans on an offroad_env vector env (it needs get_state and "
                         "lookahead)")
    return MPPI(env, MPPIConfig(**dict({"seed": seed}, **options)), guide_policy)
