"""Drives Scribe's OpenAI door with the official `openai` package from PyPI, unedited.

Reads a JSON plan on stdin: {"base_url": ..., "api_key": ..., "calls": [call, ...]} and prints
one JSON array on stdout, one outcome per call, in order. A call is
  {"op": "transcribe" | "translate", "file": PATH, "params": {...keyword arguments of create()}}
  {"op": "models.list"} | {"op": "models.retrieve", "model": ID}
with optional "api_key" (instead of the plan's), "timeout" (seconds) and "max_retries". Every
call runs with max_retries=0 unless it says otherwise, so an answer is never hidden behind a
retry.

An outcome is {"ok": true, "status", "headers", "value"} (value: the parsed object as the package
understood it, a string for text/srt/vtt, or {"events": [...]} for a stream), or {"ok": false,
"class": the exception class, "status", "type", "code", "param", "message", "body", "headers"}.
"""
import json
import sys

import openai
from openai import OpenAI


def plain(value):
    """The package's object as JSON: its models as the fields the server sent."""
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def failure(err):
    out = {"ok": False, "class": type(err).__name__, "message": str(getattr(err, "message", err))}
    if isinstance(err, openai.APIStatusError):
        out.update(
            status=err.status_code,
            type=err.type,
            code=err.code,
            param=err.param,
            body=err.body,
            headers=dict(err.response.headers),
        )
    return out


def answered(raw, value):
    return {"ok": True, "status": raw.status_code, "headers": dict(raw.headers), "value": value}


def run(client, call):
    op = call["op"]
    if op == "models.list":
        raw = client.models.with_raw_response.list()
        page = raw.parse()
        return answered(raw, {"object": getattr(page, "object", None), "data": plain(page.data)})
    if op == "models.retrieve":
        raw = client.models.with_raw_response.retrieve(call["model"])
        return answered(raw, plain(raw.parse()))
    resource = {"transcribe": client.audio.transcriptions, "translate": client.audio.translations}[op]
    params = call.get("params", {})
    with open(call["file"], "rb") as media:
        raw = resource.with_raw_response.create(file=media, **params)
        parsed = raw.parse()
        if params.get("stream"):
            return answered(raw, {"events": [plain(event) for event in parsed]})
        return answered(raw, plain(parsed))


def main():
    plan = json.load(sys.stdin)
    outcomes = []
    for call in plan["calls"]:
        client = OpenAI(
            base_url=plan["base_url"],
            api_key=call.get("api_key", plan["api_key"]),
            max_retries=call.get("max_retries", 0),
            timeout=call.get("timeout", 600),
        )
        try:
            outcomes.append(run(client, call))
        except openai.OpenAIError as err:
            outcomes.append(failure(err))
        except Exception as err:  # noqa: BLE001 - e.g. a read timeout while a stream is read
            outcomes.append({"ok": False, "class": type(err).__name__, "message": str(err)})
    print(json.dumps(outcomes))


if __name__ == "__main__":
    main()
