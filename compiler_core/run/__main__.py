"""`python -m compiler_core.run SCRIPT --out S.json --events-file PATH -- ARGS`: see spec.py."""

from __future__ import annotations

from compiler_core.run.script_worker import main

raise SystemExit(main())
