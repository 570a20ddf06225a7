"""The one registry of GTP commands: each handler module registers its handlers here with
``@command``, and the package (``engine.gtp.commands``) imports those modules in the
``list_commands`` order."""

from __future__ import annotations

from fuseki.engine.gtp.protocol import Registry

REGISTRY = Registry()
command = REGISTRY.command
