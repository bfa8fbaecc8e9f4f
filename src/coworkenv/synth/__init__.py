"""Capability-guided synthesis: blueprints, modifiers, the composer, and the environment bank.

``synthesize_bank(out, n, seed=...)`` fills a bank folder with verified environments;
``load_bank(path, split=None)`` streams them back as (spec, verification) pairs.
"""

from coworkenv.synth.bank import load_bank, split_of, synthesize_bank

__all__ = ["load_bank", "split_of", "synthesize_bank"]
