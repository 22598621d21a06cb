"""bashlex imported through the table cache parses exactly as plain bashlex."""

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("bashlex")

COMMANDS = [
    "rg -n 'a b' src | head -3",
    "a && b || c; d",
    "x=1 y=$(z) cmd > out 2>&1 < in",
    "for i in a b; do echo $i; done",
    "f() { a; }; (b) | { c; }",
    "echo \"$(a `b`)\" ${x:-y} $((1+2))",
    "case x in a) b;; esac",
    "if a; then b; elif c; then d; else e; fi",
]

SCRIPT = """
import json, sys
{setup}
out = []
for command in json.loads(sys.argv[1]):
    try:
        out.append([p.dump() for p in bashlex.parse(command)])
    except Exception as error:
        out.append(type(error).__name__)
print(json.dumps(out))
"""
CACHED = "from bash_policy.read.bashlex_tables import import_bashlex\nbashlex = import_bashlex()"
PLAIN = "import bashlex"


def run(setup, cache_home):
    env = dict(os.environ, XDG_CACHE_HOME=str(cache_home))
    result = subprocess.run([sys.executable, "-c", SCRIPT.format(setup=setup), json.dumps(COMMANDS)],
                            capture_output=True, text=True, env=env, check=True)
    return json.loads(result.stdout)


def test_cached_tables_parse_like_bashlex(tmp_path):
    plain = run(PLAIN, tmp_path)
    building = run(CACHED, tmp_path)
    assert len(list((tmp_path / "bash-policy").glob("bashlex-tables-*.json"))) == 1
    loaded = run(CACHED, tmp_path)
    assert plain == building == loaded


def test_stale_or_broken_cache_falls_back(tmp_path):
    run(CACHED, tmp_path)
    (cache,) = (tmp_path / "bash-policy").glob("bashlex-tables-*.json")
    cache.write_text("{not json")
    assert run(CACHED, tmp_path) == run(PLAIN, tmp_path)
    cache.write_text(json.dumps({"key": ["old"], "productions": [], "action": {}, "goto": {}}))
    assert run(CACHED, tmp_path) == run(PLAIN, tmp_path)


def test_each_install_has_a_file_of_its_own(tmp_path):
    """Another bashlex (another install, another Python) keeps its tables beside these."""
    from bash_policy.read.bashlex_tables import cache_path

    key = [2, [3, 11], [["parser.py", 1, 2]]]
    assert cache_path(key) != cache_path([*key[:2], [["parser.py", 1, 3]]])


def test_a_start_from_the_cache_does_not_import_inspect(tmp_path):
    """bashlex's yacc imports inspect to check a grammar it builds: from the
    cache it builds none, so only a stand-in is imported (and dropped)."""
    script = f"import sys\n{CACHED}\nprint('inspect' in sys.modules, bashlex.parse('a | b')[0].kind)"
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path))
    runs = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env,
                           check=True).stdout.split() for _ in range(2)]
    assert runs == [["True", "pipeline"], ["False", "pipeline"]]
