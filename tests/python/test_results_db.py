"""scripts/results_db.py, the one read-only open of a results database: a real SQLite file whose
name holds '?', '#' and '%' opens as itself, a write through it raises, a missing file raises
sqlite3's own error and is not created."""
import os
import sqlite3
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from results_db import open_read_only  # noqa: E402


class OpenReadOnly(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def make_db(self, name):
        path = os.path.join(self.tmp.name, name)
        db = sqlite3.connect(path)
        db.execute("CREATE TABLE runs (run_id INTEGER PRIMARY KEY, name TEXT)")
        db.execute("INSERT INTO runs (name) VALUES ('the one')")
        db.commit()
        db.close()
        return path

    def test_a_name_with_question_mark_hash_and_percent_is_the_file_itself(self):
        path = self.make_db("night?mode=rw#1 100%20.db")
        # Unquoted, the URI would name the file "night" (the rest a query and a fragment).
        decoy = os.path.join(self.tmp.name, "night")
        db = open_read_only(path)
        self.addCleanup(db.close)
        self.assertEqual(db.execute("SELECT name FROM runs").fetchall(), [("the one",)])
        self.assertFalse(os.path.exists(decoy))
        self.assertEqual(sorted(os.listdir(self.tmp.name)), ["night?mode=rw#1 100%20.db"])

    def test_a_write_raises(self):
        path = self.make_db("results#?.db")
        db = open_read_only(path)
        self.addCleanup(db.close)
        with self.assertRaises(sqlite3.OperationalError) as caught:
            db.execute("INSERT INTO runs (name) VALUES ('another')")
        self.assertIn("readonly", str(caught.exception))
        with self.assertRaises(sqlite3.OperationalError):
            db.execute("CREATE TABLE more (x)")
        check = sqlite3.connect(path)
        self.addCleanup(check.close)
        self.assertEqual(check.execute("SELECT count(*) FROM runs").fetchone(), (1,))

    def test_a_relative_path_is_from_the_working_directory(self):
        self.make_db("here?.db")
        before = os.getcwd()
        os.chdir(self.tmp.name)
        self.addCleanup(os.chdir, before)
        db = open_read_only("here?.db")
        self.addCleanup(db.close)
        self.assertEqual(db.execute("SELECT count(*) FROM runs").fetchone(), (1,))

    def test_a_missing_file_raises_and_is_not_created(self):
        path = os.path.join(self.tmp.name, "missing?.db")
        with self.assertRaises(sqlite3.OperationalError) as caught:
            open_read_only(path)
        self.assertEqual(str(caught.exception), "unable to open database file")
        self.assertEqual(os.listdir(self.tmp.name), [])


if __name__ == "__main__":
    unittest.main()
