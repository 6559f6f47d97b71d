"""The search snapshot: what searches read, persisted by the primary beside the index and mapped by
every process that searches it (docs/design.md#search-snapshot). Nothing here imports LanceDB."""
