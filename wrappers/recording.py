"""Trajectory recording: one log per finished episode (pose, IMU, actions, every reward term).

Video recording is Gymnasium's own ``gymnasium.wrappers.RecordVideo`` on the single env with
``render_mode="rgb_array"`` (install the ``video`` extra for moviepy); it is tested on this env,
not rewritten.
"""

from __future__ import annotations

import csv
from pathlib import Path

import gymnasium as gym
import numpy as np
import torch
from gymnasium.vector import AutoresetMode

from offroad_env.seams import SimulatorSeams

from offroad_env.seams import autoreset_mode, reset_mask

__all__ = ["TrajectoryRecorder", "load_episode", "COLUMNS"]

#: per-step columns: step index, base_link position [m], ZYX angles [rad], IMU specific force
#: [m/s^2] and angular rate [rad/s] (sensor frame), the action executed, the reward
COLUMNS = ("step", "x", "y", "z", "yaw", "pitch", "roll", "accel_x", "accel_y", "accel_z",
           "gyro_x", "gyro_y", "gyro_z")


class TrajectoryRecorder(gym.vector.VectorWrapper):
    """Writes ``<folder>/env<i>_ep<k>.npz`` (or ``.csv``) when an episode of sub-env ``i`` ends.

    Each file holds the columns of :data:`COLUMNS`, ``action_<j>``, ``reward``, one
    ``reward/<term>`` column per reward term, and (npz) the ``end_reason``. Rows are the states
    after each executed step (the final state included, in every autoreset mode).

    Args:
        folder: output folder (created).
        envs: sub-env indices to record (default all).
        fmt: ``"npz"`` or ``"csv"``.
        max_episodes: stop writing after this many files (None: no limit).
    """

    def __init__(self, env: gym.vector.VectorEnv, folder, envs=None, fmt: str = "npz",
                 max_episodes: int | None = None):
        super().__init__(env)
        if fmt not in ("npz", "csv"):
            raise ValueError(f"fmt must be 'npz' or 'csv', got {fmt!r}")
        base = env.unwrapped
        if not isinstance(base, SimulatorSeams):
            raise TypeError(f"TrajectoryRecorder needs an offroad env, got {type(base).__name__}")
        self._base = base
        n = self.num_envs
        self.envs = list(range(n)) if envs is None else [int(i) for i in envs]
        if not self.envs or any(not 0 <= i < n for i in self.envs):
            raise ValueError(f"envs must be sub-env indices in [0, {n}), got {envs!r}")
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.fmt = fmt
        if max_episodes is not None and (int(max_episodes) != max_episodes or max_episodes < 0):
            raise ValueError(f"max_episodes must be None or an int >= 0, got {max_episodes!r}")
        self.max_episodes = max_episodes
        self.written: list[Path] = []
        self._sel = torch.tensor(self.envs, device=base.device)
        self._rows: dict[int, list] = {i: [] for i in self.envs}
        self._episode = {i: 0 for i in self.envs}
        self._final = None
        self._pending = torch.zeros(n, dtype=torch.bool, device=base.device)
        self._started = False
        base.add_reset_hook(self._before_reset)
        self._terms = list(base.reward_terms)

    def _state(self) -> torch.Tensor:
        """``(N, 12)`` pose and IMU of the current state."""
        v = self._base.state_view()
        return torch.cat((v.base_position_w, v.ypr, v.accel_s, v.gyro_s), 1)

    def _before_reset(self, mask):
        # the simulator is about to reset these rows: keep their final state
        if self._started:
            self._final = (mask.clone(), self._state())

    def reset(self, *, seed=None, options=None):
        out = self.env.reset(seed=seed, options=options)
        self._started = True
        m = reset_mask(options, self.num_envs, "cpu")
        rows = [i for i in self.envs if bool(m[i])]
        for i in rows:
            self._rows[i] = []
        self._pending = torch.zeros_like(self._pending)
        self._final = None
        return out

    def step(self, actions):
        a = torch.as_tensor(actions, device=self._base.device)
        self._final = None
        obs, rew, term, trunc, info = self.env.step(actions)
        state = self._state()
        if self._final is not None:  # rows reset inside the step: their state before it
            mask, before = self._final
            state = torch.where(mask.unsqueeze(1), before, state)
        done = term | trunc
        executed = ~self._pending if autoreset_mode(self.env) == AutoresetMode.NEXT_STEP else \
            torch.ones_like(done)
        terms = torch.stack([info[f"reward/{t}"] for t in self._terms], 1)
        row = torch.cat((state, a.to(state.dtype).clamp(-1.0, 1.0), rew.unsqueeze(1).to(state.dtype),
                         terms.to(state.dtype)), 1)[self._sel].cpu().numpy()
        ex = executed[self._sel].cpu().numpy()
        dn = done[self._sel].cpu().numpy()
        reason = info["end_reason"][self._sel].cpu().numpy() if "end_reason" in info else None
        for j, i in enumerate(self.envs):
            if not ex[j]:
                continue
            self._rows[i].append(row[j])
            if dn[j]:
                self._write(i, int(reason[j]) if reason is not None else 0)
        if autoreset_mode(self.env) == AutoresetMode.NEXT_STEP:
            self._pending = done
        return obs, rew, term, trunc, info

    def _write(self, i: int, reason: int):
        rows = np.stack(self._rows[i])
        self._rows[i] = []
        k = self._episode[i]
        self._episode[i] += 1
        if self.max_episodes is not None and len(self.written) >= self.max_episodes:
            return
        A = self.single_action_space.shape[0]
        names = list(COLUMNS[1:]) + [f"action_{j}" for j in range(A)] + ["reward"] + \
            [f"reward/{t}" for t in self._terms]
        cols = {"step": np.arange(1, len(rows) + 1)}
        cols.update({name: rows[:, c] for c, name in enumerate(names)})
        path = self.folder / f"env{i:05d}_ep{k:05d}.{self.fmt}"
        if self.fmt == "npz":
            np.savez(path, end_reason=np.array(self.env.unwrapped.end_labels[int(reason)]),
                     **cols)
        else:
            with open(path, "w", newline="") as f:
                w = csv.writer(f)
                w.writerow(list(cols))
                for r in range(len(rows)):
                    w.writerow([int(cols["step"][r])] + [f"{cols[c][r]:.9g}" for c in names])
        self.written.append(path)


def load_episode(path) -> dict:
    """A recorded episode as ``{column: array}`` (npz or csv)."""
    path = Path(path)
    if path.suffix == ".npz":
        with np.load(path) as z:
            return {k: z[k] for k in z.files}
    with open(path) as f:
        r = csv.reader(f)
        header = next(r)
        data = np.array([[float(v) for v in row] for row in r])
    return {h: data[:, j] for j, h in enumerate(header)}
