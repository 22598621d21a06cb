"""`check()` from several threads at once decides what a serial run decides.

A library caller (a server, an agent framework) checks commands from many
threads with one policy; nothing a check keeps between calls may let one
thread's check change another's (issue 22: the cross-check once kept in the
module whether substitution bodies are compared, and a bashlex comparison in
one thread turned it off for a tree-sitter comparison in another).
"""

import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

from bash_policy.corpus import corpus_files, read_cases
from bash_policy.judge.engine import check
from bash_policy.judge.policy import Policy
from bash_policy.read import exact, parse_cache
from bash_policy.read.crosscheck import compare

CORPORA = Path(__file__).resolve().parent.parent / "corpora"
CASES = [case for f in corpus_files([CORPORA]) for case in read_cases(f)]
THREADS = 8


def _decided(verdict):
    return verdict.allowed, verdict.denials, verdict.notes, verdict.fix


def test_the_corpora_from_eight_threads_decide_as_a_serial_run():
    serial = [_decided(check(case.command, cwd=case.cwd)) for case in CASES]
    parse_cache.clear()  # every thread reads its commands itself, all readers at once
    policy = Policy.from_mapping({})  # a policy no thread has built a spec of yet
    start = threading.Barrier(THREADS)

    def shard(k: int) -> list[tuple[int, tuple]]:
        start.wait()
        return [(n, _decided(check(CASES[n].command, policy, cwd=CASES[n].cwd)))
                for n in range(k, len(CASES), THREADS)]

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # switch threads often, inside each check
    try:
        with ThreadPoolExecutor(THREADS) as pool:
            threaded = dict(pair for part in pool.map(shard, range(THREADS)) for pair in part)
    finally:
        sys.setswitchinterval(interval)
    differing = [(CASES[n].command, serial[n], threaded[n])
                 for n in range(len(CASES)) if serial[n] != threaded[n]]
    assert not differing, differing[:3]


def test_a_bashlex_comparison_never_stops_another_thread_comparing_bodies():
    """Two readings that differ only inside a command substitution differ in
    every thread, while other threads compare bashlex readings (which skip
    the bodies) as fast as they can."""
    mine = exact.parse("echo $(rg x)")
    word = mine.commands[0].words[1]
    inner = replace(word.expansions[0], body=exact.parse("ls").body)  # `$(ls)`, written `$(rg x)`
    command = replace(mine.commands[0], words=(mine.commands[0].words[0],
                                               replace(word, expansions=(inner,))))
    other = replace(mine, body=replace(mine.body, items=(replace(mine.body.items[0],
                                                                 commands=(command,)),)))
    assert compare(mine, other, "tree-sitter") is not None
    stop = threading.Event()

    def bashlex_comparisons() -> None:
        while not stop.is_set():
            compare(mine, other, "bashlex")

    missed = 0
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    threads = [threading.Thread(target=bashlex_comparisons) for _ in range(THREADS - 1)]
    try:
        for thread in threads:
            thread.start()
        for _ in range(3000):
            missed += compare(mine, other, "tree-sitter") is None
    finally:
        stop.set()
        for thread in threads:
            thread.join()
        sys.setswitchinterval(interval)
    assert compare(mine, other, "bashlex") is None  # bashlex does not read the bodies
    assert missed == 0
