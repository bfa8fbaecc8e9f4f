"""The service registry: name -> Service class, and tool lookup across services.

A spec may also declare services as data (``declared_services``); the functions taking
``declared`` resolve those alongside the built-in ones, so one spec's declarations never
leak into another's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from coworkenv.services.base import Service, ToolInfo
from coworkenv.services.calendar import Calendar
from coworkenv.services.chat import Chat
from coworkenv.services.contacts import Contacts
from coworkenv.services.crm import Crm
from coworkenv.services.declared import declared_class
from coworkenv.services.documents import Documents
from coworkenv.services.drive import Drive
from coworkenv.services.expenses import Expenses
from coworkenv.services.hr import Hr
from coworkenv.services.mail import Mail
from coworkenv.services.payments import Payments
from coworkenv.services.tickets import Tickets
from coworkenv.spec.declared import ServiceDecl

SERVICES: dict[str, type[Service]] = {
    cls.name: cls for cls in (Mail, Calendar, Contacts, Documents, Tickets, Crm, Chat, Expenses, Payments, Hr, Drive)
}
ALL_TOOLS: dict[str, ToolInfo] = {name: info for cls in SERVICES.values() for name, info in cls.tools().items()}
Declared = Mapping[str, ServiceDecl] | None


def service_class(name: str, declared: Declared = None) -> type[Service]:
    """The class of service ``name``: a spec's declaration of it, else the built-in one."""
    if declared and name in declared:
        return declared_class(name, declared[name])
    try:
        return SERVICES[name]
    except KeyError:
        raise KeyError(f"unknown service {name!r}; known: {sorted(SERVICES)}") from None


def tool_table(declared: Declared = None) -> dict[str, ToolInfo]:
    """Every tool a spec can name: the built-in ones, and its declared services' (which win a name clash)."""
    if not declared:
        return ALL_TOOLS
    table = dict(ALL_TOOLS)
    for name, decl in declared.items():
        table.update(declared_class(name, decl).tools())
    return table


def service_tools(services: Iterable[str], declared: Declared = None) -> dict[str, ToolInfo]:
    """Every tool of the given services, in registry order."""
    wanted = set(services)
    return {n: i for n, i in tool_table(declared).items() if i.service in wanted}
