"""URDF wheels from their collision geometry (issue 43): the tyre among several cylinders, its
mid-plane off the joint's origin, mesh wheels measured or given a radius, differing radii,
tracked vehicles refused. The robots are hand-written replicas of public layouts; every
expected figure is computed by hand from the text below."""

import math
import sys
import warnings

import numpy as np
import pytest

from offroad_env.cli.commands import build_parser, urdf_vehicle_spec
from offroad_env.physics.vehicle import preset
from offroad_env.physics.urdf import URDFError
from offroad_env.physics.vehicle import vehicle_from_urdf

#: a small four-wheel rover: hubs at x = +-0.16, y = +-0.224 in base_link; base_link stands
#: 0.0625 m above base_footprint. Each wheel link holds three collision cylinders: a hub cap
#: (r 0.057) and the tyre (r 0.0625, 0.045 m inboard of the joint), both about the joint's
#: axis y, and a strut across it (r 0.09, axis z), which is not a tyre.
WHEEL = """
  <link name="{n}_link">
    {cap}
    <collision><origin xyz="0 {inboard} 0" rpy="1.5707963 0 0"/>
      <geometry><cylinder radius="{r}" length="0.04"/></geometry></collision>
    <collision><origin xyz="0 0 0.2" rpy="0 0 0"/>
      <geometry><cylinder radius="0.09" length="0.01"/></geometry></collision>
    <inertial><mass value="0.1"/><inertia ixx="1e-4" iyy="2e-4" izz="1e-4"/></inertial>
  </link>
  <joint name="{n}" type="continuous">
    <parent link="base_link"/><child link="{n}_link"/>
    <origin xyz="{x} {y} 0"/><axis xyz="0 1 0"/>
  </joint>"""

FOOTPRINT = """
  <link name="base_footprint"/>
  <joint name="footprint" type="fixed">
    <parent link="base_footprint"/><child link="base_link"/><origin xyz="0 0 0.0625"/>
  </joint>"""


CAP = """<collision><origin xyz="0 0 0" rpy="1.5707963 0 0"/>
      <geometry><cylinder radius="0.057" length="0.02"/></geometry></collision>"""


def rover(tmp_path, footprint=True, radii=(0.0625,) * 4, name="rover.urdf", cap=CAP):
    wheels = "".join(WHEEL.format(n=n, x=x, y=y, inboard=-0.045 if y > 0 else 0.045, r=r,
                                  cap=cap)
                     for (n, x, y), r in zip((("fl", 0.16, 0.224), ("fr", 0.16, -0.224),
                                              ("rl", -0.16, 0.224), ("rr", -0.16, -0.224)),
                                             radii))
    text = ('<robot name="rover"><link name="base_link"><inertial><mass value="2.0"/>'
            '<inertia ixx="0.01" iyy="0.02" izz="0.03"/></inertial></link>'
            + (FOOTPRINT if footprint else "") + wheels + "</robot>")
    path = tmp_path / name
    path.write_text(text)
    return path


