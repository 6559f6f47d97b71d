"""Primary and readers on one data dir: who writes, and how readers reach the one that does."""
