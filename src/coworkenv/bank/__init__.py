"""The environment bank: compose → verify → repair → store, the one stage that ties generation to judging.

``synthesize_bank(out, n, seed=...)`` fills a bank folder with verified environments;
``load_bank(path, split=None)`` streams them back as (spec, verification) pairs.
"""

from coworkenv.bank.jobs import split_of
from coworkenv.bank.store import load_bank, synthesize_bank

__all__ = ["load_bank", "split_of", "synthesize_bank"]
