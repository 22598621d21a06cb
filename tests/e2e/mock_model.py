"""A scripted model API on 127.0.0.1 for driving the real clients.

It speaks just enough of each client's wire format to run one agent turn:
Anthropic's Messages API (`POST /v1/messages`, streamed as server-sent
events; Claude Code, Copilot CLI's Anthropic BYOK), Gemini's
`streamGenerateContent?alt=sse` / `generateContent` (Gemini CLI), OpenAI's
Responses API (`POST /v1/responses`, streamed; Codex CLI) and OpenAI's chat
completions (`POST .../chat/completions`, streamed, tool results as `tool`
messages; OpenCode, pi, Qwen Code).  A test sets `script`, the tool calls
the model makes in order; each request that offers tools gets the next
call, and once the script is spent the model says "done".  A call's
arguments may be a function of the request body, for paths only the client
knows (the plan file it named in its system prompt).  Every request is
recorded so a test can read what the client sent back (the hook's denial
reaches the model as a tool result).

The server also answers HTTP CONNECT, the way a client reaches any other
host through `HTTPS_PROXY`: it records the host and refuses, so a test can
assert that nothing tried to leave the machine.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Args = dict[str, Any] | Callable[[dict], dict[str, Any]]


class MockModel:
    """The server and its script; use as a context manager."""

    def __init__(self) -> None:
        self.script: list[tuple[str, Args]] = []
        self.requests: list[dict[str, Any]] = []  # {"path", "body"}
        self.outbound: list[str] = []  # CONNECT targets: traffic meant for elsewhere
        self._lock = threading.Lock()
        self._turn = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> MockModel:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def reset(self, *calls: tuple[str, Args]) -> None:
        with self._lock:
            self.script = list(calls)
            self.requests.clear()
            self.outbound.clear()
            self._turn = 0

    def next_call(self, body: dict) -> tuple[str, dict[str, Any]] | None:
        with self._lock:
            if self._turn >= len(self.script):
                return None
            self._turn += 1
            name, args = self.script[self._turn - 1]
        return name, args(body) if callable(args) else args

    # -- what came back -----------------------------------------------------
    def tool_results(self) -> list[str]:
        """The text of every tool result the client sent the model, in order:
        the longest history among the requests (each repeats the one before)."""
        return max((_results(r["body"]) for r in self.requests), key=len, default=[])


def _results(body: dict) -> list[str]:
    out = []
    for message in body.get("messages") or []:  # Anthropic
        for block in message.get("content") or []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                out.append(_anthropic_text(block.get("content")))
    for content in body.get("contents") or []:  # Gemini
        for part in content.get("parts") or []:
            if "functionResponse" in part:
                out.append(json.dumps(part["functionResponse"].get("response")))
    out += _chat_results(body)
    out += _responses_results(body)
    return out


def _chat_results(body: dict) -> list[str]:
    """OpenAI chat completions: the `tool` messages, whose content is text
    or a list of text parts."""
    return [_anthropic_text(m.get("content")) for m in body.get("messages") or []
            if isinstance(m, dict) and m.get("role") == "tool"]


def _anthropic_text(content) -> str:
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content or [] if isinstance(b, dict))


def _handler(model: MockModel):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:  # quiet
            pass

        def do_CONNECT(self) -> None:
            model.outbound.append(self.path)
            self.send_response(403)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_GET(self) -> None:
            model.requests.append({"path": self.path, "body": {}})
            self._json(404, {"error": {"message": "not here"}})

        do_HEAD = do_GET

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                body = {}
            model.requests.append({"path": self.path, "body": body})
            path = self.path.split("?", 1)[0]
            if path.endswith("/v1/messages"):
                self._anthropic(body)
            elif path.endswith("/v1/messages/count_tokens"):
                self._json(200, {"input_tokens": 10})
            elif ":streamGenerateContent" in path:
                self._gemini(body, stream=True)
            elif ":generateContent" in path:
                self._gemini(body, stream=False)
            elif ":countTokens" in path:
                self._json(200, {"totalTokens": 10})
            elif path.endswith("/chat/completions"):
                self._chat(body)
            elif path.endswith("/v1/responses"):
                self._sse(_responses_events(model, body))
            else:
                self._json(404, {"error": {"message": f"no route {path}"}})

        # -- Anthropic ------------------------------------------------------
        def _anthropic(self, body: dict) -> None:
            tools = {t.get("name") for t in body.get("tools") or []}
            call = model.next_call(body) if tools else None
            if call is not None and call[0] not in tools:
                call = None
            if call is not None:
                name, args = call
                block = {"type": "tool_use", "id": f"toolu_{len(model.requests):04d}",
                         "name": name, "input": args}
                stop = "tool_use"
            else:
                block = {"type": "text", "text": "done"}
                stop = "end_turn"
            message = {"id": f"msg_{len(model.requests):04d}", "type": "message",
                       "role": "assistant", "model": body.get("model", "mock"),
                       "content": [block], "stop_reason": stop, "stop_sequence": None,
                       "usage": {"input_tokens": 10, "output_tokens": 5}}
            if not body.get("stream"):
                self._json(200, message)
                return
            events = [("message_start", {"type": "message_start",
                                         "message": {**message, "content": [],
                                                     "stop_reason": None}})]
            if block["type"] == "tool_use":
                events += [
                    ("content_block_start", {"type": "content_block_start", "index": 0,
                                             "content_block": {**block, "input": {}}}),
                    ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                             "delta": {"type": "input_json_delta",
                                                       "partial_json": json.dumps(block["input"])}}),
                ]
            else:
                events += [
                    ("content_block_start", {"type": "content_block_start", "index": 0,
                                             "content_block": {"type": "text", "text": ""}}),
                    ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                             "delta": {"type": "text_delta", "text": block["text"]}}),
                ]
            events += [
                ("content_block_stop", {"type": "content_block_stop", "index": 0}),
                ("message_delta", {"type": "message_delta",
                                   "delta": {"stop_reason": stop, "stop_sequence": None},
                                   "usage": {"output_tokens": 5}}),
                ("message_stop", {"type": "message_stop"}),
            ]
            self._sse((f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events))

        # -- Gemini ---------------------------------------------------------
        def _gemini(self, body: dict, stream: bool) -> None:
            tools = {d.get("name") for t in body.get("tools") or []
                     for d in t.get("functionDeclarations") or []}
            call = model.next_call(body) if tools else None
            if call is not None and call[0] not in tools:
                call = None
            if call is not None:
                part: dict[str, Any] = {"functionCall": {"name": call[0], "args": call[1]}}
            else:
                part = {"text": _gemini_text(body)}
            reply = {"candidates": [{"content": {"role": "model", "parts": [part]},
                                     "finishReason": "STOP", "index": 0}],
                     "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5,
                                       "totalTokenCount": 15}}
            if stream:
                self._sse([f"data: {json.dumps(reply)}\r\n\r\n"])
            else:
                self._json(200, reply)

        # -- OpenAI chat completions ----------------------------------------
        def _chat(self, body: dict) -> None:
            tools = {(t.get("function") or {}).get("name") for t in body.get("tools") or []}
            call = model.next_call(body) if tools else None
            if call is not None and call[0] not in tools:
                call = None
            ident = f"chatcmpl-{len(model.requests):04d}"
            if call is not None:
                message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [
                    {"index": 0, "id": f"call_{len(model.requests):04d}", "type": "function",
                     "function": {"name": call[0], "arguments": json.dumps(call[1])}}]}
                finish = "tool_calls"
            else:
                message, finish = {"role": "assistant", "content": "done"}, "stop"
            usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
            # All three clients stream; the chunks carry the whole message at once.
            chunk = {"id": ident, "created": 0, "model": body.get("model", "mock"),
                     "object": "chat.completion.chunk"}
            chunks = [{**chunk, "choices": [{"index": 0, "delta": message, "finish_reason": None}]},
                      {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
                      {**chunk, "choices": [], "usage": usage}]
            self._sse([*(f"data: {json.dumps(c)}\n\n" for c in chunks), "data: [DONE]\n\n"])

        # -- plumbing -------------------------------------------------------
        def _json(self, status: int, payload: dict) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _sse(self, chunks) -> None:
            data = "".join(chunks).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


def _gemini_text(body: dict) -> str:
    """A plain answer, or a JSON one when the request asks for a schema
    (Gemini CLI's side questions: routing, "who speaks next")."""
    config = body.get("generationConfig") or {}
    schema = config.get("responseJsonSchema") or config.get("responseSchema")
    return json.dumps(_example(schema)) if schema else "done"


def _example(schema: dict) -> Any:
    """The smallest value of a JSON schema's type (enums: the first choice)."""
    if schema.get("enum"):
        return schema["enum"][0]
    kind = str(schema.get("type", "string")).lower()
    if kind == "object":
        return {key: _example(sub) for key, sub in (schema.get("properties") or {}).items()}
    if kind == "array":
        return []
    return {"integer": 1, "number": 1, "boolean": False}.get(kind, "user")


# -- OpenAI Responses API (Codex CLI) ---------------------------------------------------------

def _responses_tools(body: dict) -> dict[str, str]:
    """Tool name -> its type (`function`, or `custom` for a free-form tool
    such as Codex's apply_patch, whose input is raw text)."""
    return {t["name"]: t.get("type", "function") for t in body.get("tools") or []
            if isinstance(t, dict) and isinstance(t.get("name"), str)}


def _responses_events(model: MockModel, body: dict) -> list[str]:
    """One streamed response: the next scripted call, or the text "done".
    A custom tool's call carries its text as `{"input": TEXT}` in the script."""
    tools = _responses_tools(body)
    call = model.next_call(body) if tools else None
    if call is not None and call[0] not in tools:
        call = None
    number = len(model.requests)
    if call is None:
        item: dict[str, Any] = {"type": "message", "id": f"msg_{number:04d}", "role": "assistant",
                                "status": "completed",
                                "content": [{"type": "output_text", "text": "done", "annotations": []}]}
    elif tools[call[0]] == "custom":
        item = {"type": "custom_tool_call", "id": f"ctc_{number:04d}", "call_id": f"call_{number:04d}",
                "name": call[0], "input": call[1]["input"], "status": "completed"}
    else:
        item = {"type": "function_call", "id": f"fc_{number:04d}", "call_id": f"call_{number:04d}",
                "name": call[0], "arguments": json.dumps(call[1]), "status": "completed"}
    response = {"id": f"resp_{number:04d}", "object": "response", "status": "in_progress",
                "model": body.get("model", "mock"), "output": []}
    usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
             "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
    events = [
        ("response.created", {"response": response}),
        ("response.output_item.added", {"output_index": 0, "item": item}),
        ("response.output_item.done", {"output_index": 0, "item": item}),
        ("response.completed", {"response": {**response, "status": "completed", "output": [item],
                                             "usage": usage}}),
    ]
    return [f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n" for name, data in events]


def _responses_results(body: dict) -> list[str]:
    """The outputs of function and custom tool calls in a Responses request."""
    out = []
    for item in body.get("input") or []:
        if isinstance(item, dict) and item.get("type") in ("function_call_output",
                                                           "custom_tool_call_output"):
            output = item.get("output")
            if isinstance(output, list):  # content items
                output = "".join(part.get("text", "") for part in output if isinstance(part, dict))
            out.append(output if isinstance(output, str) else json.dumps(output))
    return out
