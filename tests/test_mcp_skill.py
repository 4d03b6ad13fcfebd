"""skills/recall-tools/SKILL.md documents the MCP tools with their real parameters: its tool list, each
tool's parameter names, which are required, and their defaults must match the server's schemas."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

SKILL = Path(__file__).resolve().parent.parent / "skills" / "recall-tools" / "SKILL.md"
_HEAD = re.compile(r"^### `(\w+)`\n`(\w+)\((.*)\)`$", re.M)


def frontmatter(text: str) -> dict[str, str]:
    assert text.startswith("---\n"), "SKILL.md must start with YAML frontmatter"
    block = text[4 : text.index("\n---\n", 4)]
    out = {}
    for line in block.splitlines():
        key, _, value = line.partition(":")
        assert re.fullmatch(r"[a-z][a-z0-9_-]*", key), f"bad frontmatter line {line!r}"
        out[key] = value.strip()
    return out


def documented() -> dict[str, dict[str, Any]]:
    """tool -> {"params": {param: default}, "required": {params without a default}}, in documented order."""
    tools: dict[str, dict[str, Any]] = {}
    for name, sig_name, params in _HEAD.findall(SKILL.read_text(encoding="utf-8")):
        assert name == sig_name, f"heading {name} documents the signature of {sig_name}"
        assert name not in tools, f"{name} documented twice"
        spec: dict[str, Any] = {}
        required = set()
        for p in filter(None, (x.strip() for x in params.split(", "))):
            key, eq, default = p.partition("=")
            spec[key] = json.loads(default) if eq else None
            if not eq:
                required.add(key)
        tools[name] = {"params": spec, "required": required}
    return tools


def served() -> dict[str, dict[str, Any]]:
    from mcp_server.server import build_server

    server, _ = build_server("/nonexistent/index.db", "/tmp")
    out = {}
    for t in asyncio.run(server.list_tools()):
        props = t.input_schema.get("properties", {})
        out[t.name] = {
            "params": {k: v.get("default") for k, v in props.items()},
            "required": set(t.input_schema.get("required", [])),
        }
    return out


def test_skill_frontmatter_is_valid() -> None:
    fm = frontmatter(SKILL.read_text(encoding="utf-8"))
    assert fm["name"] == "recall-tools"
    assert fm["description"] and len(fm["description"]) + len(fm.get("when_to_use", "")) <= 1536
    assert set(fm) <= {
        "name",
        "description",
        "when_to_use",
        "argument-hint",
        "allowed-tools",
        "license",
        "compatibility",
        "metadata",
    }


def test_skill_documents_every_tool_with_its_real_parameters() -> None:
    doc, real = documented(), served()
    assert set(doc) == set(real), {"undocumented": set(real) - set(doc), "not served": set(doc) - set(real)}
    for name, spec in real.items():
        d = doc[name]
        assert list(d["params"]) == list(spec["params"]), (name, list(d["params"]), list(spec["params"]))
        assert d["required"] == spec["required"], (name, d["required"], spec["required"])
        for key, default in spec["params"].items():
            if key not in spec["required"]:
                assert d["params"][key] == default, (name, key, d["params"][key], default)


def test_skill_mentions_the_resource_and_error_shape() -> None:
    text = SKILL.read_text(encoding="utf-8")
    assert "session-digest://{session_id}" in text
    assert '{"error": {"code", "message", "fix"}}' in text
