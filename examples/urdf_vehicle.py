"""A vehicle from its URDF: the Husky's (or any) description, driven over rough ground, with its
wheel loads.

    python examples/urdf_vehicle.py --urdf my_robot.urdf
"""

import argparse

import torch

from offroad_env import OffroadVectorEnv, Vehicle, data_file

URDF = data_file("husky.urdf")  # shipped with the package


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--urdf", default=str(URDF))
    p.add_argument("--steps", type=int, default=50)
    a = p.parse_args(argv)
    v = Vehicle.from_urdf(a.urdf)
    print(f"{v.name}: wheel base {v.wheel_base} m, track {v.track_width} m, radius "
          f"{v.wheel_radius} m, mass {v.mass:.2f} kg, rear axle at "
          f"{[round(v.rear_axle_pose[i][3], 5) for i in range(3)]} in base_link")
    env = OffroadVectorEnv(num_envs=4, vehicle=a.urdf, ground="rigid_contact",
                           dynamics="skid_steer")
    env.reset(seed=0)
    for _ in range(a.steps):
        env.step(torch.tensor([[0.8, 0.6]] * 4))
    loads = env.state_view().contact.normal_force
    print("wheel loads [N] after the drive:", loads[0].tolist(), "sum", float(loads[0].sum()),
          "m g", v.mass * 9.81)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
