"""LLM-driven synthesis: an OpenAI-compatible model writes TaskSpecs, the verifier judges them.

One concept per module: ``client`` (the endpoint, retries), ``scenario`` (seeded workplace
settings), ``catalog`` (services and tool signatures as text), ``constructs`` (every spec
construct and its meaning, read off the spec models), ``prompts`` (messages from
the templates in ``templates/``), ``parse`` (a reply to a TaskSpec), ``fixes``
(programmatic repairs), ``feedback`` (findings and failing-run excerpts for the model),
``loop`` (generate → verify → repair rounds), ``novelty`` (MinHash sketches, workflows to
steer away from), ``audit`` (the compressed per-job trail), ``job`` (one bank job),
``stats`` (the manifest's LLM figures) and ``driver`` (the bank's hook: jobs in order).
"""
