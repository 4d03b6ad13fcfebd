"""total-recall: mcp_server layer."""
