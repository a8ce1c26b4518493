"""The kinematic twin of the physical model (offroad_env.surrogate): the live rows' state carried
over, and the same actions driving the same way on flat hard ground."""

import pytest
import torch

import terrain
from offroad_env import OffroadVectorEnv
from offroad_env.physics.rigid_params import RigidBodyParams
from offroad_env.surrogate import Surrogate


def _env(n=2, **kw):
    return OffroadVectorEnv(num_envs=n, dynamics="rigid_body", max_episode_steps=400,
                            terrain=terrain.FlatConfig(size=(40.0, 40.0),
                                                       resolution=(0.25, 0.25)),
                            num_maps=1, **kw)


def test_the_twin_starts_from_the_live_state_and_drives_as_the_physical_model_on_flat_ground():
    """After 10 steps of driving, the twin's snapshot holds the live pose, goal, step count and
    random streams, and the body's forward speed and yaw rate as its own; the same 20 steps of
    actions (1 s, 0.75 m: straight at 0.8, and a turn) end within 3 cm of the physical model's
    end (measured 4 and 2.5 mm: the models differ in the tyres and suspension, not in the
    command)."""
    env = _env()
    env.reset(seed=0)
    a = torch.tensor([[0.8, 0.8], [0.5, 0.3]])
    for _ in range(10):
        env.step(a)
    twin = Surrogate(env)
    assert twin.sim.cfg.dynamics == "skid_steer"
    snap = twin.snapshot()
    live = env.unwrapped.sim.state
    for name in ("x", "y", "yaw", "goal_w", "steps", "keys", "counters", "map_index"):
        torch.testing.assert_close(snap.tensors[f"state/{name}"], getattr(live, name),
                                   rtol=0, atol=0)
    body = env.unwrapped.sim.model.body_velocity(live)
    torch.testing.assert_close(snap.tensors["state/vx_b"], body[:, 0], rtol=0, atol=0)
    torch.testing.assert_close(snap.tensors["state/yaw_rate"], body[:, 2], rtol=0, atol=0)
    assert float(body[0, 0]) > 0.5  # it was moving
    acts = a.unsqueeze(0).expand(20, 2, 2)
    ro_twin = twin.lookahead(snap, acts)
    ro_live = env.lookahead(env.get_state(), acts)
    moved = (ro_live.position[-1] - ro_live.position[0]).norm(dim=1)
    assert bool((moved > 0.3).all()), moved
    err = (ro_twin.position[-1] - ro_live.position[-1]).norm(dim=1)
    assert float(err.max()) < 0.03, err
    # the live env is untouched by either look-ahead, and repeated snapshots roll alike
    torch.testing.assert_close(env.unwrapped.sim.state.x, live.x, rtol=0, atol=0)
    ro2 = twin.lookahead(twin.snapshot().repeat(3), acts.repeat_interleave(3, 1))
    torch.testing.assert_close(ro2.position[-1][[0, 3]], ro_twin.position[-1], rtol=0,
                               atol=1e-6)


def test_a_twin_exists_only_where_a_kinematic_model_reads_the_actions_alike():
    kin = OffroadVectorEnv(num_envs=2)
    kin.reset(seed=0)
    with pytest.raises(ValueError, match="already a kinematic one"):
        Surrogate(kin)
    car = _env(vehicle="rc_truck", dynamics_params=RigidBodyParams(steering="ackermann"))
    car.reset(seed=0)
    with pytest.raises(ValueError, match="no kinematic twin"):
        Surrogate(car)
    husky = _env()
    husky.reset(seed=0)
    with pytest.raises(ValueError, match="reads its actions alike"):
        Surrogate(husky, dynamics="unicycle")


def test_mppi_plans_on_the_twin_without_a_look_ahead_of_the_live_env():
    from train.planners.baselines import baseline
    env = _env()
    obs, _ = env.reset(seed=0)
    act = baseline("mppi:K=8,seconds=0.5,model=twin", env, 0)
    calls = []
    env.unwrapped.lookahead = lambda *a: calls.append(1)
    for _ in range(5):
        u = act(obs)
        assert u.shape == (2, 2) and bool(torch.isfinite(u).all())
        obs, *_ = env.step(u)
    assert calls == [] and act.model.sim.cfg.dynamics == "skid_steer"


def test_on_a_soil_map_the_twin_drives_the_heights_as_hard_ground():
    """A map whose right half is dry sand: the physical model reads the soil, the twin (whose
    kinematic model drives hard ground of one friction only) takes the heights without the
    material map, says so (``hard_ground``), and still starts from the live state."""
    import numpy as np
    mat = np.zeros((161, 161), int)
    mat[:, 80:] = 1
    hm = terrain.HeightMap(np.zeros((161, 161)), 0.25, materials=mat,
                           material_names=("hard", "dry_sand"))
    env = OffroadVectorEnv(num_envs=2, heightmap=hm, dynamics="rigid_body",
                           max_episode_steps=400)
    env.reset(seed=0)
    twin = Surrogate(env)
    assert twin.hard_ground and twin.sim.world_maps.material_names is None
    snap = twin.snapshot()
    torch.testing.assert_close(snap.tensors["state/x"], env.unwrapped.sim.state.x, rtol=0,
                               atol=0)
    ro = twin.lookahead(snap, torch.full((5, 2, 2), 0.5))
    assert bool(torch.isfinite(ro.position).all())
    flat = _env()
    flat.reset(seed=0)
    assert not Surrogate(flat).hard_ground
