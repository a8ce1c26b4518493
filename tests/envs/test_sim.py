"""The simulator's orchestration: compiled steps and chunked resets agree with eager ones, resets
without host syncs, and the one gravity every room reads."""

import math

import pytest
import torch

import terrain
from offroad_env import OffroadVectorEnv, Simulator
from offroad_env.sim.config import SimConfig
from offroad_env.physics.dynamics import SkidSteerParams

from env_util import rollout, small_env


@pytest.mark.slow
@pytest.mark.parametrize("kw", [dict(), dict(dynamics="skid_steer", ground="rigid_contact")])
def test_compiled_step_agrees_with_eager(kw):
    eager = OffroadVectorEnv(num_envs=16, max_episode_steps=30, **small_env(**kw))
    comp = OffroadVectorEnv(num_envs=16, max_episode_steps=30, compile=True, **small_env(**kw))
    a_e = rollout(eager, 80, seed=5)
    a_c = rollout(comp, 80, seed=5)
    # the same physics; rounding may differ (fused kernels), not the trajectory
    torch.testing.assert_close(a_c, a_e, rtol=1e-3, atol=1e-3)


@pytest.mark.slow
@pytest.mark.parametrize("kw", [dict(), dict(dynamics="skid_steer", ground="rigid_contact")])
def test_compiled_resets_in_chunks_agree_with_eager_and_never_recompile(kw):
    kw = dict(num_envs=150, max_episode_steps=6, **kw)
    eager = OffroadVectorEnv(**small_env(**kw))
    comp = OffroadVectorEnv(compile=True, **small_env(**kw))
    mask = torch.zeros(150, dtype=torch.bool)
    mask[torch.randperm(150, generator=torch.Generator().manual_seed(0))[:70]] = True
    a = torch.full((150, 2), 0.5)

    def agree(o_c, o_e):
        if "ground" not in kw:
            torch.testing.assert_close(o_c, o_e, rtol=1e-3, atol=1e-3)
        else:
            # a cold rigid placement can have two rests (a "wobbly table": which diagonal
            # carries the load is a tie); rounding picks one, so a few rows may differ
            close = ((o_c - o_e).abs() <= 1e-3 + 1e-3 * o_e.abs()).all(1)
            assert close.float().mean() >= 0.95
    for env in (eager, comp):
        env.reset(seed=1)
        env.step(a)
    # 70 resets: one full chunk of 64 and one of 6 padded to 64
    agree(comp.reset(options={"reset_mask": mask})[0],
          eager.reset(options={"reset_mask": mask})[0])
    comp.step(a)  # compiles the step
    eager.step(a)
    # autoresets every 6 steps; after the first compile the step and the reset placement keep
    # their graphs (a reset used to change the contact's strides and force a second graph)
    with torch._dynamo.config.patch(error_on_recompile=True):
        for _ in range(14):
            o_c = comp.step(a)[0]
            o_e = eager.step(a)[0]
    agree(o_c, o_e)


@pytest.mark.parametrize("kw", [dict(), dict(dynamics="skid_steer", ground="rigid_contact")])
def test_resets_without_host_sync_equal_subset_resets(kw):
    """The accelerator path (every row computed, reset rows kept) against the CPU's subset
    path, over autoresets on a map with holes (spawn redraws)."""
    import terrain as T
    holes = T.HolesConfig(size=(20.0, 20.0), resolution=(0.1, 0.1), count=40,
                          radius_range=(0.5, 1.0), keep_center=0.0)
    envs = [OffroadVectorEnv(num_envs=48, max_episode_steps=7, terrain=holes, num_maps=2, **kw)
            for _ in range(2)]
    envs[1].sim.subset_resets = False
    a = rollout(envs[0], 30, seed=4)
    b = rollout(envs[1], 30, seed=4)
    torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-5)


@pytest.mark.slow
def test_compiled_env_is_bitwise_deterministic_per_seed():
    kw = dict(num_envs=150, max_episode_steps=6, dynamics="skid_steer", ground="rigid_contact")
    a = rollout(OffroadVectorEnv(compile=True, **small_env(**kw)), 40, seed=3)
    b = rollout(OffroadVectorEnv(compile=True, **small_env(**kw)), 40, seed=3)
    assert torch.equal(a, b)


@pytest.mark.slow
def test_compiled_resets_without_host_sync_agree_with_eager():
    """The accelerator reset path (all rows placed by the compiled cold placement, reset rows
    kept), run on the CPU, against the eager subset path; nothing recompiles once warm."""
    kw = dict(num_envs=48, max_episode_steps=5, dynamics="skid_steer", ground="rigid_contact")
    eager = OffroadVectorEnv(**small_env(**kw))
    comp = OffroadVectorEnv(compile=True, **small_env(**kw))
    comp.sim.subset_resets = False
    a = torch.full((48, 2), 0.4)
    for env in (eager, comp):
        env.reset(seed=2)
        for _ in range(6):  # compiles the step and, at the autoreset, the placement
            env.step(a)
    with torch._dynamo.config.patch(error_on_recompile=True):
        for _ in range(12):
            o_c = comp.step(a)[0]
            o_e = eager.step(a)[0]
    # rows may differ where a cold rigid placement has two rests (see the chunked test)
    close = ((o_c - o_e).abs() <= 1e-3 + 1e-3 * o_e.abs()).all(1)
    assert close.float().mean() >= 0.9


def test_one_gravity_reaches_the_loads_the_imu_and_the_skid_steer_slope():
    g = 3.71  # Mars
    slope = terrain.PlaneConfig(size=(20.0, 20.0), resolution=(0.1, 0.1), slope_x=0.3)
    s = Simulator(SimConfig(terrain=slope, num_maps=1, gravity=g, dynamics="skid_steer",
                            ground="rigid_contact",
                            dynamics_params=SkidSteerParams(mu=0.0, c_rr=0.0)),
                  1, dtype=torch.float64)
    s.set_keys(torch.tensor([1]), torch.ones(1, dtype=torch.bool))
    s.reset(torch.ones(1, dtype=torch.bool), torch.tensor([[0.0, 0.0, 0.0]]))
    gc = s.state.contact
    assert float(gc.normal_force.sum()) == pytest.approx(s.vehicle.mass * g, rel=1e-9)
    assert float(torch.linalg.vector_norm(s.state.accel_s)) == pytest.approx(g, rel=1e-9)
    pitch = float(gc.pitch)
    assert pitch == pytest.approx(-math.atan(0.3), abs=1e-6)  # nose up the slope
    s.step(torch.zeros(1, 2))  # frictionless: it slides back at g sin(pitch)
    assert float(s.state.vx_b) == pytest.approx(s.cfg.dt * g * math.sin(pitch), rel=1e-6)
