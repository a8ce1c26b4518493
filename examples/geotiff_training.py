"""Training on one's own DEM: a GeoTIFF (here the bundled SRTM window, 24.65 x 30.83 m samples,
with holes) as the terrain, through the training command's ``--terrain`` option.

    python examples/geotiff_training.py --dem my_dem.tif --total-steps 1000000
"""

import argparse

import gymnasium as gym

import offroad_env  # noqa: F401
from offroad_env import data_file
import terrain
from train import ppo

DEM = data_file("srtm1_n37w123_crop401.tif")  # shipped with the package


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--dem", default=str(DEM))
    p.add_argument("--total-steps", type=int, default=1_000_000)
    p.add_argument("--out", default="runs/example_dem")
    a = p.parse_args(argv)
    hm = terrain.load(a.dem)
    print(hm, "bounds", hm.bounds, "holes:", hm.has_holes)
    # at 25-30 m a sample, a goal 60-150 m away and a 3 m/s vehicle suit the map
    env = gym.make("offroad_env/OffroadNav-v1", terrain=a.dem, max_speed=3.0,
                   task=offroad_env.TaskConfig(goal_distance=(60.0, 150.0), spawn_margin=200.0))
    env.reset(seed=0)
    env.close()
    return ppo.main(["--terrain", a.dem, "--max-speed", "3", "--task-goal-distance", "60", "150",
                     "--task-spawn-margin", "200", "--total-steps", str(a.total_steps),
                     "--num-envs", "32", "--num-steps", "16", "--num-minibatches", "2",
                     "--no-progress", "--out", a.out, "--force"])


if __name__ == "__main__":
    raise SystemExit(main())
