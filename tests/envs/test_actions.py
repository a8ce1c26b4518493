"""The one action check: shapes, dtypes, devices, NaN and inf, clipping."""


import numpy as np
import pytest
import torch

from offroad_env import OffroadEnv, OffroadVectorEnv

from env_util import small_env


def test_bad_actions():
    env = OffroadVectorEnv(num_envs=4096, **small_env())
    env.reset(seed=0)
    a = torch.zeros(4096, 2)
    a[1234, 1] = float("nan")
    with pytest.raises(ValueError, match=r"\[1234\]"):
        env.step(a)
    with pytest.raises(ValueError, match="shape"):
        env.step(torch.zeros(4096, 3))
    zeroing = OffroadVectorEnv(num_envs=4, nan_action="zero", **small_env())
    zeroing.reset(seed=0)
    b = torch.tensor([[0.1, 0.1], [float("inf"), 0.0], [5.0, -7.0], [0.0, 0.0]])
    obs, r, term, trunc, info = zeroing.step(b)
    assert info["bad_action"].tolist() == [False, True, False, False]
    assert torch.isfinite(obs).all() and torch.isfinite(r).all()
    # out of range is clipped: the previous-action term shows it
    pa = [s for t, s, e in zeroing.obs_layout if t == "prev_action"][0]
    assert obs[2, pa:pa + 2].tolist() == [1.0, -1.0] and obs[1, pa:pa + 2].tolist() == [0.0, 0.0]
    single = OffroadEnv(**small_env())
    single.reset(seed=0)
    with pytest.raises(ValueError, match="non-finite"):
        single.step(np.array([np.nan, 0.0], dtype=np.float32))
    with pytest.raises(ValueError, match="shape"):
        single.step(np.zeros(3, dtype=np.float32))
