"""Start CompileScope: `python main.py [PATH] [--example NAME] [--screenshot OUT.png]`."""

from explorer.launch import main

if __name__ == "__main__":
    raise SystemExit(main())
