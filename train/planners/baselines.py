"""The baseline policies, shared by ``evaluate`` and the OffroadBench suite.

A baseline is built for an environment, ``make(env, seed) -> act``, where ``act(obs (M, D)
tensor) -> (M, A) actions``; :data:`BASELINES` names them. They read the observation layout of
``env.unwrapped.obs_layout`` and nothing else of the env:

* ``random``: uniform actions in [-1, 1] from a seeded generator;
* ``heuristic``: steer at the goal (:func:`steer_at_goal`): turn rate ``gain * bearing``, full
  speed within 45 degrees of the goal's bearing, 0.3 otherwise;
* ``careful``: the same, but where the ground ahead (a plane fitted to the height scan) is
  steeper than ``steep_deg`` or the stability margin is below ``margin_deg``, slow to 0.3 and
  turn towards the flatter half of the scan.
* ``physics``: reads the physics the env reports (:func:`physics_policy`): slows and turns down
  the fall line where the force-angle margin is low, and takes ground steeper than friction
  climbs on the heading that keeps the grade at ``atan(mu)``.

Speed and turn rate become actions by the vehicle model's action meaning (:func:`drive`):
``(v, w)`` for unicycle; ``(left, right)`` wheel speeds for skid-steer and the physical model
(``rigid_body`` with skid steering).
"""

from __future__ import annotations

import math
from typing import Callable

import torch

from train.planners.options import parse_options

__all__ = ["BASELINES", "PLANNERS", "baseline", "is_policy_name", "reverse_policy", "skid_steered", "random_policy", "heuristic_policy",
           "careful_policy", "physics_policy", "steer_at_goal", "drive"]

#: the models the goal-steering baselines drive, with what their action components are (the
#: physical model with skid steering takes the skid-steer wheel speeds)
DRIVEN = ("unicycle", "skid_steer", "rigid_body")
#: how near the goal [m] a biased baseline (``bias=``) stops aiming to the side of it
BIAS_UNTIL = 3.0


#: how an env gets each observation term a baseline reads
TERM_SOURCES = {
    "goal": "a navigation task ('nav', 'nav_rough' or 'traverse', whose obs_terms hold 'goal')",
    "height_scan": "height_scan=HeightScanConfig() (offroad_env.HeightScanConfig; the name in "
                   "obs_terms alone is refused)",
    "stability": "'stability' in obs_terms",
}


def _layout(env, *terms: str, who: str) -> dict[str, tuple[int, int]]:
    """``{term: (start, stop)}`` of the env's observation; ValueError naming every term of
    ``terms`` it lacks and how to get each."""
    layout = {name: (a, b) for name, a, b in env.unwrapped.obs_layout}
    missing = [t for t in terms if t not in layout]
    if missing:
        raise ValueError(
            f"the {who} reads the observation terms {list(terms)}; this env lacks {missing}: "
            + "; ".join(f"{t}: {TERM_SOURCES[t]}" for t in missing)
            + ". OffroadTraverse-v1 (make_config('traverse')) has them all")
    return layout


def skid_steered(cfg) -> bool:
    """Whether the env of SimConfig ``cfg`` takes wheel speeds ``(left, right)`` as its action:
    the ``skid_steer`` model, or ``rigid_body`` with skid steering."""
    return cfg.dynamics == "skid_steer" or (
        cfg.dynamics == "rigid_body" and getattr(cfg.dynamics_params, "steering", "skid") == "skid")


def _skid(env, who: str) -> bool:
    cfg = env.unwrapped.config
    dynamics = cfg.dynamics
    if dynamics not in DRIVEN:
        raise ValueError(f"the {who} drives {' or '.join(DRIVEN)} vehicles, not {dynamics!r}")
    if dynamics == "rigid_body" and not skid_steered(cfg):
        raise ValueError(f"the {who} drives the rigid_body model with skid steering, not "
                         f"{cfg.dynamics_params.steering!r}")
    return skid_steered(cfg)


def drive(v: torch.Tensor, w: torch.Tensor, skid: bool) -> torch.Tensor:
    """``(M, 2)`` actions for normalised speed ``v`` and turn rate ``w`` ``(M,)``: ``(v, w)``,
    or the skid-steer wheel speeds ``(v - w, v + w)`` clipped to [-1, 1]."""
    if skid:
        return torch.stack(((v - w).clamp(-1, 1), (v + w).clamp(-1, 1)), 1)
    return torch.stack((v, w), 1)


