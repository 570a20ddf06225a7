"""Run the fuseki GTP engine on stdin/stdout: ``python gtp_main.py [flags]`` (same as ``fuseki-gtp``)."""
from engine.gtp_cli import main

if __name__ == "__main__":
    raise SystemExit(main())
