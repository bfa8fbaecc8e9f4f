"""The service registry: name -> Service class, and tool lookup across services."""

from __future__ import annotations

from coworkenv.services.base import Service, ToolInfo
from coworkenv.services.calendar import Calendar
from coworkenv.services.chat import Chat
from coworkenv.services.contacts import Contacts
from coworkenv.services.crm import Crm
from coworkenv.services.documents import Documents
from coworkenv.services.expenses import Expenses
from coworkenv.services.mail import Mail
from coworkenv.services.tickets import Tickets

SERVICES: dict[str, type[Service]] = {
    cls.name: cls for cls in (Mail, Calendar, Contacts, Documents, Tickets, Crm, Chat, Expenses)
}
ALL_TOOLS: dict[str, ToolInfo] = {name: info for cls in SERVICES.values() for name, info in cls.tools().items()}


def service_class(name: str) -> type[Service]:
    try:
        return SERVICES[name]
    except KeyError:
        raise KeyError(f"unknown service {name!r}; known: {sorted(SERVICES)}") from None
