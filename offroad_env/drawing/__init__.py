"""Drawing: ``render`` (the envs' ``rgb_array`` frames), ``animation`` (the demo's animated drive)
and ``plots`` (matplotlib, imported only when a plot is drawn).

Imports: :mod:`offroad_env.physics` and :mod:`terrain` only, so any layer above may draw.
"""
