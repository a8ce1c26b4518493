"""Robots on two wheels and casters (issue 43): a TurtleBot3-like description read from its
URDF, its contacts placed by the rigid ground following, and the three models driving it. The
robot is a hand-written replica of the public TurtleBot3 Burger layout (ROBOTIS'
``turtlebot3_burger.urdf``: wheels r 0.033 m at y = +-0.08 m, a caster 0.081 m behind them,
base_link 0.010 m above base_footprint); every expected figure is computed from the text."""


import pytest
import torch

import terrain
from offroad_env import OffroadVectorEnv
from offroad_env.physics.ground import rigid_contact
from offroad_env.physics.rigid_params import RigidBodyParams
from offroad_env.physics.vehicle import Vehicle
from offroad_env.physics.vehicle import vehicle_from_urdf

G = 9.81
M_BASE, M_WHEEL, M_CASTER = 0.82573504, 0.02849894, 0.005

TB3 = f"""<?xml version="1.0"?>
<robot name="tb3_like">
  <link name="base_footprint"/>
  <joint name="base_joint" type="fixed">
    <parent link="base_footprint"/><child link="base_link"/><origin xyz="0 0 0.010"/>
  </joint>
  <link name="base_link">
    <collision><origin xyz="-0.032 0 0.070"/><geometry><box size="0.140 0.140 0.143"/></geometry>
    </collision>
    <inertial><origin xyz="-0.032 0 0.070"/><mass value="{M_BASE}"/>
      <inertia ixx="8.7e-3" iyy="8.7e-3" izz="1.4e-2"/></inertial>
  </link>
  <joint name="wheel_left_joint" type="continuous">
    <parent link="base_link"/><child link="wheel_left_link"/>
    <origin xyz="0.0 0.08 0.023" rpy="-1.5707963 0 0"/><axis xyz="0 0 1"/>
  </joint>
  <link name="wheel_left_link">
    <collision><geometry><cylinder length="0.018" radius="0.033"/></geometry></collision>
    <inertial><mass value="{M_WHEEL}"/><inertia ixx="1.1e-5" iyy="1.1e-5" izz="2.1e-5"/></inertial>
  </link>
  <joint name="wheel_right_joint" type="continuous">
    <parent link="base_link"/><child link="wheel_right_link"/>
    <origin xyz="0.0 -0.08 0.023" rpy="-1.5707963 0 0"/><axis xyz="0 0 1"/>
  </joint>
  <link name="wheel_right_link">
    <collision><geometry><cylinder length="0.018" radius="0.033"/></geometry></collision>
    <inertial><mass value="{M_WHEEL}"/><inertia ixx="1.1e-5" iyy="1.1e-5" izz="2.1e-5"/></inertial>
  </link>
  <joint name="caster_back_joint" type="fixed">
    <parent link="base_link"/><child link="caster_back_link"/>
    <origin xyz="-0.081 0 -0.004" rpy="-1.5707963 0 0"/>
  </joint>
  <link name="caster_back_link">
    <collision><origin xyz="0 0.001 0"/><geometry><box size="0.030 0.009 0.020"/></geometry>
    </collision>
    <inertial><mass value="{M_CASTER}"/><inertia ixx="1e-6" iyy="1e-6" izz="1e-6"/></inertial>
  </link>
</robot>
"""


#: a 0.9 kg robot's stiff contacts need substeps under the default 12.5 ms (the model says so)
SMALL = {"rigid_body": {"dynamics_params": RigidBodyParams(max_substep=0.01)}}


@pytest.fixture
def tb3(tmp_path):
    path = tmp_path / "tb3.urdf"
    path.write_text(TB3)
    return path


def _mass_and_com_x():
    """Mass [kg] and centre of mass x [m] (base_link) by hand from the inertials."""
    m = M_BASE + 2 * M_WHEEL + M_CASTER
    return m, (M_BASE * -0.032 + M_CASTER * -0.081) / m


def test_two_wheels_and_a_caster_from_the_urdf(tb3):
    v = vehicle_from_urdf(tb3)
    assert v.num_wheels == 3 and v.casters == (False, False, True)
    assert v.driven == (True, True, False)  # a caster takes no drive
    assert v.wheel_radius == pytest.approx(0.033)
    assert v.track_width == pytest.approx(0.16)
    # the rear axle is the drive wheels' (x = 0, hub 0.023 m up), not the caster behind it
    assert [v.rear_axle_pose[i][3] for i in range(3)] == pytest.approx([0.0, 0.0, 0.023])
    caster = v.wheel_positions[2]
    # the caster's box, turned by the joint's -pi/2 about x, bottom face centre at x = -0.081
    assert caster == pytest.approx((-0.081, 0.0), abs=1e-6)
    assert v.wheel_base == pytest.approx(0.081, abs=1e-6)
    m, cx = _mass_and_com_x()
    assert v.mass == pytest.approx(m) and v.com[0] == pytest.approx(cx, abs=1e-9)