def steer_at_goal(goal_b: torch.Tensor, gain: float, bias: float = 0.0,
                  bias_until: float = BIAS_UNTIL) -> tuple[torch.Tensor, torch.Tensor]:
    """``(v, w, bearing)`` for a goal ``goal_b`` ``(M, 2)`` in the yaw-aligned body frame:
    ``w = clip(gain * bearing)``, ``v = 1`` within 45 degrees of the bearing, else 0.3.
    ``bias`` [rad]: head that far to the left (> 0) of the goal while it is farther than
    ``bias_until`` [m] (a constant offset of the bearing swings the path out to one side and
    back, a detour; the returned bearing is the biased one)."""
    bearing = torch.atan2(goal_b[:, 1], goal_b[:, 0])
    if bias:
        far = torch.linalg.vector_norm(goal_b, dim=1) > bias_until
        bearing = torch.where(far, torch.remainder(bearing + bias + math.pi, 2 * math.pi)
                              - math.pi, bearing)
    w = (gain * bearing).clamp(-1.0, 1.0)
    v = torch.where(bearing.abs() < math.pi / 4, torch.ones_like(w), 0.3 * torch.ones_like(w))
    return v, w, bearing


def random_policy(seed: int, action_dim: int = 2) -> Callable:
    """Uniform actions in [-1, 1] from a generator seeded with ``seed``."""
    g = torch.Generator().manual_seed(seed)

    def act(obs):
        return torch.rand(obs.shape[0], action_dim, generator=g).to(obs) * 2 - 1
    return act


def heuristic_policy(env, gain: float = 2.0, speed: float = 1.0, bias: float = 0.0) -> Callable:
    """Drive at the goal (:func:`steer_at_goal`). Needs the ``goal`` observation term.
    ``speed`` scales every speed chosen; ``bias`` [deg] heads that far to the left of the goal
    (a detour) until within :data:`BIAS_UNTIL` of it."""
    g0 = _layout(env, "goal", who="heuristic")["goal"][0]
    skid = _skid(env, "heuristic")
    bias_r = math.radians(bias)

    def act(obs):
        v, w, _ = steer_at_goal(obs[:, g0:g0 + 2], gain, bias_r)
        return drive(v * speed if speed != 1.0 else v, w, skid)
    return act


def _scan_grid(env) -> tuple[torch.Tensor, torch.Tensor]:
    """The height scan's points ``(X, Y)`` ``(P,)`` [m] from the scan's centre, along the
    yaw-aligned body axes, in the observation's order (a plane's slopes fitted to them are the
    ground's in the body frame)."""
    scan = env.unwrapped.config.height_scan
    nx, ny = scan.shape
    gx = (torch.arange(nx, dtype=torch.float32) - 0.5 * (nx - 1)) * scan.resolution
    gy = (torch.arange(ny, dtype=torch.float32) - 0.5 * (ny - 1)) * scan.resolution
    return tuple(t.reshape(-1) for t in torch.meshgrid(gx, gy, indexing="ij"))


