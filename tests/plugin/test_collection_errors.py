"""A malformed golden file is a collection error naming the file and line, never a skipped case."""

from __future__ import annotations

import pytest

GOOD_PAIR = '[[pair]]\nid = "fine"\ngiven = "x"\ngold = "x"\ngrader = "plugrewards:same_text"\n\n'

CASES = [
    pytest.param(
        ".toml",
        GOOD_PAIR + '[[pair]]\ngiven = "x"\ngold = \ngrader = "plugrewards:same_text"\n',
        "golden_bad.toml:9: invalid TOML: *line 9*",
        id="bad-toml",
    ),
    pytest.param(
        ".toml",
        GOOD_PAIR + '[[pair]]\ngiven = "x"\ngold = ',
        "golden_bad.toml:9: invalid TOML: *end of document*",
        id="bad-toml-at-end",
    ),
    pytest.param(
        ".toml",
        GOOD_PAIR + '[[pair]]\nid = "half"\ngiven = "0.5"\n',
        "golden_bad.toml:7: [[][[]pair]] 'half': missing required key 'gold'",
        id="missing-key",
    ),
    pytest.param(
        ".toml",
        GOOD_PAIR + '[[pair]]\nid = "g"\ngiven = "1"\ngold = "1"\ngrader = "no_such_grader_xyz"\n',
        "golden_bad.toml:11: [[][[]pair]] 'g': unknown grader 'no_such_grader_xyz': *",
        id="unknown-grader",
    ),
    pytest.param(
        ".toml",
        GOOD_PAIR + '[[pair]]\ngiven = "1"\ngold = "1"\ngrader = "plugrewards:nothing_here"\n',
        "golden_bad.toml:10: [[][[]pair]] 'pair1': unknown grader 'plugrewards:nothing_here': *has no attribute*",
        id="unknown-grader-path",
    ),
    pytest.param(
        ".toml",
        GOOD_PAIR + '[[pair]]\ngiven = "1"\ngold = "1"\nequivelent = false\n',
        "golden_bad.toml:10: [[][[]pair]] 'pair1': unknown key 'equivelent' (did you mean 'equivalent'?)*",
        id="misspelt-key",
    ),
    pytest.param(
        ".toml",
        GOOD_PAIR + '[[pairs]]\ngiven = "1"\ngold = "1"\n',
        "golden_bad.toml:7: unknown top-level key 'pairs' (did you mean 'pair'?)*",
        id="misspelt-table",
    ),
    pytest.param(
        ".toml",
        GOOD_PAIR + '[[pair]]\nid = "fine"\ngiven = "1"\ngold = "1"\n',
        "golden_bad.toml:8: duplicate case id 'fine' (first used at line 1)",
        id="duplicate-id",
    ),
    pytest.param(
        ".toml",
        GOOD_PAIR + '[[pair]]\nid = "a::b"\ngiven = "1"\ngold = "1"\n',
        "golden_bad.toml:8: [[][[]pair]] 'a::b': 'id' must not contain '::'*",
        id="id-with-node-separator",
    ),
    pytest.param(
        ".toml",
        GOOD_PAIR + '[[pair]]\ngiven = 0.5\ngold = "1"\n',
        "golden_bad.toml:8: [[][[]pair]] 'pair1': 'given' must be a string, got float 0.5 (quote it: given = '0.5')",
        id="float-answer",
    ),
    pytest.param(
        ".toml",
        GOOD_PAIR + '[[reward]]\nreward = "no_such_reward_xyz"\nexpect = 1.0\n',
        "golden_bad.toml:8: [[][[]reward]] 'reward0': unknown reward 'no_such_reward_xyz'*import that module in conftest.py*",
        id="unknown-reward",
    ),
    pytest.param(
        ".toml",
        GOOD_PAIR
        + '[[reward]]\nreward = "plugrewards:length_reward"\nfields = { final_response = "x" }\n',
        "golden_bad.toml:7: [[][[]reward]] 'reward0': missing required key 'expect'",
        id="missing-expect",
    ),
    pytest.param(
        ".toml",
        GOOD_PAIR
        + '[[reward]]\nreward = "plugrewards:length_reward"\nexpect = { correct = true }\n',
        "golden_bad.toml:9: [[][[]reward]] 'reward0': 'expect' table needs a 'reward' key (it has: correct)",
        id="expect-without-reward",
    ),
    pytest.param(
        ".toml",
        GOOD_PAIR
        + '[[reward]]\nreward = "plugrewards:length_reward"\n'
        + 'fields = { final_response = "x", max_lenght = 3 }\nexpect = 0.1\n',
        "golden_bad.toml:9: [[][[]reward]] 'reward0': field 'max_lenght' is not a parameter of the "
        "reward (did you mean 'max_length'?); reward 'plug_length_reward' takes final_response, max_length",
        id="misspelt-optional-field",  # the runtime would drop it silently and use the default
    ),
    pytest.param(
        ".toml",
        GOOD_PAIR
        + '[[reward]]\nreward = "plugrewards:length_reward"\nfields = { final_respons = "x" }\nexpect = 0.1\n',
        "golden_bad.toml:9: [[][[]reward]] 'reward0': field 'final_respons' is not a parameter of the "
        "reward (did you mean 'final_response'?)*",
        id="misspelt-required-field",
    ),
    pytest.param(
        ".toml",
        GOOD_PAIR
        + '[[reward]]\nreward = "plugrewards:length_reward"\nfields = { max_length = 3 }\nexpect = 0.1\n',
        "golden_bad.toml:9: [[][[]reward]] 'reward0': missing field 'final_response', which the reward requires*",
        id="missing-field",
    ),
    pytest.param(
        ".toml",
        GOOD_PAIR + '[[pair]]\ngiven = "1"\ngold = "1"\npolicy = "strct"\n',
        "golden_bad.toml:10: [[][[]pair]] 'pair1': unknown policy 'strct' (did you mean 'strict'?)*",
        id="misspelt-policy",
    ),
    pytest.param(
        ".toml",
        "# nothing here yet\n",
        "golden_bad.toml:1: no cases: *",
        id="empty-file",
    ),
    pytest.param(
        ".jsonl",
        '{"given": "1", "gold": "1", "grader": "plugrewards:same_text"}\n{"given": "1", "gold": \n',
        "golden_bad.jsonl:2: invalid JSON: *",
        id="bad-jsonl-line",
    ),
    pytest.param(
        ".jsonl",
        '{"given": "1", "gold": "1", "grader": "plugrewards:same_text"}\n\n{"answer": "1"}\n',
        "golden_bad.jsonl:3: cannot tell the case's kind*",
        id="jsonl-unknown-kind",
    ),
]


@pytest.mark.parametrize(("suffix", "content", "message"), CASES)
def test_malformed_file_is_a_collection_error_with_file_and_line(
    plug: pytest.Pytester, suffix: str, content: str, message: str
) -> None:
    plug.makefile(suffix, golden_bad=content)
    result = plug.runpytest()
    result.assert_outcomes(errors=1)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*ERROR collecting golden_bad*", message])


def test_the_multiline_string_scan_keeps_lines_right(plug: pytest.Pytester) -> None:
    content = (
        '[[pair]]\nid = "long"\ngiven = """\n[[pair]]\nnot a header\n"""\ngold = "x"\n'
        'grader = "plugrewards:same_text"\n\n[[pair]]\nid = "after"\ngiven = "a"\ngold = "b"\n'
        'grader = "plugrewards:same_text"\n'
    )
    plug.makefile(".toml", golden_lines=content)
    result = plug.runpytest()
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "*golden pair 'long' failed at golden_lines.toml:1",
            "*golden pair 'after' failed at golden_lines.toml:10",
        ]
    )
