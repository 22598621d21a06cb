"""The differential fuzzer against real bash (issue 8), apart from the product.

- sandbox.py: one worker's read-only sandbox, argv-logging stubs, bash run as
  `bash -c` and as a script on stdin;
- expect.py: what bash must do for an allowed verdict (a walk of the exact
  reader's tree) and how a run differs from it;
- grammar_oracle.py: the grammar of tricky commands, the oracle, hypothesis
  runs and shrinking, many examples on every core.

benchmarks/fuzz.py drives it at scale; tests/test_grammar_oracle.py in CI.
"""