def physics_policy(env, grade_share: float = 1.0, margin_deg: float = 15.0,
                   gain: float = 2.0, speed: float = 1.0, bias: float = 0.0) -> Callable:
    """A baseline that reads the physics the env reports, for the physical model:

    * **tipping:** where the force-angle margin (from the true contact forces) is below
      ``margin_deg``, it slows to 0.3 and turns down the fall line of the ground ahead;
    * **grade:** a plane fitted to the height scan gives the uphill gradient ``g`` (body frame).
      Where the grade of the goal's heading, ``|g| cos(angle to g)``, is past ``tan(grade_share
      * atan(mu))`` (``mu`` the env's friction: no friction climbs it straight), it takes the
      nearer of the two headings at that grade, as a switchback does: round the flank of a hill
      rather than over its top. (On a uniform plane this gains nothing: holding the body
      against the slope takes the same friction in every direction.) Downhill past it, it
      slows to 0.5.

    Measured on offroad-bench-v1 (BENCHMARKS.md): the margin rule is what moves the results
    (boulders), the grade rule changes little. Needs the ``goal``, ``height_scan`` and
    ``stability`` terms (the traverse task has them). ``speed`` and ``bias``: as
    :func:`heuristic_policy`'s."""
    layout = _layout(env, "goal", "height_scan", "stability", who="physics baseline")
    bias_r = math.radians(bias)
    skid = _skid(env, "physics baseline")
    cfg = env.unwrapped.config
    GX, GY = _scan_grid(env)
    GX = GX + cfg.height_scan.forward_offset  # from base_link, where the scan is taken
    tan_grade = math.tan(grade_share * math.atan(cfg.ground_mu))
    low = math.radians(margin_deg)
    g0, (s0, s1), m0 = layout["goal"][0], layout["height_scan"], layout["stability"][0]
    A = torch.stack((GX, GY, torch.ones_like(GX)), 1).double()
    fit = torch.linalg.pinv(A)[:2].float()  # (2, P): the plane's slopes from the scan
    wrap = lambda t: torch.remainder(t + math.pi, 2 * math.pi) - math.pi  # noqa: E731

    def act(obs):
        h = obs[:, s0:s1]
        a, b = fit.to(h) @ h.T  # dz/dx, dz/dy, body frame
        grad = torch.hypot(a, b)
        up = torch.atan2(b, a)  # the uphill direction, relative to the heading
        v, w, bearing = steer_at_goal(obs[:, g0:g0 + 2], gain, bias_r)
        grade = grad * torch.cos(wrap(bearing - up))
        off = torch.acos((tan_grade / grad.clamp_min(1e-6)).clamp(max=1.0))
        d1, d2 = wrap(up + off), wrap(up - off)
        diag = torch.where(wrap(d1 - bearing).abs() < wrap(d2 - bearing).abs(), d1, d2)
        head = torch.where(grade > tan_grade, diag, bearing)
        w = (gain * head).clamp(-1.0, 1.0)
        v = torch.where(head.abs() < math.pi / 4, torch.ones_like(v), torch.full_like(v, 0.3))
        v = torch.where(grade < -tan_grade, torch.minimum(v, torch.full_like(v, 0.5)), v)
        risky = obs[:, m0] < low
        w = torch.where(risky, (gain * wrap(up + math.pi)).clamp(-1.0, 1.0), w)
        v = torch.where(risky, torch.full_like(v, 0.3), v)
        return drive(v * speed if speed != 1.0 else v, w, skid)
    return act


def careful_policy(env, margin_deg: float = 30.0, steep_deg: float = 25.0,
                   gain: float = 2.0, speed: float = 1.0, bias: float = 0.0) -> Callable:
    """Slope-aware: as :func:`heuristic_policy`, but where the ground ahead is steeper than
    ``steep_deg`` or the stability margin is below ``margin_deg``, slow to 0.3 and turn towards
    the flatter half of the scan. Needs the ``goal``, ``height_scan`` and ``stability``
    observation terms (the traverse task has them). ``speed`` and ``bias``: as
    :func:`heuristic_policy`'s."""
    layout = _layout(env, "goal", "height_scan", "stability", who="careful heuristic")
    bias_r = math.radians(bias)
    skid = _skid(env, "careful heuristic")
    GX, GY = _scan_grid(env)
    left, right = GY > 0, GY < 0
    g0 = layout["goal"][0]
    s0, s1 = layout["height_scan"]
    m0 = layout["stability"][0]
    tan_steep = math.tan(math.radians(steep_deg))
    low = math.radians(margin_deg)

    def tilt(h, sel):
        """Steepness of the plane fitted to the scan points ``sel``."""
        x, y = GX[sel].to(h), GY[sel].to(h)
        x, y = x - x.mean(), y - y.mean()
        hs = h[:, sel] - h[:, sel].mean(1, keepdim=True)
        return torch.hypot((hs * x).sum(1) / (x * x).sum(), (hs * y).sum(1) / (y * y).sum())

    def act(obs):
        h = obs[:, s0:s1]
        risky = (tilt(h, torch.ones_like(left)) > tan_steep) | (obs[:, m0] < low)
        v, w, _ = steer_at_goal(obs[:, g0:g0 + 2], gain, bias_r)
        away = torch.where(tilt(h, left) < tilt(h, right), 1.0, -1.0).to(h)
        w = torch.where(risky, away, w)
        v = torch.where(risky, torch.full_like(v, 0.3), v)
        return drive(v * speed if speed != 1.0 else v, w, skid)
    return act


#: ``{name: make(env, seed) -> act}``: every baseline, by the name the CLIs take
BASELINES: dict[str, Callable] = {
    "random": lambda env, seed: random_policy(seed, env.unwrapped.action_space.shape[-1]),
    "heuristic": lambda env, seed: heuristic_policy(env),
    "careful": lambda env, seed: careful_policy(env),
    "physics": lambda env, seed: physics_policy(env),
}


