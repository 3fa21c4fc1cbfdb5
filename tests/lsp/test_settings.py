"""Client settings: camelCase keys, nested or flat sections, bad values named, extension-only keys ignored."""

from __future__ import annotations

from rewardkit_lsp.settings import ServerSettings, merge_settings


def test_settings_merge_over_the_base_and_accept_the_section_nested_or_flat():
    base = ServerSettings()
    nested, problems = merge_settings(
        base, {"rewardkit": {"taskFields": ["answer"], "debounceMs": 0}}
    )
    assert problems == []
    assert nested == ServerSettings(task_fields=("answer",), debounce_ms=0)
    flat, _ = merge_settings(nested, {"enable": False})
    assert flat == ServerSettings(enable=False, task_fields=("answer",), debounce_ms=0)


def test_a_bad_value_is_named_and_the_rest_still_applies():
    settings, problems = merge_settings(
        ServerSettings(), {"debounceMs": "soon", "enable": False, "taskFields": ["a", 3]}
    )
    assert settings == ServerSettings(enable=False)
    assert problems == [
        "setting rewardkit.debounceMs: expected a number >= 0, got 'soon'",
        "setting rewardkit.taskFields: expected a list of field names, got ['a', 3]",
    ]


def test_the_editor_extensions_own_keys_are_ignored_silently():
    raw = {
        "interpreter": "/usr/bin/python3",
        "args": [],
        "trace": {"server": "off"},
        "debounceMs": 50,
    }
    settings, problems = merge_settings(ServerSettings(), raw)
    assert problems == []
    assert settings.debounce_ms == 50


def test_null_settings_change_nothing():
    assert merge_settings(ServerSettings(debounce_ms=5), None) == (
        ServerSettings(debounce_ms=5),
        [],
    )
