"""Hook settings layering (docs/hook.md#settings): argument > folder > saved > environment > default."""

from __future__ import annotations

import math
from typing import Any

import pytest

from ragdown.bounds import hook_value_error, valid_overrides
from ragdown.hook.settings import HookSettings, resolve


def test_defaults_and_the_embedders_own_min_score() -> None:
    assert resolve({}, [], 0.55) == HookSettings(top_k=4, min_score=0.55, min_ratio=0.95, max_chars=6000)


def test_each_key_comes_from_the_first_layer_that_sets_it() -> None:
    call = {"top_k": 1}
    folder = {"top_k": 6, "min_score": 0.75}
    saved = {"min_score": 0.6, "min_ratio": 0.5}
    env = {"min_ratio": 0.9, "max_chars": 100}
    assert resolve(call, [folder, saved, env], 0.3) == HookSettings(1, 0.75, 0.5, 100)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("min_score", "high"),
        ("min_score", math.inf),
        ("min_score", math.nan),
        ("min_score", None),
        ("min_score", -2.0),  # one set of bounds everywhere: 0 to 1, as the RagdownFolder's
        ("top_k", 51),
        ("max_chars", 100_001),
        ("min_ratio", 1.5),
        ("min_ratio", -0.1),
        ("top_k", -1),
        ("top_k", 2.5),
        ("top_k", True),
        ("max_chars", "6000"),
    ],
)
def test_an_invalid_value_is_skipped_so_the_next_layer_applies(key: str, value: object) -> None:
    assert hook_value_error(key, value) is not None
    assert valid_overrides({key: value}) == {}
    settings = resolve(
        {}, [{key: value}, {"top_k": 3, "min_score": 0.4, "min_ratio": 0.2, "max_chars": 50}], 0.9
    )
    assert settings == HookSettings(3, 0.4, 0.2, 50)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("min_score", 0),
        ("min_score", 1),
        ("min_ratio", 0),
        ("min_ratio", 1),
        ("top_k", 0),
        ("max_chars", 7.0),
    ],
)
def test_valid_edge_values(key: str, value: float) -> None:
    assert hook_value_error(key, value) is None


def test_a_layer_that_is_not_an_object_is_empty() -> None:
    assert valid_overrides(["top_k", 3]) == {}
    assert valid_overrides(None) == {}
    assert resolve({}, [[], "x"], 0.5).top_k == 4  # type: ignore[list-item]  # malformed layers on purpose


def test_unknown_keys_are_ignored() -> None:
    assert valid_overrides({"top_k": 2, "colour": "red"}) == {"top_k": 2}


def test_one_set_of_bounds_for_the_tool_the_environment_and_the_resource() -> None:
    """The tool's arguments, RAGDOWN_HOOK_* and a RagdownFolder's spec.hook (camelCase, and its CRD
    schema) all take the bounds of ragdown/bounds.py."""
    import json
    from pathlib import Path

    import yaml
    from pydantic import ValidationError

    from ragdown.bounds import BOUNDS, HookOverrides
    from ragdown.settings import ServerSettings

    crd = yaml.safe_load((Path(__file__).resolve().parents[2] / "crds/ragdownfolder.yaml").read_text())
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    schema = HookOverrides.model_json_schema(by_alias=True)["properties"]
    for key, bound in BOUNDS.items():
        camel = HookOverrides.model_fields[key].alias
        assert camel is not None
        crd_field = spec["hook"]["properties"][camel]
        assert (crd_field["minimum"], crd_field["maximum"]) == (bound.low, bound.high), key
        assert crd_field["type"] == ("integer" if bound.whole else "number")
        model_field = next(s for s in schema[camel]["anyOf"] if s.get("type") != "null")
        assert (model_field["minimum"], model_field["maximum"]) == (bound.low, bound.high), key
        over = bound.high + 1
        with pytest.raises(ValidationError):
            HookOverrides.model_validate({camel: over})
        settings: dict[str, Any] = {f"hook_{key}": over}
        with pytest.raises(ValidationError):
            ServerSettings(**settings)
    assert HookOverrides.model_validate({"topK": 6, "minScore": 0.75}).given() == {
        "top_k": 6,
        "min_score": 0.75,
    }
    assert json.dumps(HookOverrides(top_k=3).given()) == '{"top_k": 3}'