def test_the_rest_on_flat_ground_carries_the_caster_load_statics_gives(tb3):
    """Three contacts are statically determinate: moments about the axle give the caster
    m g x_c / x_caster, the wheels the rest in halves; the loads sum to m g."""
    v = vehicle_from_urdf(tb3)
    flat = terrain.HeightMap(torch.zeros(41, 41, dtype=torch.float64), 0.05, dtype=torch.float64)
    gc = rigid_contact(v, flat, torch.zeros(2, dtype=torch.float64),
                       torch.zeros(2, dtype=torch.float64),
                       torch.tensor([0.0, 0.7], dtype=torch.float64))
    f = gc.normal_force
    m, cx = _mass_and_com_x()
    assert f.sum(1).numpy() == pytest.approx([m * G] * 2, rel=1e-9)
    caster = m * G * cx / -0.081
    assert f[:, 2].numpy() == pytest.approx([caster] * 2, rel=1e-6)
    assert f[:, 0].numpy() == pytest.approx([(m * G - caster) / 2] * 2, rel=1e-6)
    assert gc.roll.abs().max() < 1e-6 and gc.pitch.abs().max() < 2e-3


@pytest.mark.parametrize("dynamics", ["unicycle", "skid_steer", "rigid_body"])
def test_the_models_drive_a_robot_on_casters(tb3, dynamics):
    """Forward at full command on flat ground (unicycle: speed 1, yaw rate 0; the skid-steered
    models: both sides 1): every model moves it straight ahead and upright."""
    env = OffroadVectorEnv(num_envs=2, vehicle=str(tb3), dynamics=dynamics,
                           ground="rigid_contact", terrain=terrain.FlatConfig(size=(20.0, 20.0)),
                           max_episode_steps=400, **SMALL.get(dynamics, {}))
    env.reset(seed=0)
    st = env.state_view()
    x0, y0, yaw0 = (t.clone() for t in (st.x, st.y, st.yaw))
    a = torch.tensor([[1.0, 0.0 if dynamics == "unicycle" else 1.0]]).repeat(2, 1)
    for _ in range(40):
        _, _, term, trunc, info = env.step(a)
        assert not term.any() and not trunc.any()
    st = env.state_view()
    ahead = (st.x - x0) * torch.cos(yaw0) + (st.y - y0) * torch.sin(yaw0)
    side = -(st.x - x0) * torch.sin(yaw0) + (st.y - y0) * torch.cos(yaw0)
    assert (ahead > 1.0).all(), ahead  # 2 s at up to 1 m/s
    assert (side.abs() < 0.05 * ahead).all(), side  # the caster does not pull it aside
    assert (st.roll.abs() < 0.05).all() and (st.pitch.abs() < 0.05).all()
    env.close()


def test_the_physical_model_rests_on_its_caster(tb3):
    m, cx = _mass_and_com_x()
    env = OffroadVectorEnv(num_envs=1, vehicle=str(tb3), dynamics="rigid_body",
                           terrain=terrain.FlatConfig(size=(20.0, 20.0)), **SMALL["rigid_body"])
    env.reset(seed=0)
    for _ in range(20):  # braked at rest: let the springs settle
        env.step(torch.zeros(1, 2))
    f = env.state_view().contact.normal_force[0]
    assert float(f.sum()) == pytest.approx(m * G, rel=0.01)
    assert float(f[2]) == pytest.approx(m * G * cx / -0.081, rel=0.03)


def test_a_caster_needs_the_rigid_ground_following_and_cannot_be_driven(tb3):
    with pytest.raises(ValueError, match="stands on casters: ground='four_wheel' places a wheel "
                                         "base x track rectangle"):
        OffroadVectorEnv(num_envs=1, vehicle=str(tb3), dynamics="unicycle")
    with pytest.raises(ValueError, match="a caster cannot be driven"):
        Vehicle(wheel_positions=((0, 0.1), (0, -0.1), (-0.1, 0)), casters=(False, False, True),
                driven=(True, True, True))
    with pytest.raises(ValueError, match="at least two False"):
        Vehicle(wheel_positions=((0, 0.1), (0, -0.1), (-0.1, 0)), casters=(True, False, True))