def test_the_tyre_is_the_cylinder_about_the_axis_that_meets_the_footprint(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the footprint settles it: no warning
        v = vehicle_from_urdf(rover(tmp_path))
    assert v.wheel_radius == 0.0625  # the hub's height above base_footprint
    assert v.wheel_width == 0.04  # the tyre's length, not the hub cap's
    # the tyres' mid-planes sit 0.045 m inboard: track 2 (0.224 - 0.045) = 0.358 m, not 0.448
    assert v.track_width == pytest.approx(0.358, abs=1e-12)
    assert v.wheel_base == pytest.approx(0.32, abs=1e-12)
    assert sorted(abs(y) for _, y in v.wheel_positions) == pytest.approx([0.179] * 4)


def test_without_a_footprint_the_largest_tyre_is_taken_with_a_warning(tmp_path):
    with pytest.warns(UserWarning, match=r"radii \[0\.057, 0\.0625\] about its axis; took the "
                                         r"largest, 0\.0625 m"):
        v = vehicle_from_urdf(rover(tmp_path, footprint=False))
    assert v.wheel_radius == 0.0625
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a radius given: nothing to choose
        assert vehicle_from_urdf(rover(tmp_path, footprint=False),
                                 wheel_radius=0.06).wheel_radius == 0.06


def test_differing_radii_name_the_option_that_fixes_them(tmp_path):
    """A CAD export whose tyres are 0.01, 0.03 and 0.05 m: refused, naming wheel_radius; with
    it, the vehicle loads, and so does the preset string the configs and the CLI use."""
    path = rover(tmp_path, footprint=False, radii=(0.01, 0.03, 0.05, 0.05), cap="")
    with pytest.raises(URDFError, match=r"radii differ .* wheel_radius=R \(the CLI's "
                                        r"--wheel-radius R\)"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            vehicle_from_urdf(path)
    assert preset(f"{path}?wheel_radius=0.05").wheel_radius == 0.05
    assert preset(f"{path}?wheels=fl,fr,rl,rr&wheel_radius=0.05").num_wheels == 4
    with pytest.raises(ValueError, match=r"'radius=1' is not one KEY=VALUE of \('wheels'"):
        preset(f"{path}?radius=1")
    args = build_parser().parse_args(["demo", "--vehicle", str(path), "--wheels", "fl,fr,rl,rr",
                                      "--wheel-radius", "0.05"])
    assert urdf_vehicle_spec(args) == f"{path}?wheels=fl,fr,rl,rr&wheel_radius=0.05"


def _stl_wheel(path, radius_mm=80.0, width_mm=50.0, n=24):
    """An ASCII STL of a closed cylinder about the y axis, in millimetres."""
    ring = [(radius_mm * math.cos(2 * math.pi * k / n), radius_mm * math.sin(2 * math.pi * k / n))
            for k in range(n)]
    w = width_mm / 2
    facets = []
    for k in range(n):
        (x0, z0), (x1, z1) = ring[k], ring[(k + 1) % n]
        facets += [((x0, -w, z0), (x1, -w, z1), (x1, w, z1)), ((x0, -w, z0), (x1, w, z1),
                                                               (x0, w, z0)),
                   ((0, -w, 0), (x1, -w, z1), (x0, -w, z0)), ((0, w, 0), (x0, w, z0),
                                                               (x1, w, z1))]
    lines = ["solid wheel"]
    for tri in facets:
        lines += ["facet normal 0 0 0", "outer loop"]
        lines += [f"vertex {a:.9f} {b:.9f} {c:.9f}" for a, b, c in tri]
        lines += ["endloop", "endfacet"]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines + ["endsolid wheel"]) + "\n")


def _mesh_rover(tmp_path):
    """The rover's wheels drawn only by a mesh in millimetres (scale 0.001), by package path."""
    folder = tmp_path / "rover_description"
    _stl_wheel(folder / "meshes" / "wheel.stl")
    text = rover(tmp_path, footprint=False).read_text()
    mesh = ('<collision><geometry><mesh filename="package://rover_description/meshes/wheel.stl"'
            ' scale="0.001 0.001 0.001"/></geometry></collision>')
    import re
    text = re.sub(r"<collision>.*?</collision>", "", text, flags=re.S)
    text = text.replace("<inertial><mass value=\"0.1\"/>", mesh + "<inertial><mass value=\"0.1\"/>")
    path = folder / "urdf" / "rover.urdf"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_mesh_wheels_are_measured_about_their_axis(tmp_path):
    pytest.importorskip("trimesh")
    path = _mesh_rover(tmp_path)
    v = vehicle_from_urdf(path, wheels=["fl", "fr", "rl", "rr"])
    assert v.wheel_radius == pytest.approx(0.080, abs=1e-9)  # 80 mm x scale 0.001
    assert v.track_width == pytest.approx(0.448)  # no tyre offset: the joints' origins
    # package_dir names the folder that holds the package
    assert vehicle_from_urdf(path, wheels=["fl", "fr", "rl", "rr"],
                             package_dir=tmp_path).wheel_radius == pytest.approx(0.080)


