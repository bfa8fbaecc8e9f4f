"""report: the final answer, which must name the subject (or what was found about it) and what derive steps found.

The derive steps add their own answer checks (the count, the total, the record picked);
the report adds the customer's name and joins every step's report sentence.
"""

from __future__ import annotations

from coworkenv.synth.steps.base import Chain, Step


def asks(template: str) -> bool:
    """Whether a clause already asks the user to be told something."""
    return "tell me" in template or "let me know" in template


class Report(Step):
    """Tell the user what was done and found."""

    kind = "report"
    name = "report"

    def apply(self, chain: Chain) -> None:
        chain.report.insert(0, f"Done for {chain.subject}.")
        if chain.told:
            chain.checks.answer_contains("told_found", chain.told)
        else:
            chain.checks.answer_contains("told_subject", [chain.subject])
        if not any(asks(t) for t in chain.clauses[-1]):  # the last clause asks for the findings: no second ask
            chain.clause("and tell me what you found", "then report back", "and give me a short summary")


REPORT = Report()
