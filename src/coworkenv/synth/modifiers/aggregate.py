"""information_synthesis: the answer must state a figure computed over several records.

Switches on the blueprint's ``aggregate`` option: the blueprint knows which figure its
data supports (a total, a count, the earliest date) and checks it with ``answer_number``.
"""

from __future__ import annotations

from coworkenv.synth.modifiers.base import Modifier

MODIFIER = Modifier("aggregate", "information_synthesis", "vague_answer", option="aggregate")
