"""The one read-only open of an attnsweep results database for the Python scripts and tests.

Why one: SQLite opens read-only only through a URI (file:PATH?mode=ro), and in a URI a '?' or
'#' in the file's name ends the path and '%' starts an escape, so the path must be quoted; the
eight copies of the open that the scripts had held the quoting in one. Read-only, because the
reports never write and a read-write open of a mistyped path would create an empty database.

    sys.path.insert(0, <the repository>/scripts); from results_db import open_read_only

A missing file (or one that cannot be opened) raises sqlite3.OperationalError "unable to open
database file", as sqlite3 does: every caller already reports sqlite3.Error as its own error.
"""
import os
import sqlite3
import urllib.parse


def open_read_only(path):
    """A read-only sqlite3 connection to the database file at path (str or os.PathLike)."""
    quoted = urllib.parse.quote(os.path.abspath(os.fspath(path)))
    return sqlite3.connect(f"file:{quoted}?mode=ro", uri=True)
