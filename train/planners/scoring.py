"""What the sampling planners (:mod:`train.planners.rollout`, :mod:`train.planners.mppi`) score a
look-ahead by: how each row ended, and the progress it made toward its goal."""

from __future__ import annotations

import torch

from offroad_env.task.task import EndReason

__all__ = ["end_flags", "progress"]


def end_flags(why: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(goal, fatal, stopped)`` ``(M,)`` bool from a look-ahead's last end reasons ``why``
    (``Rollout.end_reason[-1]``): the goal reached; a fatal end (tip-over, hole, off the map);
    stuck or diverged."""
    goal = why == int(EndReason.GOAL_REACHED)
    fatal = ((why == int(EndReason.TIP_OVER)) | (why == int(EndReason.HOLE))
             | (why == int(EndReason.OFF_MAP)))
    stopped = (why == int(EndReason.STUCK)) | (why == int(EndReason.DIVERGED))
    return goal, fatal, stopped


def progress(view, ro, rows: torch.Tensor, field=None) -> torch.Tensor:
    """``(M,)`` float64 the progress each look-ahead row made toward its goal, from the live
    row ``rows[i]`` of ``view`` (the live env's :class:`~offroad_env.state_view.StateView`):

    * ``field`` None: the straight distance to the goal it gained [m], rear axle;
    * ``field`` a map planner (:class:`~train.planners.path.PathPolicy`): the cost-to-go it
      gained, at base_link (metres weighted by the ground's cost), so that what a bounded
      horizon cuts off is scored by a plan of the whole way."""
    if field is not None:
        sel = view.select(rows)
        f0 = field.cost_to_go_at(sel, sel.base_position_w[:, :2])
        f1 = field.cost_to_go_at(sel, ro.base_position[-1])
        return (f0 - f1).to(ro.base_position)
    g = view.goal_w[rows].to(torch.float64)
    here = torch.stack((view.x, view.y), 1)[rows].to(torch.float64)
    return (torch.linalg.vector_norm(g - here, dim=1)
            - torch.linalg.vector_norm(g - ro.position[-1], dim=1))
