"""The capture worker process and its Qt-free client; the protocol is in `protocol.py`."""
