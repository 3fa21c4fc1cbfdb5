"""Golden files: read ``[[pair]]`` and ``[[reward]]`` cases from TOML or JSON Lines, with the
line of each case, and reject malformed files with an error naming the file and line.

Where a TOML case starts: ``tomllib`` keeps no line numbers, so a light scan of the text
finds each ``[[pair]]``/``[[reward]]`` table header, skipping multi-line strings
(``'''``/``\"\"\"``); the n-th header of a kind is the n-th case of that kind. Cases written
as inline arrays (``pair = [{...}]``) get the line of that key instead.
In JSON Lines, a case's line is its line.
"""

from __future__ import annotations

import difflib
import json
import math
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

KINDS = ("pair", "reward")
DEFAULT_TOLERANCE = 1e-9
NOT_OURS_HINT = (
    "(Not a rewardkit golden file? Set the ini option rewardkit_golden_files to the "
    "patterns of yours.)"
)

_PAIR_REQUIRED = ("given", "gold")
_PAIR_OPTIONAL = ("id", "equivalent", "policy", "grader", "note", "xfail")
_REWARD_REQUIRED = ("reward", "expect")
_REWARD_OPTIONAL = ("id", "fields", "tolerance", "note", "xfail")


class GoldenFileError(Exception):
    """A golden file is malformed; the message starts with ``file:line:``."""

    def __init__(self, path: str | Path, line: int, message: str) -> None:
        super().__init__(f"{path}:{line}: {message}")
        self.path = str(path)
        self.line = line
        self.message = message


