"""Rigid ground with a friction of its own: the surfaces a material map may name beside soils.

A material map (:mod:`terrain.materials`) names per sample ``"hard"`` (rigid ground with the
env's friction), a soil of :data:`~.soil.SOILS` (the physical model sinks into it), or one of
the surfaces below: rigid ground whose tyre-ground friction coefficient is the table's, in place
of the env's ``mu`` (also where the env's friction is randomized), for the wheels on it (the
physical model, :mod:`.soil_contact`); the chassis' own contacts keep the env's. The other
models refuse a map that names any of them, as they refuse soils: they would drive it with one
friction.

The coefficients are the averages of Noon (1994, *Engineering Analysis of Vehicular Accidents*,
CRC Press) for car tyres, as quoted in mining-haul references; where Noon gives a range, the
lower bound: dry concrete 0.75, dry asphalt 0.65, wet concrete 0.60, wet asphalt 0.50, a gravel
or dirt road 0.35, packed snow 0.20 (0.20-0.25), a wet grassy field 0.20, ice 0.10 (0.10-0.15).
A rover's or a robot's tyres differ from a car's: the table orders surfaces more than it pins
their values. (``"snow"`` as a soil is deep snow that a wheel sinks into; ``"packed_snow"`` is
a rigid surface.)
"""

from __future__ import annotations

__all__ = ["SURFACES", "surface_mu"]

#: ``{name: mu}``: the rigid surfaces and their friction coefficients
SURFACES: dict[str, float] = {
    "dry_concrete": 0.75,
    "dry_asphalt": 0.65,
    "wet_concrete": 0.60,
    "wet_asphalt": 0.50,
    "gravel": 0.35,
    "packed_snow": 0.20,
    "wet_grass": 0.20,
    "ice": 0.10,
}


def surface_mu(name: str) -> float | None:
    """The friction coefficient of surface ``name``, or None when it is not a surface."""
    return SURFACES.get(name)
