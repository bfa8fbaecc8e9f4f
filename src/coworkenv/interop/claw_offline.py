"""Which Claw-Eval tasks cannot run offline, decided from ``task.yaml`` alone, before any fixture is read.

A task that needs the model to see video, images or rendered pages, or a service that stands for perception
(image captioning, OCR of scans), has nothing coworkenv could simulate from records: its ``*_FIXTURES`` name
folders of raw media, not JSON. Such a task is left out with a ``field: message`` naming why, while a missing
or malformed fixture of an otherwise offline task stays a failure. A conversation with no tools at all is left
out with the reason the spec model gives: every spec needs a rule-based check, and no check kind holds "the
agent answered" without values to state (answer kinds), a hidden fact to ask for (``asked_user``) or a tool or
record to look at (all others); a spec of guards alone is vacuous.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

PERCEPTION = (("caption", "image captions"), ("ocr", "OCR"))
"""Claw-Eval services that stand for perception (the name, or the name and ``_…``), with what they give."""
MULTIMODAL = re.compile(r"multimodal|video|image|webpage|web_dev|^doc_", re.I)
"""A category of tasks that show the model video, images, rendered pages or document figures."""
MEDIA = re.compile(r"\.(jpe?g|png|gif|webp|bmp|svg|mp4|webm|mov|avi|mkv|pdf)$", re.I)
"""An attachment the model would have to see (a text file attached is read through a tool, or not at all)."""


@dataclass(frozen=True)
class Offline:
    """Why a task cannot run here: a short label the batch counts (``reason``) and ``field: message``."""

    reason: str
    message: str


def offline_reason(task: Mapping[str, object]) -> Offline | None:
    """Why the task cannot run offline, from its declared shape (None when it may): the first of a perception
    service, a multimodal category or tag, an attachment, a conversation with no tools."""
    services = task.get("services")
    for i, svc in enumerate(services if isinstance(services, list) else []):
        name = str(svc.get("name")) if isinstance(svc, dict) else ""
        what = next((w for prefix, w in PERCEPTION if name == prefix or name.startswith(f"{prefix}_")), None)
        if what is not None:
            return Offline(f"need {what}", f"services[{i}].name: {name!r} gives {what}: it cannot run offline")
    category, tags = str(task.get("category") or ""), task.get("tags")
    seen = "the model must see video, images, rendered pages or document figures"
    if MULTIMODAL.search(category):
        return Offline("multimodal", f"category: {category!r} is a multimodal task: {seen}")
    if isinstance(tags, list) and "multimodal" in tags:
        return Offline("multimodal", f"tags: the task is tagged 'multimodal': {seen}")
    prompt = task.get("prompt")
    attached = prompt.get("attachments") if isinstance(prompt, dict) else None
    media = [str(a) for a in attached if MEDIA.search(str(a))] if isinstance(attached, list) else []
    if media:
        return Offline("attached media", f"prompt.attachments: the model must see {', '.join(media)}")
    if task.get("tools") == [] and isinstance(task.get("user_agent"), dict) and not task.get("sandbox_files"):
        return Offline(
            "conversation only",
            "tools: a conversation with no tools, judged by its rubric alone: a spec needs a rule-based check, "
            "and no check kind holds 'the agent answered' without values to state, a hidden fact to ask for "
            "or a tool to call",
        )
    return None


def no_tool_reason(folder: Path, task: Mapping[str, object], unmapped: list[str]) -> str:
    """Why a task has no tool that runs here: which tools were left out and which files it reads are absent."""
    left = ", ".join(unmapped) or "the task lists none"
    files = task.get("sandbox_files")
    absent = [str(f) for f in files if not (folder / str(f)).is_file()] if isinstance(files, list) else []
    found = f"; files it reads are not in the task data: {', '.join(absent)}" if absent else ""
    return f"no tool of this task can run offline (left out: {left}){found}"
