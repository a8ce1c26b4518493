"""Common robots a user brings (the third user trial): a Pioneer 3-DX-like robot whose caster
wheel ``center_wheel`` hangs under fixed joints (found by its geometry, not its name), a
Kobuki-sized robot that the physical model drives from the command line (its stable substep
chosen and said), a robot whose base link is not ``base_link`` (``--base``), and mecanum wheels
(modelled as skid-steer, with a warning). The descriptions are written here by hand from the
robots' published dimensions (the public Pioneer file is GPL-3.0 and is not copied)."""

import json
import warnings

import pytest
import torch

import terrain
from offroad_env.cli import main
from offroad_env.physics.ground import rigid_contact
from offroad_env.physics.vehicle import vehicle_from_urdf

G = 9.81
#: Pioneer 3-DX figures: drive wheels r 0.0975 m at y = +-0.158 m, a caster wheel r 0.0375 m
#: 0.2 m behind the axle; chassis 5.64 kg, wheels 0.5 kg, caster parts 0.1 kg each
R_W, Y_W, R_C, X_C = 0.0975, 0.158, 0.0375, -0.2
P3DX = f"""<?xml version="1.0"?>
<robot name="p3dx_like">
  <link name="base_link">
    <collision><origin xyz="-0.045 0 0.148"/><geometry><box size="0.38 0.30 0.19"/></geometry>
    </collision>
    <inertial><origin xyz="-0.045 0 0.148"/><mass value="5.64"/>
      <inertia ixx="0.08" iyy="0.1" izz="0.12"/></inertial>
  </link>
  <joint name="left_hub_joint" type="continuous">
    <parent link="base_link"/><child link="left_wheel"/>
    <origin xyz="0 {Y_W} {R_W}" rpy="-1.5707963 0 0"/><axis xyz="0 0 1"/>
  </joint>
  <link name="left_wheel">
    <collision><geometry><cylinder length="0.05" radius="{R_W}"/></geometry></collision>
    <inertial><mass value="0.5"/><inertia ixx="1e-3" iyy="1e-3" izz="2e-3"/></inertial>
  </link>
  <joint name="left_hubcap_joint" type="fixed">
    <parent link="left_wheel"/><child link="left_hubcap"/><origin xyz="0 0 0.03"/>
  </joint>
  <link name="left_hubcap">
    <collision><geometry><cylinder length="0.01" radius="0.09"/></geometry></collision>
  </link>
  <joint name="right_hub_joint" type="continuous">
    <parent link="base_link"/><child link="right_wheel"/>
    <origin xyz="0 {-Y_W} {R_W}" rpy="-1.5707963 0 0"/><axis xyz="0 0 1"/>
  </joint>
  <link name="right_wheel">
    <collision><geometry><cylinder length="0.05" radius="{R_W}"/></geometry></collision>
    <inertial><mass value="0.5"/><inertia ixx="1e-3" iyy="1e-3" izz="2e-3"/></inertial>
  </link>
  <joint name="base_swivel_joint" type="fixed">
    <parent link="base_link"/><child link="swivel"/><origin xyz="{X_C} 0 0.085"/>
  </joint>
  <link name="swivel">
    <collision><geometry><box size="0.04 0.02 0.03"/></geometry></collision>
    <inertial><mass value="0.1"/><inertia ixx="1e-5" iyy="1e-5" izz="1e-5"/></inertial>
  </link>
  <joint name="swivel_wheel_joint" type="fixed">
    <parent link="swivel"/><child link="center_wheel"/>
    <origin xyz="-0.0035 0 {R_C - 0.085}" rpy="-1.5707963 0 0"/>
  </joint>
  <link name="center_wheel">
    <collision><geometry><cylinder length="0.03" radius="{R_C}"/></geometry></collision>
    <inertial><mass value="0.1"/><inertia ixx="1e-5" iyy="1e-5" izz="1e-5"/></inertial>
  </link>
  <joint name="center_wheel_joint" type="fixed">
    <parent link="center_wheel"/><child link="center_hubcap"/><origin xyz="0 0 0.016"/>
  </joint>
  <link name="center_hubcap">
    <collision><geometry><cylinder length="0.004" radius="0.03"/></geometry></collision>
    <inertial><mass value="0.1"/><inertia ixx="1e-5" iyy="1e-5" izz="1e-5"/></inertial>
  </link>
</robot>
"""


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_caster_wheel_under_fixed_joints_is_found_by_its_geometry(tmp_path):
    v = vehicle_from_urdf(_write(tmp_path, "p3dx.urdf", P3DX))
    assert v.num_wheels == 3 and v.casters.count(True) == 1  # the hubcaps are not casters
    caster = v.wheel_positions[v.casters.index(True)]
    # the caster wheel's lowest point: its centre, 0.0035 m behind the swivel
    assert caster == pytest.approx((X_C - 0.0035, 0.0), abs=1e-6)
    assert v.track_width == pytest.approx(2 * Y_W) and v.wheel_radius == pytest.approx(R_W)
    m = 5.64 + 2 * 0.5 + 3 * 0.1
    assert v.mass == pytest.approx(m)
    # at rest on flat ground the three loads hold the weight: sum m g; the caster's from the
    # moments about the drive axle, m g x_com / x_caster
    flat = terrain.HeightMap(torch.zeros(41, 41, dtype=torch.float64), 0.05,
                             dtype=torch.float64)
    z = torch.zeros(1, dtype=torch.float64)
    f = rigid_contact(v, flat, z, z, z).normal_force[0]
    assert float(f.sum()) == pytest.approx(m * G, rel=1e-9)
    xs = [q[0] for q in v.wheel_positions]
    x_com = v.com[0]
    assert float(f[v.casters.index(True)]) == pytest.approx(
        m * G * x_com / xs[v.casters.index(True)], rel=1e-6)


