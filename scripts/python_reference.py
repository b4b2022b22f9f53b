"""What the report scripts read beside a results database: the independent Python measurement
(scripts/*_reference.py: one JSON object per line) and the call's machine.txt."""
import json


def reference_rows(path):
    """The JSON objects of a .jsonl file, one per non-blank line, in order."""
    with open(path) as lines:
        return [json.loads(line) for line in lines if line.strip()]


def machine_text(argv, index):
    """The machine facts file named at argv[index], stripped; "" when it is not given."""
    if len(argv) <= index:
        return ""
    with open(argv[index]) as machine:
        return machine.read().strip()
