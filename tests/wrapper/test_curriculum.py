"""The terrain curriculum: promotion and demotion on scripted outcomes, maps of the level."""

from dataclasses import replace

import gymnasium as gym
import pytest
import torch

import offroad_env  # noqa: F401
from offroad_env import OffroadVectorEnv, make_config
from offroad_env.task.task import EndReason as R
from terrain import LevelsConfig
from wrappers import TerrainCurriculum
from wrappers.curriculum import next_levels, top_levels


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
        TerrainCurriculum(gym.make_vec("offroad_env/OffroadNav-v1", num_envs=2,
                                       vectorization_mode="vector_entry_point"))


def test_promotion_stops_at_each_rows_top_level():
    levels = torch.tensor([1, 2, 2, 3, 0])
    top = torch.tensor([2, 2, 3, 1, 2])  # the last row's top: 2; row 3 is above its top
    reason = torch.tensor([R.GOAL_REACHED] * 4 + [R.TIP_OVER])
    u = torch.tensor([0.9, 0.9, 0.5, 0.0, 0.5])
    new = next_levels(levels, reason, torch.ones(5), 10, u, top)
    # up to the top; top solved -> random level under it (0.9 * 3 -> 2); up (2 -> 3 = top);
    # above its top solved -> random under it (0); the floor stays
    assert new.tolist() == [2, 2, 3, 0, 0]
    assert torch.equal(next_levels(levels, reason, torch.ones(5), 10, u),
                       next_levels(levels, reason, torch.ones(5), 10, u, torch.full((5,), 9)))


def test_each_family_stops_below_its_first_level_where_spawns_do_not_rest():
    cfg = LevelsConfig(family=replace(make_config("traverse").terrain.family, num_levels=4),
                       families=("slopes", "steps", "rough"), worlds=2)
    shares = torch.ones(3 * 4 * 2, dtype=torch.float64)
    shares[cfg.map_index(1, 2, 0)] = 0.0  # steps level 2: a mean of 0.5 over its worlds
    shares[cfg.map_index(1, 3, 1)] = 0.3  # steps level 3: 0.65, but level 2 came first
    shares[cfg.map_index(2, 0, 0)] = shares[cfg.map_index(2, 0, 1)] = 0.1  # rough level 0
    assert top_levels(shares, cfg, 0.25).tolist() == [3, 3, -1]
    assert top_levels(shares, cfg, 0.6).tolist() == [3, 1, -1]


def _capped(env, family: int, level: int):
    """Make ``env``'s measured rest shares 0 on ``level`` of ``family`` (the probe is tested in
    tests/envs/test_rest_probe.py; here only what the curriculum does with it)."""
    real = env.rest_shares
    cfg = env.config.terrain

    def shares(samples=32, seed=0):
        s = real(samples, seed).clone()
        s[cfg.map_index(family, level, 0):cfg.map_index(family, level, 0) + cfg.worlds] = 0.0
        return s
    env.rest_shares = shares
    return env


def test_the_curriculum_keeps_rows_off_levels_without_rest():
    env = _capped(_env(n=10), family=1, level=2)
    with pytest.warns(UserWarning, match=r"'steps' up to level 1 \(level 2: 0%\)"):
        cur = TerrainCurriculum(env, init_max_level=3)
    assert cur.top_levels.tolist() == [3, 1]
    cur.reset(seed=0)
    steps_rows = cur.families == 1
    assert int(cur.levels[steps_rows].max()) <= 1 and int(cur.levels[~steps_rows].max()) == 3
    for _ in range(150):
        cur.step(torch.stack((torch.ones(10), torch.zeros(10)), 1))
        assert int(cur.levels[steps_rows].max()) <= 1
        assert int(cur.queued_levels[steps_rows].max()) <= 1
        lo = cur.levels_config.map_index(1, 2, 0)
        assert not bool(((env.state_view().map_index >= lo) & steps_rows).any())
    # no cap asked for: every level is played, unmeasured
    assert TerrainCurriculum(_capped(_env(n=10), 1, 2), min_rest_share=None).rest_shares is None


def test_a_family_without_a_playable_level_is_refused():
    with pytest.raises(ValueError, match="family 'slopes': level 0's maps give a stable rest"):
        TerrainCurriculum(_capped(_env(n=4), family=0, level=0))
    for bad in (1.5, float("nan"), "0.3", True):
        with pytest.raises(ValueError, match="min_rest_share must be in"):
            TerrainCurriculum(_env(n=4), min_rest_share=bad)
