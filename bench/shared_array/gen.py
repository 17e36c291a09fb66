#!/usr/bin/env python3
"""Writes data.json: a JSON array of user records, about SIZE_MB megabytes (default 50)."""
import json
import random
import sys

size_mb = float(sys.argv[1]) if len(sys.argv) > 1 else 50.0
out = sys.argv[2] if len(sys.argv) > 2 else "data.json"
rng = random.Random(42)
words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]
target = int(size_mb * 1024 * 1024)
written = 1
with open(out, "w") as f:
    f.write("[")
    i = 0
    while written < target:
        rec = {
            "id": i,
            "username": f"user{i}",
            "email": f"user{i}@example.test",
            "password": "".join(rng.choice("abcdefghijklmnop") for _ in range(12)),
            "tags": [rng.choice(words) for _ in range(3)],
            "address": {"city": rng.choice(words).title(), "zip": f"{rng.randrange(10000, 99999)}"},
        }
        text = ("," if i else "") + json.dumps(rec, separators=(",", ":"))
        f.write(text)
        written += len(text)
        i += 1
    f.write("]")
print(f"{out}: {i} records, {written + 1} bytes")
