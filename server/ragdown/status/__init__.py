"""`ragdown status`: every effective setting and where its value came from
(docs/design.md#where-a-setting-comes-from)."""