@dataclass(frozen=True, kw_only=True)
class _CaseBase:
    """What every case has: its id, where it is, and whether it is a known failure."""

    id: str
    note: str | None
    path: Path
    line: int
    index: int
    """Its position among the cases of its kind (``--rewardkit-regen`` finds TOML cases so)."""
    xfail: str | None = None
    """A known failure's reason: the case runs as a strict xfail (fixing it fails the run)."""

    @property
    def location(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass(frozen=True, kw_only=True)
class PairCase(_CaseBase):
    """An answer pair: ``given`` must (``equivalent``) or must not grade as equivalent to ``gold``."""

    given: str
    gold: str
    equivalent: bool
    policy: str | None
    grader: str | None
    kind: Literal["pair"] = "pair"


@dataclass(frozen=True, kw_only=True)
class RewardCase(_CaseBase):
    """A reward case: calling ``reward`` with ``fields`` must give ``expect`` (within ``tolerance``).

    ``expect`` is a number (the reward) or a mapping with ``reward`` and extras to compare;
    it is None only while ``--rewardkit-regen`` is about to fill it in.
    """

    reward: str
    fields: Mapping[str, Any]
    expect: float | Mapping[str, Any] | None
    tolerance: float
    kind: Literal["reward"] = "reward"


Case = PairCase | RewardCase


@dataclass(frozen=True)
class GoldenFile:
    """The cases of one golden file, in file order per kind."""

    path: Path
    format: Literal["toml", "jsonl"]
    pairs: tuple[PairCase, ...] = ()
    rewards: tuple[RewardCase, ...] = ()
    cases: tuple[Case, ...] = field(default=())


_HEADER = re.compile(
    r"""^\s*\[\[\s*(?:"(?P<dq>[^"]*)"|'(?P<sq>[^']*)'|(?P<bare>[A-Za-z0-9_-]+))\s*\]\]\s*(?:\#.*)?$"""
)


def table_header_lines(text: str) -> dict[str, list[int]]:
    """Lines (1-based) of each ``[[name]]`` array-of-tables header, outside multi-line strings."""
    headers: dict[str, list[int]] = {}
    open_delimiter: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if open_delimiter is not None:
            if line.count(open_delimiter) % 2 == 1:
                open_delimiter = None
            continue
        match = _HEADER.match(line)
        if match:
            name = match.group("dq") or match.group("sq") or match.group("bare") or ""
            headers.setdefault(name, []).append(number)
            continue
        for delimiter in ('"""', "'''"):
            if line.count(delimiter) % 2 == 1:
                open_delimiter = delimiter
                break
    return headers


def _key_line(text: str, key: str) -> int:
    pattern = re.compile(rf"^\s*(\[+\s*)?[\"']?{re.escape(key)}[\"']?\s*(=|\]|\.)")
    for number, line in enumerate(text.splitlines(), start=1):
        if pattern.match(line):
            return number
    return 1


def did_you_mean(word: str, choices: tuple[str, ...] | list[str]) -> str:
    close = difflib.get_close_matches(word, choices, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


class _CaseReader:
    """Validates one raw case table; every error names the file, the case's line and its id."""

    def __init__(self, display: str, kind: str, raw: Any, line: int, index: int) -> None:
        self.display = display
        self.kind = kind
        self.raw = raw
        self.line = line
        self.index = index
        self.label = f"[[{kind}]] '{kind}{index}'"

    def fail(self, message: str) -> GoldenFileError:
        return GoldenFileError(self.display, self.line, f"{self.label}: {message}")

    def check_keys(
        self,
        required: tuple[str, ...],
        optional: tuple[str, ...],
        allow_missing: tuple[str, ...] = (),
    ) -> None:
        if not isinstance(self.raw, Mapping):
            raise self.fail(f"expected a table of keys, got {type(self.raw).__name__}")
        if "id" in self.raw:
            self.label = f"[[{self.kind}]] {self.raw['id']!r}"
        allowed = (*required, *optional)
        for key in self.raw:
            if key not in allowed:
                raise self.fail(
                    f"unknown key {key!r}{did_you_mean(key, allowed)}; allowed keys: {', '.join(allowed)}"
                )
        for key in required:
            if key not in self.raw and key not in allow_missing:
                raise self.fail(f"missing required key {key!r}")

    def text(self, key: str, *, numbers: bool = False) -> str:
        value = self.raw[key]
        if isinstance(value, str):
            return value
        if numbers and isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        hint = f" (quote it: {key} = '{value}')" if isinstance(value, float) else ""
        raise self.fail(f"{key!r} must be a string, got {type(value).__name__} {value!r}{hint}")

    def optional_text(self, key: str) -> str | None:
        return self.text(key) if key in self.raw else None

    def case_id(self) -> str:
        if "id" not in self.raw:
            return f"{self.kind}{self.index}"
        value = self.raw["id"]
        if isinstance(value, bool) or not isinstance(value, (str, int)) or str(value).strip() == "":
            raise self.fail(f"'id' must be a non-empty string, got {value!r}")
        if "::" in str(value):
            raise self.fail(
                f"'id' must not contain '::' (pytest separates node ids with it), got {value!r}"
            )
        return str(value)

    def number(self, value: Any, what: str) -> float:
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
        ):
            raise self.fail(f"{what} must be a finite number, got {value!r}")
        return float(value)


def _read_pair(reader: _CaseReader, path: Path) -> PairCase:
    reader.check_keys(_PAIR_REQUIRED, _PAIR_OPTIONAL)
    equivalent = reader.raw.get("equivalent", True)
    if not isinstance(equivalent, bool):
        raise reader.fail(f"'equivalent' must be true or false, got {equivalent!r}")
    return PairCase(
        id=reader.case_id(),
        given=reader.text("given", numbers=True),
        gold=reader.text("gold", numbers=True),
        equivalent=equivalent,
        policy=reader.optional_text("policy"),
        grader=reader.optional_text("grader"),
        note=reader.optional_text("note"),
        xfail=reader.optional_text("xfail"),
        path=path,
        line=reader.line,
        index=reader.index,
    )


def _read_expect(reader: _CaseReader) -> float | Mapping[str, Any] | None:
    if "expect" not in reader.raw:
        return None
    expect = reader.raw["expect"]
    if isinstance(expect, Mapping):
        if "reward" not in expect:
            raise reader.fail(
                f"'expect' table needs a 'reward' key (it has: {', '.join(expect) or 'nothing'})"
            )
        reader.number(expect["reward"], "'expect.reward'")
        return dict(expect)
    return reader.number(expect, "'expect'")


def _read_reward(reader: _CaseReader, path: Path, allow_missing_expect: bool) -> RewardCase:
    reader.check_keys(
        _REWARD_REQUIRED, _REWARD_OPTIONAL, ("expect",) if allow_missing_expect else ()
    )
    fields = reader.raw.get("fields", {})
    if not isinstance(fields, Mapping):
        raise reader.fail(
            f"'fields' must be a table (fields = {{ answer = '2' }}), got {type(fields).__name__}"
        )
    tolerance = reader.number(reader.raw.get("tolerance", DEFAULT_TOLERANCE), "'tolerance'")
    if tolerance < 0:
        raise reader.fail(f"'tolerance' must not be negative, got {tolerance!r}")
    return RewardCase(
        id=reader.case_id(),
        reward=reader.text("reward"),
        fields=dict(fields),
        expect=_read_expect(reader),
        tolerance=tolerance,
        note=reader.optional_text("note"),
        xfail=reader.optional_text("xfail"),
        path=path,
        line=reader.line,
        index=reader.index,
    )


def _read_case(
    display: str, kind: str, raw: Any, line: int, index: int, path: Path, allow_missing_expect: bool
) -> Case:
    reader = _CaseReader(display, kind, raw, line, index)
    if kind == "pair":
        return _read_pair(reader, path)
    return _read_reward(reader, path, allow_missing_expect)


def _check_unique_ids(display: str, cases: list[Case]) -> None:
    seen: dict[str, Case] = {}
    for case in cases:
        if case.id in seen:
            first = seen[case.id]
            raise GoldenFileError(
                display,
                case.line,
                f"duplicate case id {case.id!r} (first used at line {first.line})",
            )
        seen[case.id] = case


def _parse_toml(path: Path, text: str, display: str, allow_missing_expect: bool) -> list[Case]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"at line (\d+)", str(exc))
        line = int(found.group(1)) if found else max(1, len(text.splitlines()))
        raise GoldenFileError(display, line, f"invalid TOML: {exc}") from None
    for key in data:
        if key not in KINDS:
            raise GoldenFileError(
                display,
                _key_line(text, key),
                f"unknown top-level key {key!r}{did_you_mean(key, KINDS)}; a golden file has "
                f"[[pair]] and [[reward]] tables. {NOT_OURS_HINT}",
            )
    headers = table_header_lines(text)
    cases: list[Case] = []
    for kind in KINDS:
        raw_cases = data.get(kind, [])
        if not isinstance(raw_cases, list):
            raise GoldenFileError(
                display, _key_line(text, kind), f"{kind!r} must be an array of tables ([[{kind}]])"
            )
        lines = headers.get(kind, [])
        if len(lines) != len(raw_cases):
            lines = [_key_line(text, kind)] * len(raw_cases)
        for index, (raw, line) in enumerate(zip(raw_cases, lines)):
            cases.append(_read_case(display, kind, raw, line, index, path, allow_missing_expect))
    cases.sort(key=lambda case: case.line)
    return cases


