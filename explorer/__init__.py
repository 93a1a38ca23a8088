"""CompileScope's Qt GUI. Never imports torch: compiling runs in a worker subprocess."""
