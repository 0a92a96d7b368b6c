"""Two shipped system perf-dbs side by side: their environments, problem counts by mode, and
the problems whose winner differs (CPU, seconds).

Why: a rebuild under a new source key (session 59: a family added) also takes in the data
measured since the last build; this says how much of the db that changed.

    python benchmarks/analysis_s59/systemdb_diff.py [OLD_REV] [NEW.sqlite.gz]

Default: the db at commit 56ef79c (session 37's build) against the working tree's.
"""

import sqlite3
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from tilepick.dispatch.perfdb import unpacked

DB = "models/perfdb_h200.sqlite.gz"


def winners(path: Path) -> tuple[list, dict[str, str]]:
    con = sqlite3.connect(f"file:{unpacked(path)}?mode=ro", uri=True)
    envs = con.execute("SELECT gpu_name, source_hash FROM envs").fetchall()
    modes = Counter(m for (m,) in con.execute("SELECT mode FROM problems"))
    return [envs, dict(modes)], dict(con.execute("SELECT problem_key, winner FROM problems"))


def main(rev: str = "56ef79c", new: str = DB) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        old_path = Path(tmp) / Path(DB).name
        old_path.write_bytes(subprocess.run(["git", "show", f"{rev}:{DB}"], check=True,
                                            capture_output=True).stdout)
        (old_env, old), (new_env, cur) = winners(old_path), winners(Path(new))
    print(f"{rev}: {old_env} {len(old)} problems")
    print(f"{new}: {new_env} {len(cur)} problems")
    both = old.keys() & cur.keys()
    print(f"only in {rev}: {len(old.keys() - cur.keys())}; only in the new: "
          f"{len(cur.keys() - old.keys())}; winner changed on {sum(old[k] != cur[k] for k in both)}"
          f" of the {len(both)} in both")


if __name__ == "__main__":
    main(*sys.argv[1:])
