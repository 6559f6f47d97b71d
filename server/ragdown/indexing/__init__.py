"""Embedders, the LanceDB store and its meta, the sync engine and the watcher."""
