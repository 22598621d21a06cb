"""End-to-end tests: the real clients, a scripted model on 127.0.0.1, and
the installed hook.  Select them with `pytest -m e2e`, leave them out with
`-m "not e2e"`."""

collect_ignore = ["clients"]  # node_modules of the installed clients


def pytest_configure(config):
    config.addinivalue_line("markers", "e2e: drives a real client (Claude Code, Gemini CLI, Codex "
                                       "CLI, Copilot CLI, OpenCode, pi, Qwen Code) against a mock "
                                       "model; needs tests/e2e/clients installed")
