"""Gymnasium wrappers made for offroad-env (domain randomization, sensor realism, recording,
trainer adapters). Empty until the environments exist; the package is importable so that the
layout and the dependency direction (terrain <- offroad_env <- wrappers <- train) hold from the
start."""
