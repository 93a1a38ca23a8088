"""`python -m compiler_core.worker MODEL.py --out S.json --events-file PATH`: see protocol.py."""

from __future__ import annotations

from compiler_core.worker.worker_main import main

raise SystemExit(main())
