"""The terrain curriculum: promotion and demotion on scripted outcomes, maps of the level."""

from dataclasses import replace

import gymnasium as gym
import pytest
import torch

import offroad_env  # noqa: F401
from offroad_env import OffroadVectorEnv, make_config
from offroad_env.tasks import EndReason as R
from terrain import LevelsConfig
from wrappers import TerrainCurriculum
from wrappers.curriculum import next_levels


def test_levels_move_by_outcome():
    levels = torch.tensor([0, 3, 3, 3, 3, 3, 3, 9, 0, 5])
    reason = torch.tensor([R.GOAL_REACHED, R.GOAL_REACHED, R.TIP_OVER, R.HOLE, R.OFF_MAP,
                           R.TIME_LIMIT, R.TIME_LIMIT, R.GOAL_REACHED, R.TIP_OVER, 0])
    covered = torch.tensor([1.0, 1.0, 0.9, 0.2, 0.5, 0.3, 0.7, 1.0, 0.0, 0.0])
    u = torch.full((10,), 0.25)
    new = next_levels(levels, reason, covered, 10, u)
    # up, up, down (tip), down (hole), down (off map), down (slow timeout), stay (timeout
    # past half way), top solved -> random level 2, floor stays 0, no end stays
    assert new.tolist() == [1, 4, 2, 2, 2, 2, 3, 2, 0, 5]


def _env(n=10, **kw):
    cfg = make_config("traverse")
    fam = replace(cfg.terrain.family, size=(16.0, 16.0), resolution=(0.2, 0.2), num_levels=4)
    cfg = replace(cfg, terrain=LevelsConfig(family=fam, families=("slopes", "steps"), worlds=2),
                  task=replace(cfg.task, goal_distance=(5.0, 7.0)))
    return OffroadVectorEnv(num_envs=n, config=cfg, max_episode_steps=60, **kw)


@pytest.mark.parametrize("mode", ["SameStep", "NextStep"])
def test_each_episode_runs_on_its_levels_maps_and_levels_follow_the_outcomes(mode):
    env = TerrainCurriculum(_env(autoreset_mode=gym.vector.AutoresetMode(mode)),
                            init_max_level=1)
    base = env.unwrapped
    cfg = env.levels_config
    env.reset(seed=0)
    assert env.levels.max() <= 1 and env.families.tolist() == [0, 1] * 5

    def check_maps():
        lo = cfg.map_index(env.families, env.levels, 0)
        mi = base.state_view().map_index
        started = base.state_view().steps == 0
        ok = (mi >= lo) & (mi < lo + cfg.worlds)
        assert bool(ok[started].all())

    check_maps()
    assert bool((env.queued_levels == env.levels).all())  # both chains start there
    g = torch.Generator().manual_seed(0)
    moved = 0
    for _ in range(200):
        before, queued = env.levels.clone(), env.queued_levels.clone()
        a = torch.stack((torch.ones(10), torch.rand(10, generator=g) * 2 - 1), 1)
        _, _, term, trunc, info = env.step(a)
        started = base.state_view().steps == 0  # the rows this call reset
        # a level changes only at a reset, to the one queued for it an episode before
        assert bool((env.levels[~started] == before[~started]).all())
        assert bool((env.levels[started] == queued[started]).all())
        assert bool((env.queued_levels[~started] == queued[~started]).all())
        if mode == "SameStep":  # the outcome is this call's: its level moves by it
            ended = term | trunc
            assert bool((started == ended).all())
            reasons = info["end_reason"]
            ups = ended & (reasons == int(R.GOAL_REACHED)) & (before < 3)
            downs = ended & ((reasons == int(R.TIP_OVER)) | (reasons == int(R.OFF_MAP))) \
                & (before > 0)
            assert bool((env.queued_levels[ups] == before[ups] + 1).all())
            assert bool((env.queued_levels[downs] == before[downs] - 1).all())
            moved += int((ups | downs).sum())
        else:
            moved += int((env.levels != before).sum())
        check_maps()
    assert moved > 0
    assert 0 <= env.mean_level <= 3


def test_a_level_chosen_at_a_reset_keeps_the_prepared_starts_of_the_physical_model():
    """The new level is the map range only after the reset that chose it, so the next start
    the physical model prepared for a row holds: a prepare call serves the resets of many rows,
    not one call per reset (the reason the new level comes an episode late)."""
    cfg = make_config("traverse")
    fam = replace(cfg.terrain.family, size=(12.0, 12.0), resolution=(0.2, 0.2), num_levels=8)
    cfg = replace(cfg, dynamics="rigid_body", ground="rigid_contact",
                  terrain=LevelsConfig(family=fam, families=("slopes",), worlds=1),
                  task=replace(cfg.task, goal_distance=(3.0, 4.0)))
    env = TerrainCurriculum(OffroadVectorEnv(num_envs=8, config=cfg, max_episode_steps=8),
                            init_max_level=7)
    env.reset(seed=0)
    env.unwrapped.set_episode_steps(torch.arange(8))  # the rows end one step apart
    ahead = env.unwrapped.sim.next_starts
    assert ahead is not None
    levels0 = env.levels.clone()
    for _ in range(40):  # five time limits a row, each with no progress: down a level
        env.step(torch.zeros(8, 2))
    assert ahead.rows_taken == 35 and bool((env.levels < levels0).any())
    # one call a lap of the 8 rows; with the level set at the reset itself 20 calls (a row
    # whose range moved is prepared again at its reset)
    assert ahead.calls <= 6, ahead.calls


def test_a_curriculum_needs_level_maps():
    with pytest.raises(ValueError, match="LevelsConfig"):
        TerrainCurriculum(gym.make_vec("offroad_env/OffroadNav-v0", num_envs=2,
                                       vectorization_mode="vector_entry_point"))