def test_fixed_wheels_out_at_the_track_are_not_casters(tmp_path):
    """A cylinder at the contact plane but out at the drive track (a wheel fixed in place)
    is no caster: the robot is refused as two wheels, as before."""
    text = P3DX.replace('<joint name="base_swivel_joint" type="fixed">',
                        '<joint name="base_swivel_joint" type="fixed" extra="x">').replace(
        f'<origin xyz="{X_C} 0 0.085"/>', f'<origin xyz="{X_C} {Y_W} 0.085"/>')
    with pytest.raises(Exception, match=r"found 2 wheel\(s\)"):
        vehicle_from_urdf(_write(tmp_path, "fixed.urdf", text))


def test_mecanum_wheels_are_said_to_be_modelled_as_skid_steer(tmp_path):
    text = P3DX.replace("left_wheel", "left_mecanum_wheel").replace("right_wheel",
                                                                    "right_mecanum_wheel")
    with pytest.warns(UserWarning, match=r"named as mecanum or omni wheels; they are modelled "
                                         r"as ordinary wheels of a skid-steer vehicle"):
        vehicle_from_urdf(_write(tmp_path, "mec.urdf", text))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        vehicle_from_urdf(_write(tmp_path, "plain.urdf", P3DX))


#: a Kobuki-sized robot: 2.35 kg, wheels r 0.035 m at y = +-0.115 m, casters front and back
KOBUKI = """<?xml version="1.0"?>
<robot name="kobuki_like">
  <link name="base_footprint"/>
  <joint name="base_joint" type="fixed">
    <parent link="base_footprint"/><child link="chassis"/><origin xyz="0 0 0.0102"/>
  </joint>
  <link name="chassis">
    <collision><origin xyz="0 0 0.05"/><geometry><cylinder length="0.09" radius="0.176"/>
    </geometry></collision>
    <inertial><origin xyz="0.01 0 0.05"/><mass value="2.2"/>
      <inertia ixx="0.02" iyy="0.02" izz="0.035"/></inertial>
  </link>
  <joint name="wheel_left_joint" type="continuous">
    <parent link="chassis"/><child link="wheel_left_link"/>
    <origin xyz="0 0.115 0.0250" rpy="-1.5707963 0 0"/><axis xyz="0 0 1"/>
  </joint>
  <link name="wheel_left_link">
    <collision><geometry><cylinder length="0.0206" radius="0.0352"/></geometry></collision>
    <inertial><mass value="0.05"/><inertia ixx="1.2e-5" iyy="1.2e-5" izz="2.0e-5"/></inertial>
  </link>
  <joint name="wheel_right_joint" type="continuous">
    <parent link="chassis"/><child link="wheel_right_link"/>
    <origin xyz="0 -0.115 0.0250" rpy="-1.5707963 0 0"/><axis xyz="0 0 1"/>
  </joint>
  <link name="wheel_right_link">
    <collision><geometry><cylinder length="0.0206" radius="0.0352"/></geometry></collision>
    <inertial><mass value="0.05"/><inertia ixx="1.2e-5" iyy="1.2e-5" izz="2.0e-5"/></inertial>
  </link>
  <joint name="caster_front_joint" type="fixed">
    <parent link="chassis"/><child link="caster_front_link"/><origin xyz="0.115 0 0.007"/>
  </joint>
  <link name="caster_front_link">
    <collision><geometry><sphere radius="0.017"/></geometry></collision>
    <inertial><mass value="0.025"/><inertia ixx="1e-6" iyy="1e-6" izz="1e-6"/></inertial>
  </link>
  <joint name="caster_back_joint" type="fixed">
    <parent link="chassis"/><child link="caster_back_link"/><origin xyz="-0.135 0 0.009"/>
  </joint>
  <link name="caster_back_link">
    <collision><geometry><sphere radius="0.017"/></geometry></collision>
    <inertial><mass value="0.025"/><inertia ixx="1e-6" iyy="1e-6" izz="1e-6"/></inertial>
  </link>
</robot>
"""


