"""The command line: generate, info, preview, demo; errors without tracebacks; no overwrites."""

import json

import numpy as np
import pytest
import torch
from PIL import Image

import terrain
from offroad_env.cli import main


def test_generate_info_preview(tmp_path, capsys):
    out = tmp_path / "m.png"
    assert main(["terrain", "generate", "perlin", "--size", "10", "8", "--resolution", "0.5",
                 "0.5", "--octaves", "3", "--seed", "4", "-o", str(out)]) == 0
    hm = terrain.load(out)
    assert hm.shape == (17, 21) and hm.size == (10.0, 8.0)
    direct = terrain.generate(terrain.PerlinConfig(size=(10.0, 8.0), resolution=0.5, octaves=3), 4)
    step = json.loads(out.with_suffix(".json").read_text())["zScale"] / 128
    assert np.abs(hm.heights.double().numpy() - direct).max() <= step / 2 + 1e-6
    capsys.readouterr()
    assert main(["terrain", "info", str(out), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["samples"] == [21, 17] and stats["extent_m"] == [10.0, 8.0]
    assert stats["slope_max_deg"] >= stats["slope_p95_deg"] >= stats["slope_median_deg"]
    assert main(["terrain", "info", str(out)]) == 0
    assert "slope" in capsys.readouterr().out
    assert main(["terrain", "preview", str(out)]) == 0
    with Image.open(tmp_path / "m_preview.png") as img:
        assert img.mode == "RGB" and img.size == (21, 17)


def test_preview_is_north_up_and_holes_are_magenta(tmp_path):
    h = np.zeros((10, 12))
    h[1, 1] = np.nan  # near the minimum y: the bottom of a north-up picture
    terrain.save(terrain.HeightMap(h, 1.0), tmp_path / "h.npy")
    assert main(["terrain", "preview", str(tmp_path / "h.npy"), "-o", str(tmp_path / "p.png")]) == 0
    with Image.open(tmp_path / "p.png") as img:
        a = np.array(img)
    assert tuple(a[-2, 1]) == terrain.preview.HOLE_COLOUR


def test_holes_need_a_format_that_stores_them(tmp_path, capsys):
    assert main(["terrain", "generate", "holes", "--size", "20", "20", "--count", "30",
                 "--base", "perlin", "-o", str(tmp_path / "h.png")]) == 2
    assert "npy" in capsys.readouterr().err
    assert main(["terrain", "generate", "holes", "--size", "20", "20", "--count", "30",
                 "-o", str(tmp_path / "h.npy")]) == 0
    assert terrain.load(tmp_path / "h.npy").has_holes


def test_no_overwrite_without_force_and_clear_errors(tmp_path, capsys):
    out = tmp_path / "f.png"
    args = ["terrain", "generate", "flat", "--size", "2", "2", "--resolution", "1", "1", "-o",
            str(out)]
    assert main(args) == 0
    assert main(args) == 2
    assert "--force" in capsys.readouterr().err
    assert main(args + ["--force"]) == 0
    assert main(["terrain", "generate", "perlin", "--octaves", "0", "-o", str(tmp_path / "x.png")]) == 2
    assert "octaves" in capsys.readouterr().err
    (tmp_path / "bad.png").write_bytes(b"garbage")
    assert main(["terrain", "info", str(tmp_path / "bad.png")]) == 2
    assert "bad.png" in capsys.readouterr().err


def test_demo_writes_terrain_drive_and_env_outputs(tmp_path, capsys):
    assert main(["demo", "--out", str(tmp_path), "--envs", "16", "--steps", "30",
                 "--animation-s", "1"]) == 0
    stats = json.loads((tmp_path / "terrain_stats.json").read_text())
    assert stats["samples"] == [201, 201]
    assert abs(stats["height_min_m"] + 2.56) < 0.01 and abs(stats["height_max_m"] - 3.18) < 0.01
    assert (tmp_path / "terrain_preview.png").stat().st_size > 1000
    report = json.loads((tmp_path / "report.json").read_text())
    fw = report["drive"]["four_wheel"]
    # the seed's drive: the rear axle covers 30 s x 2 m/s = 60 m; base_link, 0.256 m ahead of
    # it, covers more in the loops (the seed printed 62.15 m for its base_link path)
    assert fw["duration_s"] == 30.0 and 60 < fw["distance_m"] < 70
    assert 5 < fw["max_roll_deg"] < 45 and 5 < fw["max_pitch_deg"] < 45
    assert "rigid_contact" in report["drive"] and "seed published" in report["drive"]
    rows = (tmp_path / "drive.csv").read_text().splitlines()
    assert len(rows) == 3002
    header = rows[0].split(",")
    assert header[:7] == ["t", "x", "y", "z", "yaw", "pitch", "roll"]
    assert {"accel_x", "accel_z", "gyro_z"} <= set(header)
    # the IMU is the simulator's: over the drive, the mean vertical specific force is ~ g
    az = np.array([float(r.split(",")[header.index("accel_z")]) for r in rows[10:]])
    assert 9.0 < az.mean() < 10.6
    for name in ("plot_elevation.png", "plot_roll_pitch.png", "plot_yaw.png",
                 "plot_terrain_3d.png", "plot_map.png", "env_frame.png"):
        assert (tmp_path / name).stat().st_size > 5000, name
    assert "env-steps/s" in capsys.readouterr().out
    from PIL import Image
    with Image.open(tmp_path / "drive.gif") as gif:  # 1 s at 10 fps
        assert gif.n_frames == 10 and gif.size[0] > 300


def test_demo_options_file_terrain_other_vehicle_and_models(tmp_path, capsys):
    assert main(["terrain", "generate", "bumps", "-o", str(tmp_path / "m.npy")]) == 0
    out = tmp_path / "out"
    assert main(["demo", "--out", str(out), "--terrain", str(tmp_path / "m.npy"),
                 "--vehicle", "six_wheel_rover", "--dynamics", "skid_steer",
                 "--ground", "rigid_contact", "--duration", "2", "--no-plots",
                 "--envs", "4", "--steps", "5"]) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["options"]["vehicle"] == "six_wheel_rover"
    rc = report["drive"]["rigid_contact"]
    # a 500 kg skid-steer rover accelerates from rest towards 2 m/s. Rigid on bumps, it rests
    # on two or three wheels (the loads go to the touching ones), each driving at most
    # 12 N m / 0.2 m = 60 N against 2 % rolling resistance: it moves, but slowly (free of the
    # bumps, all six would give 262 N and 1 m in 2 s)
    assert rc["duration_s"] == 2.0 and 0.02 < rc["distance_m"] < 1.5
    assert not (out / "plot_map.png").exists()
    # the env part simulated the given map, vehicle and models too
    hm = terrain.load(tmp_path / "m.npy")
    env = report["env"]
    assert (env["vehicle"], env["dynamics"], env["ground"]) == (
        "six_wheel_rover", "skid_steer", "rigid_contact")
    assert env["map_bounds"] == list(hm.bounds) and env["map_samples"] == [hm.nx, hm.ny]


def test_the_help_lists_every_vehicle_model_and_map_file_type(capsys):
    """The demo's help names what the registries accept (presets, models, ground following,
    map suffixes, generators)."""
    from offroad_env.sim.config import DYNAMICS, GROUND_METHODS
    from offroad_env.physics.vehicle import PRESETS
    with pytest.raises(SystemExit):
        main(["demo", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for name in (*PRESETS, *DYNAMICS, *GROUND_METHODS, *terrain.MAP_SUFFIXES, ".urdf",
                 *(g for g in terrain.GENERATORS if g != "sum")):
        assert name in text, name


def test_demo_bad_options_are_clear_errors(tmp_path, capsys):
    assert main(["demo", "--out", str(tmp_path), "--terrain", "nosuch"]) == 2
    assert "nosuch" in capsys.readouterr().err
    assert main(["demo", "--out", str(tmp_path), "--duration", "-1"]) == 2
    assert main(["demo", "--out", str(tmp_path), "--animation-s", "-1"]) == 2
    assert "duration" in capsys.readouterr().err
    assert main(["demo", "--out", str(tmp_path / "v"), "--vehicle", "tank"]) == 2
    assert "tank" in capsys.readouterr().err


def test_a_preview_is_drawn_in_metres(tmp_path):
    """Spacings of 1 m in x and 2 m in y (a geographic DEM's degrees become unequal metres):
    the preview's pixels are square on the ground, so its aspect is the map's extent's."""
    hm = terrain.HeightMap(torch.zeros(31, 41, dtype=torch.float64), (1.0, 2.0))
    terrain.save_preview(hm, tmp_path / "p.png")
    w, h = Image.open(tmp_path / "p.png").size
    assert (w, h) == (41, 62)  # 41 x 31 samples over 40 x 60 m, at 1 m a pixel
