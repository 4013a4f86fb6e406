"""Drive `baton mcp` with the official Python MCP SDK (a client this project did not write).

Usage: python mcp_client.py BATON PROJECT_DIR
Prints one JSON document: the tools listed, and per call the text, isError, or the protocol
error. The Rust test (tests/it/mcp.rs) asserts on it.
"""

import asyncio
import json
import sys

from mcp import ClientSession, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client

CALLS = [
    ("task_init", {"task": "Add login", "mode": "standard"}),
    ("status", {}),
    ("phase_begin", {"phase": "architect", "needs": "memory"}),
    ("phase_complete", {"phase": "architect", "status": "success", "content": "# Architect\n\n## Decisions\nUse JWT.\n"}),
    ("store", {"phase": "spec", "content": "# Spec\n\n## Signatures\nfn login()\n"}),
    ("retrieve", {"for_phase": "implementation"}),
    ("gate", {"gate": "design", "prompt": "approve the design?"}),
    ("gate", {"decision": "approve"}),
    ("query", {"query": "JWT"}),
    ("extract", {"file": "spec.md", "section": "Data Model"}),
    ("extract", {"file": "spec.md"}),
    ("outline", {"file": "lib.py"}),
    ("budget", {"text": "hello world", "window": 1000}),
    ("budget", {"file": "spec.md", "phase": "implementer"}),
    ("mask", {"command": ["sh", "-c", "echo small"]}),
    ("mask", {"command": ["sh", "-c", "i=0; while [ $i -lt 3000 ]; do echo line $i of a long log; i=$((i+1)); done; sleep 3"]}),
    # Errors the model must read (isError), not crashes:
    ("phase_complete", {"phase": "nope", "status": "success"}),
    ("task_init", {"task": "x", "bogus": 1}),
    ("extract", {"file": "../outside.md"}),
    ("mask", {"command": ["no-such-command-baton"]}),
    ("mask", {"command": []}),
    ("gate", {}),
]


async def main() -> None:
    baton, project = sys.argv[1], sys.argv[2]
    params = StdioServerParameters(command=baton, args=["mcp"], cwd=project)
    out = {"calls": []}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            out["server"] = init.server_info.name
            listed = await session.list_tools()
            out["tools"] = [t.name for t in listed.tools]
            out["tools_json"] = json.dumps(
                listed.model_dump(mode="json", by_alias=True, exclude_none=True)
            )
            for name, args in CALLS:
                progress = []

                async def on_progress(p, total, message, progress=progress):
                    progress.append(message)

                try:
                    r = await session.call_tool(name, args, progress_callback=on_progress)
                    text = "".join(c.text for c in r.content if c.type == "text")
                    out["calls"].append(
                        {"tool": name, "is_error": bool(r.is_error), "text": text, "progress": progress}
                    )
                except MCPError as e:
                    out["calls"].append({"tool": name, "protocol_error": str(e)})
            try:
                await session.call_tool("no_such_tool", {})
                out["unknown_tool"] = "answered"
            except MCPError as e:
                out["unknown_tool"] = "protocol error: " + str(e)
            # The server is still alive after every error.
            r = await session.call_tool("status", {})
            out["alive"] = not r.is_error
    print(json.dumps(out))


asyncio.run(main())