def _parse_jsonl(path: Path, text: str, display: str, allow_missing_expect: bool) -> list[Case]:
    cases: list[Case] = []
    counts = dict.fromkeys(KINDS, 0)
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            raise GoldenFileError(
                display, number, f"invalid JSON: {exc.msg} (column {exc.colno})"
            ) from None
        if not isinstance(raw, dict):
            raise GoldenFileError(
                display, number, f"expected a JSON object, got {type(raw).__name__}"
            )
        kind = raw.pop("kind", None)
        if kind is None:
            kind = (
                "pair" if "given" in raw or "gold" in raw else "reward" if "reward" in raw else None
            )
        if kind not in KINDS:
            raise GoldenFileError(
                display,
                number,
                f"cannot tell the case's kind (kind={kind!r}): a pair has 'given' and 'gold', "
                'a reward case has \'reward\'; or set "kind": "pair" | "reward". '
                f"{NOT_OURS_HINT}",
            )
        cases.append(
            _read_case(display, kind, raw, number, counts[kind], path, allow_missing_expect)
        )
        counts[kind] += 1
    return cases


def load_golden_file(
    path: str | Path, *, display: str | None = None, allow_missing_expect: bool = False
) -> GoldenFile:
    """Read and validate a golden file (``.toml`` or ``.jsonl``).

    Raises ``GoldenFileError`` (``file:line: what``) for bad syntax, unknown or missing
    keys, wrong types, duplicate ids, or a file without cases. ``display`` is the path
    shown in messages; ``allow_missing_expect`` lets ``--rewardkit-regen`` fill in new cases.
    """
    path = Path(path)
    shown = display or str(path)
    raw_bytes = path.read_bytes()
    try:
        text = raw_bytes.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw_bytes[: exc.start].count(b"\n") + 1
        raise GoldenFileError(shown, line, f"not UTF-8 text ({exc.reason})") from None
    suffix = path.suffix.lower()
    if suffix == ".toml":
        fmt: Literal["toml", "jsonl"] = "toml"
        cases = _parse_toml(path, text, shown, allow_missing_expect)
    elif suffix in (".jsonl", ".ndjson"):
        fmt = "jsonl"
        cases = _parse_jsonl(path, text, shown, allow_missing_expect)
    else:
        raise GoldenFileError(
            shown, 1, f"unsupported golden file type {suffix!r}: use .toml or .jsonl"
        )
    if not cases:
        raise GoldenFileError(
            shown,
            1,
            "no cases: add [[pair]] or [[reward]] tables (an empty golden file tests nothing)",
        )
    _check_unique_ids(shown, cases)
    return GoldenFile(
        path=path,
        format=fmt,
        pairs=tuple(c for c in cases if isinstance(c, PairCase)),
        rewards=tuple(c for c in cases if isinstance(c, RewardCase)),
        cases=tuple(cases),
    )
