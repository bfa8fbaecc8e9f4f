"""CLI commands that serve environments: ``coworkenv serve http``, ``serve openenv`` and ``serve mcp``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console

serve_app = typer.Typer(no_args_is_help=True, help="Serve environments over HTTP, MCP or OpenEnv.")
console = Console(stderr=True)

if TYPE_CHECKING:
    from coworkenv.interop.catalog import Catalog


def _catalog(bank: Path | None, specs: list[Path] | None, split: str | None) -> Catalog:
    from coworkenv.interop.catalog import Catalog
    from coworkenv.spec import SpecError

    sources = ([bank] if bank else []) + list(specs or [])
    if not sources:
        console.print("[red]give --bank BANK or one or more SPEC files[/red]")
        raise typer.Exit(2)
    try:
        return Catalog.load(sources, split=split)
    except (SpecError, ValueError, OSError) as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from None


@serve_app.command("http")
def serve_http(
    specs: list[Path] | None = typer.Argument(None, metavar="[SPEC]...", help="spec files or folders"),
    bank: Path | None = typer.Option(None, "--bank", help="a bank folder"),
    split: str | None = typer.Option(None, "--split", help="bank split: train | heldout"),
    host: str = typer.Option("127.0.0.1", "--host", help="bind address (beyond loopback a token is required)"),
    port: int = typer.Option(8000, "--port"),
    token: str | None = typer.Option(None, "--token", envvar="COWORKENV_TOKEN", help="bearer token clients must send"),
    max_sessions: int = typer.Option(256, "--max-sessions", min=1, help="open sessions at most"),
    idle_ttl: float = typer.Option(600.0, "--idle-ttl", min=0.01, help="seconds before an idle session expires"),
    step_timeout: float = typer.Option(10.0, "--step-timeout", min=0.001, help="time limit of one step (s)"),
    max_body: int = typer.Option(1_000_000, "--max-body", min=1, help="bytes of one request body at most (413)"),
    no_inline: bool = typer.Option(False, "--no-inline-specs", help="only serve the loaded environments"),
) -> None:
    """Serve environments over HTTP (OpenAPI docs at /docs)."""
    from coworkenv.interop.http_server import check_binding, create_app, serve
    from coworkenv.interop.sessions import Limits

    try:
        check_binding(host, token)
    except ValueError as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from None
    catalog = _catalog(bank, specs, split)
    limits = Limits(max_sessions=max_sessions, idle_ttl=idle_ttl, step_timeout=step_timeout, max_body=max_body)
    app = create_app(catalog, limits, token=token, allow_inline=not no_inline)
    console.print(f"serving {len(catalog)} environments on http://{host}:{port} (docs: /docs)")
    serve(app, host=host, port=port, token=token)


@serve_app.command("openenv")
def serve_openenv(
    specs: list[Path] | None = typer.Argument(None, metavar="[SPEC]...", help="spec files or folders"),
    bank: Path | None = typer.Option(None, "--bank", help="a bank folder"),
    split: str | None = typer.Option(None, "--split", help="bank split: train | heldout"),
    host: str = typer.Option("127.0.0.1", "--host", help="bind address (the OpenEnv server has no authentication)"),
    port: int = typer.Option(8000, "--port"),
    max_sessions: int = typer.Option(64, "--max-sessions", min=1, help="WebSocket sessions at once"),
) -> None:
    """Serve environments on OpenEnv's protocol (openenv-core's server: /reset, /step, /state, /ws)."""
    from coworkenv.interop.http_server import is_loopback, serve

    if not is_loopback(host):
        console.print("[red]the OpenEnv server has no authentication: bind it to loopback only[/red]")
        raise typer.Exit(2)
    try:
        from coworkenv.interop.openenv_server import create_openenv_app
    except ImportError as exc:
        console.print(f"[red]serve openenv needs the openenv extra (pip install 'coworkenv\\[openenv]'): {exc}[/red]")
        raise typer.Exit(2) from None
    catalog = _catalog(bank, specs, split)
    console.print(f"serving {len(catalog)} environments on OpenEnv's protocol at http://{host}:{port}")
    serve(create_openenv_app(catalog, max_sessions), host=host, port=port, token=None)


@serve_app.command("mcp")
def serve_mcp(
    spec_path: Path = typer.Argument(..., metavar="SPEC"),
    transport: str = typer.Option("stdio", "--transport", help="stdio | http (streamable HTTP at /mcp)"),
    host: str = typer.Option("127.0.0.1", "--host", help="bind address for http (loopback only)"),
    port: int = typer.Option(8000, "--port"),
    seed: int = typer.Option(0, "--seed"),
) -> None:
    """Serve one environment over MCP: its tools, message_user, and the grade as a resource."""
    from coworkenv.interop.http_server import is_loopback
    from coworkenv.interop.mcp_server import run

    if transport not in ("stdio", "http"):
        console.print(f"[red]unknown transport {transport!r}; expected stdio or http[/red]")
        raise typer.Exit(2)
    if transport == "http" and not is_loopback(host):
        console.print("[red]the MCP server has no authentication: bind it to loopback only[/red]")
        raise typer.Exit(2)
    catalog = _catalog(None, [spec_path], None)
    if len(catalog) != 1:
        console.print(f"[red]{spec_path} holds {len(catalog)} environments; the MCP server serves one[/red]")
        raise typer.Exit(2)
    run(catalog.get(catalog.ids()[0]), transport=transport, host=host, port=port, seed=seed)


def register(app: typer.Typer) -> None:
    """Add the ``serve`` group to the main app."""
    app.add_typer(serve_app, name="serve")
