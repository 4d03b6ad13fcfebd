"""`python -m mcp_server [--db PATH]`: the MCP server over stdio."""

from __future__ import annotations

import sys

from mcp_server.server import main

if __name__ == "__main__":
    args = sys.argv[1:]
    main(args[args.index("--db") + 1] if "--db" in args[:-1] else None)
