"""The chart fixtures (Helm's library, cached renders) for every chart test module."""

from tests.chart.test_chart import chart, default, render

__all__ = ["chart", "default", "render"]
