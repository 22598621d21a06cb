"""tree's own option grammar: a cluster's flags take their values from the
words that follow, in order, never from the rest of the cluster.

So `tree -Lo 1 out .` is `-L 1 -o out`, which writes `out`, while a getopt
reading (the engine's) sees `-L o`.  Any cluster in which a flag that takes a
value is not the last letter is read differently by the two, so it is denied.
"""

from __future__ import annotations

from ...records import dataclass
from ..codes import Code
from ..problems import Problem
from . import rule


@dataclass(frozen=True)
class ValueInCluster(Problem):
    code = Code.BP403
    message_format = ("`tree {text}`: tree takes the value of -{letter} from the next word, not from the "
                      "rest of `{text}`, so later words become flag values")
    hint_format = "write -{letter} and its value as separate words: tree -{letter} VALUE"
    text: str
    letter: str


@rule("tree_clusters", codes=[Code.BP403],
      deny=["tree -Lo 1 out ."], allow=["tree -L 2 src", "tree -aL 2"])
def tree_clusters(inv, ctx) -> None:
    """tree option clusters where a value-taking flag is not the last letter.
    tree takes such values from the following words, not from the cluster."""
    seen = set()
    for use in inv.flags:
        word = use.word
        text = word.value
        if id(word) in seen or text is None or text.startswith("--") or len(text) < 3:
            continue
        seen.add(id(word))
        for letter in text[1:-1]:
            flag = inv.spec.flags.get("-" + letter)
            if flag is not None and flag.value == "required":
                ctx.deny(ValueInCluster(text, letter), word.span)
                break
