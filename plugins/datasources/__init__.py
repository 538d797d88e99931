"""Data sets: public origins, licences and files for `matpcr data pull`, and the embedded default set.

Declares every data set the built-in tasks read through the ``register_data_sets`` hook. The loaders find
a set with :func:`matpcr_plugins.datasources.locate.dataset_dir`: the configured data directory, else the
user data directory (where ``matpcr data pull`` writes), else the small slice embedded in the package.
"""

from __future__ import annotations

from typing import Any

from matpcr import hookimpl


@hookimpl
def register_data_sets(register: Any) -> None:
    from matpcr_plugins.datasources.catalog import SETS, dataset

    for name, meta in SETS.items():
        register(name, lambda name=name: dataset(name), meta.get("title", ""))
