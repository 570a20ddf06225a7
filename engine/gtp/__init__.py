"""GTP v2: framing (``protocol``), the command handlers (``commands``), settings (``config``)
and the stdin/stdout loop (``cli``)."""
