"""Vehicles from URDF: the Husky gives the four-wheel seed's figures, the Jackal its file's."""

import pytest

from offroad_env import OffroadVectorEnv, Vehicle, data_file, husky
from offroad_env.physics.urdf import URDFError

DATA = data_file("husky.urdf").parent  # copies of ../shared/data/urdf (README_urdf.md there)


def test_husky_from_urdf_is_the_seeds_vehicle():
    v = Vehicle.from_urdf(DATA / "husky.urdf")
    assert (v.wheel_base, v.track_width, v.wheel_radius) == (0.512, 0.5708, 0.1651)
    assert [v.rear_axle_pose[i][3] for i in range(3)] == [-0.256, 0.0, 0.03282]
    assert v.is_rectangle and v.num_wheels == 4
    # chassis 46.034 kg + four wheels of 2.637 kg, as the preset
    assert v.mass == pytest.approx(46.034 + 4 * 2.637) == pytest.approx(husky().mass)
    # the URDF's chassis inertial sits 0.085 m to the right of base_link's centre line
    assert v.com[1] == pytest.approx(46.034 * -0.085 / v.mass)


def test_jackal_from_urdf_walks_the_tree_through_chassis_link():
    v = Vehicle.from_urdf(DATA / "jackal.urdf")
    # wheels at (+-0.131, +-0.187795, 0.0345) in chassis_link, which sits at base_link's origin
    assert v.wheel_base == pytest.approx(0.262) and v.track_width == pytest.approx(2 * 0.187795)
    assert v.wheel_radius == 0.098
    assert [v.rear_axle_pose[i][3] for i in range(3)] == pytest.approx([-0.131, 0.0, 0.0345])
    assert v.mass == pytest.approx(16.523 + 4 * 0.477 + 0.001)  # chassis, wheels, a 1 g link


def test_a_urdf_vehicle_drives_and_bad_files_are_clear_errors(tmp_path):
    env = OffroadVectorEnv(num_envs=2, vehicle=str(DATA / "jackal.urdf"), num_maps=1)
    env.reset(seed=0)
    env.step(env.action_space.sample())
    assert env.vehicle.name == "jackal"
    (tmp_path / "x.urdf").write_text('<robot name="r" xmlns:xacro="http://ros.org/wiki/xacro">'
                                     '<xacro:macro name="m"/><link name="base_link"/></robot>')
    with pytest.raises(URDFError, match="xacro"):
        Vehicle.from_urdf(tmp_path / "x.urdf")
    (tmp_path / "y.urdf").write_text('<robot name="r"><link name="base_link"/></robot>')
    with pytest.raises(URDFError, match="wheel"):
        Vehicle.from_urdf(tmp_path / "y.urdf")
    (tmp_path / "z.urdf").write_text("<robot")
    with pytest.raises(URDFError, match="not XML"):
        Vehicle.from_urdf(tmp_path / "z.urdf")
    with pytest.raises(URDFError, match="no such file"):
        Vehicle.from_urdf(tmp_path / "none.urdf")


def test_the_wheel_joints_limit_effort_is_the_drives_torque_limit(tmp_path):
    import re
    src = (DATA / "husky.urdf").read_text()
    assert Vehicle.from_urdf(DATA / "husky.urdf").wheel_torque is None  # the file gives none
    wheels = r'(<joint name="\w+_wheel(?:_joint)?" type="continuous">)'
    with_limits = re.sub(wheels, r'\1<limit effort="30" velocity="10"/>', src)
    assert with_limits.count('effort="30"') == 4
    (tmp_path / "h.urdf").write_text(with_limits)
    assert Vehicle.from_urdf(tmp_path / "h.urdf").wheel_torque == 30.0
    (tmp_path / "odd.urdf").write_text(with_limits.replace('effort="30"', 'effort="20"', 1))
    with pytest.raises(URDFError, match="limit efforts differ"):
        Vehicle.from_urdf(tmp_path / "odd.urdf")
    (tmp_path / "neg.urdf").write_text(with_limits.replace('effort="30"', 'effort="-1"', 1))
    with pytest.raises(URDFError, match="must be > 0"):
        Vehicle.from_urdf(tmp_path / "neg.urdf")


