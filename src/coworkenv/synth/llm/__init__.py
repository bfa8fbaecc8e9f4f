"""LLM-driven synthesis: an OpenAI-compatible model writes TaskSpecs, the verifier judges them.

One concept per module: ``client`` (the endpoint, retries), ``scenario`` (seeded workplace
settings), ``prompts`` (messages from the templates in ``templates/``), ``parse`` (a reply
to a TaskSpec), ``novelty`` (MinHash sketches, workflows to steer away from), ``audit``
(the compressed per-environment trail), ``loop`` (generate → verify → repair rounds) and
``job`` (one bank job; the only module the bank calls).
"""
