"""Capability-guided synthesis: blueprints, modifiers and the composer (generation only).

Judging lives in :mod:`coworkenv.verify`; :mod:`coworkenv.bank` ties the two together.
"""