#: the privileged planners a policy name may start with (``"mppi:K=32,H=15"``)
PLANNERS = ("mppi", "rollout", "path")
#: the options a goal-steering baseline takes by name (``"heuristic:speed=0.5,bias=25"``)
_OPTIONS = {"heuristic": ("gain", "speed", "bias"),
            "careful": ("gain", "speed", "bias", "margin_deg", "steep_deg"),
            "physics": ("gain", "speed", "bias", "margin_deg", "grade_share")}
_MAKERS = {"heuristic": heuristic_policy, "careful": careful_policy, "physics": physics_policy}


def is_policy_name(name: str) -> bool:
    """Whether ``name`` names a baseline or a planner (options after a colon), not a file."""
    head = name.split(":")[0]
    return head in BASELINES or head in PLANNERS


def _options(name: str, text: str) -> dict:
    out = parse_options(text, {k: float for k in _OPTIONS[name]}, {}, name)
    if not 0.0 < out.get("speed", 1.0) <= 1.0:
        raise ValueError(f"{name} speed must be in (0, 1], got {out['speed']}")
    if not -90.0 < out.get("bias", 0.0) < 90.0:
        raise ValueError(f"{name} bias must be in (-90, 90) degrees, got {out['bias']}")
    return out


def baseline(name: str, env, seed: int) -> Callable:
    """The baseline ``name`` built for ``env``; ValueError naming the known ones.
    ``"heuristic:speed=0.5,bias=25"`` (and careful, physics) sets its keyword options;
    ``"mppi"`` or ``"mppi:samples=32,horizon=15,..."`` is the privileged MPPI planner
    (:mod:`train.planners.mppi`), ``"rollout:replan=20,..."`` the privileged rollout planner
    (:mod:`train.planners.rollout`), ``"path"`` or ``"path:lookahead=0.8,..."`` the privileged
    map planner (:mod:`train.planners.path`)."""
    head, sep, text = name.partition(":")
    if head == "mppi":
        from train.planners.mppi import MPPIConfig, mppi_policy, parse_options
        opts = parse_options(text)
        g = MPPIConfig(**opts).guide
        guides = [b for b in BASELINES if b != "random"] + ["path"]
        if g and g not in guides:
            raise ValueError(f"MPPI guide must be one of {guides}, got {g!r}")
        return mppi_policy(env, seed, baseline(g, env, seed) if g else None, **opts)
    if head == "rollout":
        return _rollout(text, env, seed)
    if head == "path":
        from train.planners.path import parse_options as path_options, path_policy
        skid = _skid(env, "path baseline")
        return path_policy(env, lambda v, w: drive(v, w, skid), **path_options(text))
    if head not in BASELINES or (sep and head not in _OPTIONS):
        raise ValueError(f"unknown baseline {name!r}; known: {tuple(BASELINES)} (options "
                         f"for {tuple(_OPTIONS)}), or a planner {PLANNERS}")
    if sep:
        return _MAKERS[head](env, **_options(head, text))
    return BASELINES[name](env, seed)


def reverse_policy(env, speed: float = 0.6) -> Callable:
    """Drive straight back at ``speed`` of full speed (a rollout candidate's back-off)."""
    skid = skid_steered(env.unwrapped.config)

    def act(obs):
        z = torch.zeros(obs.shape[0], dtype=obs.dtype, device=obs.device)
        return drive(z - speed, z, skid)
    return act


def _rollout(text: str, env, seed: int):
    """The rollout planner of options ``text`` with its library's policies built for ``env``
    (``"reverse"``: :func:`reverse_policy`)."""
    from train.planners.rollout import LIBRARIES, RolloutConfig, RolloutPlanner, parse_options
    cfg = RolloutConfig(**parse_options(text))
    built = {}
    for name in dict.fromkeys(n for pair in LIBRARIES[cfg.library] for n in pair):
        try:
            built[name] = reverse_policy(env) if name == "reverse" else baseline(name, env, seed)
        except ValueError as exc:
            raise ValueError(f"rollout library {cfg.library!r}: {exc} (library=straight needs "
                             "only the goal term)") from None
    return RolloutPlanner(env, cfg, [(built[f], built[t]) for f, t in LIBRARIES[cfg.library]])
