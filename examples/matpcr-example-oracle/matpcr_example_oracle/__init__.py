"""A third-party matpcr plugin, installed with pip and found through the ``matpcr`` entry-point group."""

__version__ = "0.2.0"