@pytest.mark.filterwarnings("ignore:.*the wheels' contact plane")
def test_a_kobuki_sized_robot_runs_on_the_physical_model_from_the_cli(tmp_path, capsys):
    """Its base link is 'chassis' (--base), and the default 12.5 ms substep is past its
    stable range: the model chooses half the stable limit and says so; --max-substep
    chooses it; one past the limit is refused naming the option."""
    urdf = _write(tmp_path, "kobuki.urdf", KOBUKI)
    with pytest.raises(Exception, match=r"no link 'base_link'.*--base NAME"):
        vehicle_from_urdf(urdf)
    argv = ["demo", "--out", str(tmp_path / "out"), "--vehicle", str(urdf), "--base",
            "chassis", "--dynamics", "rigid_body", "--terrain", "flat", "--duration", "1",
            "--envs", "4", "--steps", "10", "--no-plots", "--animation-s", "0"]
    with pytest.warns(UserWarning, match=r"kobuki_like: the default max_substep 0.0125 s is "
                                         r"past its stable range"):
        assert main(argv) == 0
    out = capsys.readouterr().out
    assert "rigid_body" in out and "four_wheel" not in out.split("seed's drive")[1].split(
        "\n")[1]  # the column is the model that ran
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert list(report["drive"]) == ["rigid_body"]
    assert report["drive"]["rigid_body"]["off_map_steps"] == 0
    assert main(argv + ["--force", "--max-substep", "0.004"]) == 0
    assert main(argv + ["--force", "--max-substep", "0.05"]) == 2
    err = capsys.readouterr().err
    assert "max_substep 0.05 s is unstable" in err and "--max-substep" in err
    uni = [a if a != "rigid_body" else "unicycle" for a in argv]
    assert main(uni + ["--force", "--max-substep", "0.004"]) == 2
    assert "--max-substep is the physical model's" in capsys.readouterr().err
