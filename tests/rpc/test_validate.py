"""rpc.validate: the registry's schemas as parameter checks whose errors name the parameter."""

from __future__ import annotations

import pytest

from chorus_tools.rpc.dispatch.validate import ParamsValidator
from chorus_tools.tools.errors import ToolError
from chorus_tools.tools.registry import ALL_METHODS, METHODS

V = ParamsValidator(METHODS)


def bad(method: str, params):
    with pytest.raises(ToolError) as err:
        V.check(METHODS[method], params)
    assert err.value.code == "invalid_params"
    return err.value


def test_valid_params_pass_through():
    assert V.check(METHODS["file.read"], {"path": "a", "offset": 2}) == {"path": "a",
                                                                        "offset": 2}
    assert V.check(METHODS["file.list"], None) == {}
    assert V.check(METHODS["file.list"], []) == {}


def test_missing_required_parameter_is_named():
    assert bad("file.read", {}).details["param"] == "path"
    assert bad("file.write", {"path": "a"}).details["param"] == "content"


def test_unknown_parameter_is_named_and_the_accepted_ones_listed():
    err = bad("file.read", {"path": "a", "file_path": "b"})
    assert err.details["param"] == "file_path" and "offset" in err.message


@pytest.mark.parametrize("method, params, param", [
    ("file.read", {"path": 3}, "path"),
    ("file.read", {"path": "a", "offset": 0}, "offset"),
    ("file.read", {"path": "a", "limit": -1}, "limit"),
    ("file.read", {"path": "a", "raw": "yes"}, "raw"),
    ("file.read", {"path": "a", "offset": True}, "offset"),
    ("file.search", {"pattern": "x", "output_mode": "lines"}, "output_mode"),
    ("file.search", {"pattern": "x", "glob": 3}, "glob"),
    ("file.list", {"sort": "name"}, "sort"),
    ("file.patch", {"path": "a", "patches": [{"find": "x"}]}, "patches[0].replace"),
    ("file.patch", {"path": "a", "patches": [{"find": "x", "replace": 1}]},
     "patches[0].replace"),
    ("file.patch", {"path": "a", "patches": "x"}, "patches"),
])
def test_ill_typed_parameter_is_named(method, params, param):
    assert bad(method, params).details["param"] == param


def test_positional_params_are_refused_by_name():
    assert bad("file.read", ["a.txt"]).details["param"] == "params"


def test_integral_floats_become_ints():
    assert V.check(METHODS["file.read"], {"path": "a", "offset": 2.0})["offset"] == 2
    assert isinstance(V.check(METHODS["file.read"], {"path": "a", "limit": 3.0})["limit"], int)


def test_an_unknown_key_inside_a_patch_is_named_not_an_internal_error():
    """Regression: an unknown key in a patch object crashed the explanation (IndexError),
    so the client got internal_error instead of invalid_params."""
    err = bad("file.patch", {"path": "a", "patches": [
        {"find": "a", "replace": "b"}, {"find": "a", "replace": "b", "extra": 1}]})
    assert err.details["param"] == "patches[1].extra" and "replace_all" in err.message


def test_a_value_of_neither_allowed_type_says_which_types_are():
    err = bad("file.search", {"pattern": "x", "glob": [1]})
    assert err.details["param"] == "glob"
    assert "a string or a list of strings" in err.message


@pytest.mark.parametrize("value", ["-1", "two", -1, True, 1.5, None])
def test_an_int_or_string_param_refused_says_both_forms(value) -> None:
    """shadow's integers-as-strings are an anyOf of two single-type schemas (no type
    array): either form passes, anything else is named with both."""
    read = next(m for m in ALL_METHODS if m.toolset == "shadow" and m.name == "Read")
    validator = ParamsValidator({"Read": read})
    for good in (3, "3", " 3 "):
        assert validator.check(read, {"file_path": "a", "offset": good})["offset"] == good
    with pytest.raises(ToolError) as err:
        validator.check(read, {"file_path": "a", "offset": value})
    assert err.value.details["param"] == "offset"
    assert ("must be a non-negative integer or the same as a decimal string"
            in err.value.message), err.value.message


def test_no_schema_carries_a_default() -> None:
    """fastjsonschema writes a schema's `default` into the params it checks: a default
    there would reach the tool as if the client had sent it (and clash with an alias).
    Defaults live in the tools' signatures; rpc.discover reads them from there."""
    def defaults(schema: object) -> bool:
        if isinstance(schema, dict):
            return "default" in schema or any(map(defaults, schema.values()))
        return isinstance(schema, list) and any(map(defaults, schema))
    assert not [m.name for m in ALL_METHODS if defaults(m.params)]
