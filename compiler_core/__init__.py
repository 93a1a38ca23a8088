"""CompileScope's engine: capture, trace import and the session model. Never imports Qt.

Importing this package must not import torch either: the GUI reads sessions through
`compiler_core.session` without paying torch's start-up cost. Modules that need torch import it
inside the worker process only.
"""

__version__ = "0.1.0"