def test_the_urdf_gives_the_inertia_tensor_tyre_width_and_wheel_spin_inertia():
    """The tensor about the centre of mass by a second route: every link's tensor plus its
    point mass about base_link's origin, moved to the centre of mass by subtracting the whole
    mass's parallel-axis term (the parser sums about the centre of mass directly)."""
    import numpy as np
    v = Vehicle.from_urdf(DATA / "husky.urdf")
    chassis = (46.034, np.array([-0.00065, -0.085, 0.062]),
               np.array([[0.6022, -0.02364, -0.1197], [-0.02364, 1.7386, -0.001544],
                         [-0.1197, -0.001544, 2.0296]]))
    wheel_I = np.diag([0.02467, 0.04411, 0.02467])
    parts = [chassis] + [(2.637, np.array([x, y, 0.03282]), wheel_I)
                         for x in (0.256, -0.256) for y in (0.2854, -0.2854)]
    point = lambda m, c: m * (c @ c * np.eye(3) - np.outer(c, c))  # noqa: E731
    M = sum(m for m, _, _ in parts)
    C = sum(m * c for m, c, _ in parts) / M
    J = sum(I + point(m, c) for m, c, I in parts) - point(M, C)
    assert np.asarray(v.inertia) == pytest.approx(J, abs=1e-9)
    assert (v.inertia[0][0], v.inertia[1][1]) == (v.inertia_roll, v.inertia_pitch)
    # the wheel cylinders' length; the wheel links' inertia about the joint axis (0 1 0)
    assert v.wheel_width == 0.1143 and v.wheel_inertia == pytest.approx(0.04411)
    j = Vehicle.from_urdf(DATA / "jackal.urdf")
    assert j.wheel_width == 0.04 and j.wheel_inertia > 0


def test_urdf_user_trial_errors_say_what_is_wrong(tmp_path):
    """Issue 27, item 12: an unexpanded xacro value, two wheels and an unattached caster link (a
    robot on two wheels and casters: tests/physics/test_urdf_wheels.py), a hub 5 cm lower than
    the others."""
    import re
    import warnings
    src = (DATA / "husky.urdf").read_text()
    (tmp_path / "x.urdf").write_text(src.replace('radius="0.1651"', 'radius="${wheel_radius}"', 1))
    with pytest.raises(URDFError, match=r"cylinder radius '\$\{wheel_radius\}' is an unexpanded "
                                        r"xacro expression: the file is xacro; expand it"):
        Vehicle.from_urdf(tmp_path / "x.urdf")
    # two wheels and a caster link that no joint attaches: no caster, two wheels, refused
    two = re.sub(r'<joint name="rear_(left|right)_wheel" type="continuous">',
                 r'<joint name="rear_\1_wheel" type="fixed">', src)
    two = two.replace("</robot>", '<link name="caster_back_link"><collision><geometry>'
                                  '<sphere radius="0.01"/></geometry></collision></link></robot>')
    (tmp_path / "c.urdf").write_text(two)
    for wheels in (None, ["front_left_wheel", "front_right_wheel"]):
        with pytest.raises(URDFError, match=r"found 2 wheel\(s\)"):
            Vehicle.from_urdf(tmp_path / "c.urdf", wheels=wheels)
    low = src.replace('xyz="0.256 0.2854 0.03282"', 'xyz="0.256 0.2854 -0.01718"')
    (tmp_path / "l.urdf").write_text(low)
    with pytest.warns(UserWarning, match=r"the wheel hubs' heights differ by 0.050 m"):
        Vehicle.from_urdf(tmp_path / "l.urdf")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Vehicle.from_urdf(DATA / "husky.urdf")  # level hubs: no warning


def test_the_readmes_data_ship_with_the_package():
    """Issue 27, item 6: the SRTM window and the URDFs the README uses are package data."""
    from offroad_env.data import DATA_FILES
    for name in DATA_FILES + ("README_dem.md", "README_urdf.md", "LICENSE.husky"):
        assert data_file(name).is_file()
    assert "offroad_env" in data_file("husky.urdf").parts
    with pytest.raises(FileNotFoundError, match=r"ships no data file 'nope.tif'; it ships \[.*"
                                                r"'husky.urdf'"):
        data_file("nope.tif")
