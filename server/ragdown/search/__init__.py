"""Retrieval: dense and BM25 pools, filters applied before fusion, fused rankings, hits."""
