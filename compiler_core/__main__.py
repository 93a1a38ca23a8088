from compiler_core.cli import main

raise SystemExit(main())
