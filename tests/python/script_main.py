"""Calls a script's main() as its command line would, and imports the scripts of scripts/ (the Python reference tools among them), for the CPU
tests of those scripts."""
import contextlib
import importlib
import io
import os
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))


def import_with_torch(name):
    """The module `name` (a script of scripts/, or torch itself), or None where this python cannot
    import torch: the tests that need it are skipped (needs_torch)."""
    try:
        import torch  # noqa: F401
        return importlib.import_module(name)
    except ImportError:
        return None


def needs_torch(module):
    """Skips a test, or a class of them, when `module` (import_with_torch's) is None."""
    return unittest.skipIf(module is None, "torch is not importable by this python")


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
