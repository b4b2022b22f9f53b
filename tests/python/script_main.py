"""Calls a script's main() as its command line would, for the CPU tests of tests/gpu's scripts."""
import contextlib
import io
import sys


def call_main(main, name, *args):
    """main() with sys.argv = [name, *args]: (exit code, stderr, stdout)."""
    err, out = io.StringIO(), io.StringIO()
    argv = sys.argv
    sys.argv = [name, *args]
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            code = main()
    finally:
        sys.argv = argv
    return code, err.getvalue(), out.getvalue()
