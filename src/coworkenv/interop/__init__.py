"""Interop: the same environments served where agents and trainers already live.

One module per concept: ``env`` (the typed Python API behind ``coworkenv.make``), ``catalog``
(which environments a server offers), ``sessions`` + ``http_server`` + ``client`` (an
OpenEnv-style HTTP server and its client), ``mcp_server``, ``gym_env`` (Gymnasium),
``trl_env`` (TRL's ``environment_factory``) and ``claw_eval`` (import/export). The heavy
ones (FastAPI, mcp, gymnasium, TRL) are imported only by their own module.
"""
