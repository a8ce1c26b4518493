"""offroad-env: Gymnasium environments for wheeled robots on height-map terrain.

The physics is one batched torch core (first dimension = environment index): vehicles
(:mod:`offroad_env.physics.vehicle`), dynamics and actuation (:mod:`offroad_env.physics.dynamics`,
:mod:`offroad_env.physics.drive`), ground following (the :mod:`offroad_env.physics.ground` package), sensors,
observation terms, reward terms and end reasons (:mod:`offroad_env.core.sensors`,
:mod:`offroad_env.task.observations`, :mod:`offroad_env.task.task`) over one state
(:mod:`offroad_env.core.state`), orchestrated by :class:`Simulator` (:mod:`offroad_env.sim.simulator`), with
the Gymnasium classes (:class:`OffroadVectorEnv`, :class:`OffroadEnv`) on top, all on the
:mod:`terrain` package. ARCHITECTURE.md draws the house.

Importing the package registers the environments::

    import gymnasium as gym
    import offroad_env  # noqa: F401
    env = gym.make("offroad_env/OffroadNav-v1")
    venv = gym.make_vec("offroad_env/OffroadNav-v1", num_envs=4096,
                        vectorization_mode="vector_entry_point")
"""

import os

from offroad_env._siblings import check_siblings

check_siblings()  # a user's own `terrain` folder would be imported in place of ours

import gymnasium as gym  # noqa: E402
import torch  # noqa: E402

from offroad_env.core.devices import check_device  # noqa: E402
from offroad_env.core.state import wheel_ruts  # noqa: E402
from offroad_env.data import data_file  # noqa: E402
from offroad_env.env import OffroadEnv  # noqa: E402
from offroad_env.physics.ground import (GroundContact, four_wheel, place,  # noqa: E402
                                        rigid_contact)
from offroad_env.physics.models.base import Field  # noqa: E402
from offroad_env.physics.vehicle import (Vehicle, eight_wheel_rover, husky,  # noqa: E402
                                         preset, rc_truck, six_wheel_rover)
from offroad_env.sim.config import (DYNAMICS, GROUND_METHODS, OBS_TERMS,  # noqa: E402
                                    HeightScanConfig, ImuConfig, SimConfig, TaskConfig,
                                    check_obs_terms, family_config, make_config)
from offroad_env.sim.rest_probe import MIN_REST_SHARE  # noqa: E402
from offroad_env.sim.simulator import Simulator  # noqa: E402
from offroad_env.snapshot import Snapshot, get_state, set_state  # noqa: E402
from offroad_env.task.task import EndReason  # noqa: E402
from offroad_env.task.terms import (EventTerm, ObservationTerm, RewardTerm,  # noqa: E402
                                    TerminationTerm)
from offroad_env.vector_env import OffroadVectorEnv  # noqa: E402

__version__ = "0.2.0"

__all__ = ["Vehicle", "husky", "six_wheel_rover", "eight_wheel_rover", "rc_truck", "preset",
           "GroundContact", "four_wheel", "rigid_contact", "place", "SimConfig", "TaskConfig",
           "ImuConfig", "HeightScanConfig", "Simulator", "make_config", "EndReason", "OffroadEnv",
           "OffroadVectorEnv", "ENV_IDS", "OLD_ENV_IDS", "env_config", "check_device", "data_file", "Snapshot", "get_state",
           "set_state", "RewardTerm", "TerminationTerm", "ObservationTerm", "EventTerm", "Field",
           "wheel_ruts", "DYNAMICS", "GROUND_METHODS", "OBS_TERMS", "check_obs_terms",
           "family_config", "MIN_REST_SHARE"]

def _one_thread_after_fork() -> None:
    """In a forked child (gymnasium's async vector env forks by default), torch's intra-op
    thread pool inherited from a parent that already ran parallel ops hangs the first op; the
    child steps one env, so one thread is what it needs (PyTorch's DataLoader workers do the
    same)."""
    torch.set_num_threads(1)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_one_thread_after_fork)

_NAMES = {"OffroadNav": "nav", "OffroadVelocity": "velocity", "OffroadNavRough": "nav_rough",
          "OffroadTraverse": "traverse"}
#: the registered ids, their current versions, and their task
ENV_IDS = {f"offroad_env/{name}-v1": task for name, task in _NAMES.items()}
#: the earlier versions, kept registered so that runs and figures made on them repeat: -v0 is
#: the 0.1 reward, in which falling into a hole or off the map cost nothing (v1: ``fall``, -10)
OLD_ENV_IDS = {f"offroad_env/{name}-v0": task for name, task in _NAMES.items()}

#: episode steps of each task (0.05 s steps: 25 s; the traverse task 30 s, for detours)
EPISODE_STEPS = {"traverse": 600}

for _ids, _version in ((ENV_IDS, 1), (OLD_ENV_IDS, 0)):
    for _id, _task in _ids.items():
        if _id not in gym.registry:
            gym.register(id=_id, entry_point="offroad_env.env:OffroadEnv",
                         vector_entry_point="offroad_env.vector_env:OffroadVectorEnv",
                         max_episode_steps=EPISODE_STEPS.get(_task, 500),
                         # base_task: a TaskConfig passed as task= replaces the task of this
                         # id's config, not the whole config (make_config)
                         kwargs={"task": _task, "base_task": _task, "version": _version})


def env_config(env_id: str, **overrides) -> SimConfig:
    """The :class:`SimConfig` that the registered id ``env_id`` (any version, :data:`ENV_IDS`
    or :data:`OLD_ENV_IDS`) builds, with fields overridden by keyword (as ``gym.make`` passes
    them)."""
    if env_id not in ENV_IDS and env_id not in OLD_ENV_IDS:
        raise ValueError(f"{env_id!r} is not an offroad_env id; ids: {sorted(ENV_IDS)} (and "
                         f"the earlier {sorted(OLD_ENV_IDS)})")
    return make_config(**{**gym.spec(env_id).kwargs, **overrides})
