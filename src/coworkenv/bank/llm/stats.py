"""The LLM part of a bank's manifest: yield per round, cost per admitted environment, coverage."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from coworkenv.bank.entry import Entry
from coworkenv.bank.llm.novelty import similarity


@dataclass
class LLMTally:
    """Counters over LLM jobs, rebuilt from the journal on resume."""

    jobs: int = 0
    admitted: int = 0
    programmatic: int = 0
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    admitted_in_round: Counter[int] = field(default_factory=Counter)
    targets: Counter[str] = field(default_factory=Counter)
    covered: Counter[str] = field(default_factory=Counter)
    near_duplicates: int = 0
    streak: int = 0
    """LLM jobs rejected in a row (the latest ones)."""
    sketches: list[tuple[str, list[int]]] = field(default_factory=list)
    recent: list[tuple[int, str, str]] = field(default_factory=list)

    def add(self, entry: Entry) -> None:
        info = entry["llm"]
        self.jobs += 1
        self.requests += info["requests"]
        self.prompt_tokens += info["prompt_tokens"]
        self.completion_tokens += info["completion_tokens"]
        self.targets.update(info["targets"])
        if "near_duplicate" in entry.get("final", ()):
            self.near_duplicates += 1
        if entry["status"] != "admitted":
            self.streak += 1
            return
        self.streak = 0
        self.admitted += 1
        self.programmatic += info["programmatic"]
        self.admitted_in_round[entry["rounds"]] += 1
        self.covered.update(entry["capabilities"])
        self.sketches.append((entry["id"], entry["sketch"]))
        self.recent.append((entry["index"], entry["workflow"], entry["title"]))

    def near_duplicate_of(self, candidate: list[int], threshold: float) -> tuple[str, float] | None:
        """The first banked environment at least ``threshold`` similar, if any."""
        for env_id, other in self.sketches:
            s = similarity(candidate, other)
            if s >= threshold:
                return env_id, s
        return None

    def workflows_before(self, index: int) -> list[tuple[str, str]]:
        """Admitted (workflow, title) pairs of jobs before ``index``, in job order."""
        return [(w, t) for i, w, t in self.recent if i < index]

    def manifest(self, rounds: int) -> dict[str, object]:
        per = self.admitted or 1
        cumulative, yield_by_round = 0, {}
        for r in range(rounds + 1):
            cumulative += self.admitted_in_round[r]
            yield_by_round[str(r)] = round(cumulative / self.jobs, 4) if self.jobs else 0.0
        return {
            "jobs": self.jobs,
            "admitted": self.admitted,
            "yield_by_round": yield_by_round,
            "admitted_in_round": {str(r): self.admitted_in_round[r] for r in range(rounds + 1)},
            "repair_share": round((self.admitted - self.admitted_in_round[0]) / per, 4),
            "programmatic_share": round(self.programmatic / per, 4),
            "near_duplicates": self.near_duplicates,
            "requests": self.requests,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "requests_per_admitted": round(self.requests / per, 3),
            "tokens_per_admitted": round((self.prompt_tokens + self.completion_tokens) / per, 1),
            "capability_coverage": {
                cap: {"targeted": self.targets[cap], "admitted": self.covered[cap]} for cap in sorted(self.targets)
            },
        }
