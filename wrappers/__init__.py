"""Gymnasium wrappers made for the offroad environments.

* :class:`DomainRandomization` / :class:`DomainRandomizationEnv` with
  :class:`RandomizationConfig`: per-episode mass, centre of mass, wheel radius, friction,
  terrain and IMU noise, drawn from the env's seeded per-env streams.
* :class:`ObservationDelay`, :class:`ActionDelay`: latency, aware of every autoreset mode.
  (IMU noise and bias walk: ``ImuConfig``; action repeat: ``SimConfig.action_repeat``.)
* :class:`TerrainCurriculum`: Isaac-Lab-style terrain levels over ``OffroadTraverse-v1``'s
  stacked family levels.
* :class:`TrajectoryRecorder`: an ``.npz`` / CSV log per episode (pose, IMU, actions, reward
  terms). Video: Gymnasium's ``RecordVideo`` (``video`` extra).
* :class:`TorchRecordEpisodeStatistics`, :class:`TorchNormalizeObservation`: Gymnasium's
  vector ``RecordEpisodeStatistics`` and ``NormalizeObservation`` for torch outputs (same
  options and ``info["episode"]`` layout).
* :class:`SB3VecEnv` (``wrappers.sb3``, needs stable-baselines3): the native vector env as a
  Stable-Baselines3 ``VecEnv``.

Gymnasium's own wrappers (``TimeLimit``, vector ``RecordEpisodeStatistics``,
``NormalizeObservation``, ``ArrayConversion``) and TorchRL's ``GymWrapper`` run on the native
env as they are; see the README for the autoreset mode each needs.
"""

from .curriculum import TerrainCurriculum
from .randomization import DomainRandomization, DomainRandomizationEnv, RandomizationConfig
from .recording import TrajectoryRecorder, load_episode
from .sensors import ActionDelay, ObservationDelay
from .statistics import TorchNormalizeObservation, TorchRecordEpisodeStatistics

__all__ = ["TerrainCurriculum", "DomainRandomization", "DomainRandomizationEnv",
           "RandomizationConfig",
           "ObservationDelay", "ActionDelay", "TrajectoryRecorder", "load_episode", "SB3VecEnv",
           "TorchRecordEpisodeStatistics", "TorchNormalizeObservation"]


def __getattr__(name):
    if name == "SB3VecEnv":  # imported on use: stable-baselines3 is an optional extra
        from .sb3 import SB3VecEnv
        return SB3VecEnv
    raise AttributeError(f"module 'wrappers' has no attribute {name!r}")
