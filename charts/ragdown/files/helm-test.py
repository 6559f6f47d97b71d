"""`helm test`: the indexer answers /api/status, and a reader answers MCP with the agents' token.

Usage: python -c "$(cat helm-test.py)" STATUS_URL MCP_URL [FOLDER], RAGDOWN_TOKEN in the environment.
With FOLDER, MCP_URL/FOLDER must list that folder's tools. Without (a fresh install has no folder),
it asks for a name no folder can have (a dot name): the reader must take the Host and the token and
answer 404, where a token it does not know gets 403 and a Host it does not answer to 421.
Only the standard library: it runs in the ragdown image as it is.
"""

import json
import os
import sys
import urllib.error
import urllib.request

NO_FOLDER = ".helm-test"


def fail(message: str) -> None:
    print(f"FAIL {message}")
    sys.exit(1)


def main(status_url: str, mcp_url: str, folder: str = "") -> None:
    try:
        with urllib.request.urlopen(status_url, timeout=15) as response:
            status = json.load(response)
    except (OSError, ValueError) as error:
        fail(f"{status_url}: {error}")
    if status.get("role") != "primary" or status.get("ready") is not True:
        fail(f"{status_url} is not a ready indexer: {status}")
    print(f"ok {status_url}: ready, {status.get('files')} files, {status.get('chunks')} chunks")

    url = f"{mcp_url.rstrip('/')}/{folder or NO_FOLDER}"
    request = urllib.request.Request(
        url,
        data=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode(),
        method="POST",
        headers={
            "Authorization": f"Bearer {os.environ['RAGDOWN_TOKEN']}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            answer = json.load(response)
    except urllib.error.HTTPError as error:
        body = error.read()[:300].decode("utf-8", "replace")
        if error.code == 404 and not folder:
            print(f"ok {url}: the reader took the token and the Host; no folder named ({body})")
            return
        fail(f"{url} answered {error.code}: {body}")
    except (OSError, ValueError) as error:
        fail(f"{url}: {error}")
    tools = [tool["name"] for tool in answer.get("result", {}).get("tools", [])]
    if not tools:
        fail(f"{url} listed no tools: {answer}")
    print(f"ok {url}: {len(tools)} tools ({', '.join(sorted(tools))})")


if __name__ == "__main__":
    main(*sys.argv[1:4])