def test_mesh_wheels_without_a_reader_or_a_file_say_which_option_to_use(tmp_path, monkeypatch):
    path = _mesh_rover(tmp_path)
    wheels = ["fl", "fr", "rl", "rr"]
    with pytest.raises(URDFError, match="found 0 wheel.*--wheels.*--wheel-radius"):
        vehicle_from_urdf(path)
    with pytest.raises(URDFError, match="not found; give the tyre radius with wheel_radius=R.*"
                                        "package_dir=DIR \\(the CLI's --package-dir DIR\\)"):
        vehicle_from_urdf(path, wheels=wheels, package_dir=tmp_path / "elsewhere")
    monkeypatch.setitem(sys.modules, "trimesh", None)  # not installed
    with pytest.raises(URDFError, match="--wheel-radius R\\), or pip install trimesh"):
        vehicle_from_urdf(path, wheels=wheels)
    assert vehicle_from_urdf(path, wheels=wheels, wheel_radius=0.08).wheel_radius == 0.08


def test_a_tracked_vehicle_is_refused_with_what_to_do_instead(tmp_path):
    """16 road wheels as revolute joints with mesh collisions, and two track links."""
    parts = ['<robot name="tank"><link name="base_link"><inertial><mass value="500"/>'
             '<inertia ixx="1" iyy="1" izz="1"/></inertial></link>']
    for side, y in (("left", 0.6), ("right", -0.6)):
        parts.append(f'<link name="{side}_track"/><joint name="{side}_track_j" type="fixed">'
                     f'<parent link="base_link"/><child link="{side}_track"/></joint>')
        for i in range(8):
            n = f"{side}_road_wheel_{i}"
            parts.append(f'<link name="{n}"><collision><geometry><mesh filename="rw.stl"/>'
                         f'</geometry></collision></link><joint name="{n}_j" type="revolute">'
                         f'<parent link="base_link"/><child link="{n}"/>'
                         f'<origin xyz="{0.2 * i} {y} 0"/><axis xyz="0 1 0"/></joint>')
    (tmp_path / "tank.urdf").write_text("".join(parts) + "</robot>")
    with pytest.raises(URDFError, match=r"tracked vehicles are not supported .* wheels=\[\.\.\.\]"
                                        r" naming them and wheel_radius=R"):
        vehicle_from_urdf(tmp_path / "tank.urdf")
    # what it says to do works: the road wheels as a skid-steer vehicle
    wheels = [f"{s}_road_wheel_{i}_j" for s in ("left", "right") for i in range(8)]
    v = vehicle_from_urdf(tmp_path / "tank.urdf", wheels=wheels, wheel_radius=0.15)
    assert v.num_wheels == 16 and v.wheel_base == pytest.approx(1.4)
    assert v.track_width == pytest.approx(1.2) and np.isclose(v.wheel_radius, 0.15)


def test_a_run_folder_keeps_a_urdf_vehicles_options(tmp_path):
    """``train`` copies the URDF into the run folder and keeps its ``?`` options."""
    from train.common.envconfig import pack_inputs, resolve_inputs
    path = rover(tmp_path, footprint=False, radii=(0.01, 0.03, 0.05, 0.05), cap="")
    spec = pack_inputs({"sim": {"vehicle": f"{path}?wheel_radius=0.05"}}, tmp_path / "run")
    assert spec["sim"]["vehicle"] == "inputs/rover.urdf?wheel_radius=0.05"
    back = resolve_inputs(spec, tmp_path / "run")["sim"]["vehicle"]
    assert back == f"{tmp_path / 'run' / 'inputs' / 'rover.urdf'}?wheel_radius=0.05"
    assert preset(back).wheel_radius == 0.05
