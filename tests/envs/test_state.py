"""The state: declared fields, row merges that keep layouts, restarts that keep the streams."""

import torch

from offroad_env.physics.models import MODELS
from offroad_env.core.state import CORE_FIELDS, STREAM_FIELDS, SimState, join_fields

from env_util import sim


def test_state_put_restart_and_restore_take_rows_and_keep_layouts():
    fields = join_fields(("core", CORE_FIELDS), ("skid", MODELS["skid_steer"].fields))
    st = SimState.zeros(4, 4, 2, fields=fields)
    assert st.wheel_omega.shape == (4, 4) and st.wheel_omega.stride() == (1, 4)
    mask = torch.tensor([True, False, True, False])
    st.put(mask, x=torch.arange(4.0), goal_w=torch.ones(4, 2))
    assert st.x.tolist() == [0.0, 0.0, 2.0, 0.0]
    assert st.goal_w[:, 0].tolist() == [1.0, 0.0, 1.0, 0.0]
    snap = st.copy()
    st.put(mask, idx=torch.tensor([1, 3]), x=torch.tensor([5.0, 6.0]),
           wheel_omega=torch.full((2, 4), 3.0))
    assert st.x.tolist() == [0.0, 5.0, 2.0, 6.0]
    assert st.wheel_omega.stride() == (1, 4) and st.wheel_omega[1].tolist() == [3.0] * 4
    st.keys = torch.full((4,), 9, dtype=torch.int64)
    st.restart(torch.tensor([False, True, False, False]), y=torch.full((4,), 2.0))
    assert st.x.tolist() == [0.0, 0.0, 2.0, 6.0] and st.y.tolist() == [0.0, 2.0, 0.0, 0.0]
    assert st.wheel_omega[1].tolist() == [0.0] * 4 and st.keys.tolist() == [9] * 4
    st.restore(torch.tensor([False, False, False, True]), snap)
    assert st.x.tolist() == [0.0, 0.0, 2.0, 0.0]
    assert STREAM_FIELDS == ("keys", "counters")


def test_every_state_field_restarts_on_reset_except_the_streams():
    s = sim(2, dynamics="skid_steer")
    for _ in range(5):
        s.step(torch.ones(2, 2))
    before = s.state.copy()
    s.reset(torch.tensor([True, False]))
    st = s.state
    assert {"wheel_omega", "accel_bias_s", "margin", "keys"} <= set(st.fields)
    for name in st.fields:
        new, old = getattr(st, name), getattr(before, name)
        assert torch.equal(new[1], old[1]), name  # the other row is untouched
    assert st.steps[0] == 0 and (st.wheel_omega[0] == 0).all() and st.vx_b[0] == 0
    assert (st.counters[0] > before.counters[0])  # the stream goes on
