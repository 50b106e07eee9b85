"""Loaded by the schemathesis test (PYTHONPATH) before schemathesis itself.

CPython 3.11's `ast` module keeps its recursion counter per interpreter, not per thread: two
threads parsing at once (schemathesis's workers, through Hypothesis describing its lambdas) can
make one of them fail with "AST constructor recursion depth mismatch", an error of the
interpreter, not of the document or the server. Parsing is made one thread at a time.
"""

import ast
import threading

_parse = ast.parse
_one_at_a_time = threading.RLock()


def _parse_alone(*args, **kwargs):
    with _one_at_a_time:
        return _parse(*args, **kwargs)


ast.parse = _parse_alone
