"""Tests of the Helm chart (charts/ragdown)."""
