"""The physics of the product: pure batched torch functions with no environment logic.

Rooms: :mod:`.vehicle` (geometry and mass, presets; :mod:`.urdf`), :mod:`.rotations`,
:mod:`.imu`, :mod:`.slip`, :mod:`.dynamics` (the planar models' step functions),
:mod:`.ground` (ground following and contact forces), :mod:`.stability` (the force-angle
measure), :mod:`.constants`, :mod:`.batch` (the layout-keeping row merge), and
:mod:`.models`: the vehicle models the simulator steps, one module each, registered in
:data:`~offroad_env.physics.models.MODELS`.
"""
