"""Importing lancedb without its REST namespace client (docs/design.md#start-up).

`import lancedb` imports `lance_namespace`, whose generated REST client package imports, from its
`__init__`, nine API classes with 366 `pydantic.validate_call` methods: ~1 s of schema building on
every start, for a client that only talks to a LanceDB namespace server, which ragdown never does.
Only the client's `models` subpackage is needed to import lancedb.

So the package is registered first as a module with its real `__path__` (its subpackages import as
usual) whose `__init__` runs only when one of its own names is asked for: nothing is left out, the
cost moves to the first use, which never comes here. `LANCE_CPU_THREADS` must be set before this
import (see ragdown.indexing.lance_session).
"""

from __future__ import annotations

import importlib.util
import sys
import threading
import types
from typing import Any

CLIENT = "lance_namespace_urllib3_client"
_lock = threading.Lock()


class _DeferredPackage(types.ModuleType):
    """A package whose `__init__` runs on the first lookup of a name it does not have yet."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or self.__dict__.get("_ragdown_ran", False):
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        with _lock:
            if not self.__dict__.get("_ragdown_ran", False):
                self.__dict__["_ragdown_ran"] = True
                loader = self.__spec__.loader if self.__spec__ is not None else None
                if loader is None:
                    raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
                loader.exec_module(self)
        return getattr(self, name)


def defer_package_init(name: str) -> None:
    """Register `name` (a package, not yet imported) so that its `__init__` runs on first use."""
    if name in sys.modules:
        return
    spec = importlib.util.find_spec(name)
    if spec is None or spec.submodule_search_locations is None:
        return  # not installed, or not a package: the normal import applies
    module = _DeferredPackage(name)
    module.__spec__ = spec
    module.__file__ = spec.origin
    module.__path__ = list(spec.submodule_search_locations)
    module.__package__ = name
    module.__loader__ = spec.loader
    sys.modules[name] = module


def import_lancedb() -> types.ModuleType:
    with _lock:
        defer_package_init(CLIENT)
    import lancedb

    return lancedb
