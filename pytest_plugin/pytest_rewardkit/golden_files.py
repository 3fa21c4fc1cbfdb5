"""Golden files: read ``[[pair]]`` and ``[[reward]]`` cases from TOML or JSON Lines, with the
line of each case and of each of its keys, and reject malformed files with every problem at
once, each naming the file and the line of the bad key.

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
from collections.abc import Mapping, Sequence
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
    """A golden file is malformed: one ``file:line: what`` line per problem, in line order.

    ``line`` and ``message`` are the first problem's; ``problems`` lists every ``(line, message)``.
    """

    def __init__(
        self, path: str | Path, line: int, message: str, *, more: Sequence[tuple[int, str]] = ()
    ) -> None:
        problems = sorted([(line, message), *more], key=lambda problem: problem[0])
        super().__init__("\n".join(f"{path}:{at}: {what}" for at, what in problems))
        self.path = str(path)
        self.line, self.message = problems[0]
        self.problems = problems

    @classmethod
    def of(cls, path: str | Path, problems: Sequence[tuple[int, str]]) -> GoldenFileError:
        """One error listing ``problems`` (at least one)."""
        (line, message), *more = problems
        return cls(path, line, message, more=more)


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
    key_lines: Mapping[str, int] = field(default_factory=dict, compare=False, repr=False)
    """The line of each of the case's keys (errors point at the bad key)."""

    @property
    def location(self) -> str:
        return f"{self.path}:{self.line}"

    def line_of(self, key: str) -> int:
        """The line of ``key`` in the case, or the case's own line."""
        return self.key_lines.get(key, self.line)


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
_TABLE = re.compile(r"""^\s*\[\s*(?P<name>[A-Za-z0-9_."' -]+?)\s*\]\s*(?:\#.*)?$""")
_KEY = re.compile(r"""^\s*(?:"(?P<dq>[^"]*)"|'(?P<sq>[^']*)'|(?P<bare>[A-Za-z0-9_-]+))\s*=""")

MAX_DEPTH = 100
"""Nesting a golden case may have; deeper is reported instead of exhausting the parser's stack."""


def _lines_outside_strings(text: str) -> list[tuple[int, str]]:
    """``(number, line)`` for the lines (1-based) that do not continue a multi-line string
    (tracked by counting the delimiters on each line)."""
    lines: list[tuple[int, str]] = []
    open_delimiter: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if open_delimiter is not None:
            if line.count(open_delimiter) % 2 == 1:
                open_delimiter = None
            continue
        lines.append((number, line))
        for delimiter in ('"""', "'''"):
            if line.count(delimiter) % 2 == 1:
                open_delimiter = delimiter
                break
    return lines


def table_header_lines(text: str) -> dict[str, list[int]]:
    """Lines (1-based) of each ``[[name]]`` array-of-tables header, outside multi-line strings."""
    headers: dict[str, list[int]] = {}
    for number, line in _lines_outside_strings(text):
        match = _HEADER.match(line)
        if match:
            name = match.group("dq") or match.group("sq") or match.group("bare") or ""
            headers.setdefault(name, []).append(number)
    return headers


def _case_key_lines(text: str, start: int) -> dict[str, int]:
    """The line of each key of the case whose ``[[kind]]`` header is at line ``start``: its
    ``key = ...`` lines, and ``[kind.key]`` sub-table headers (their keys as ``key.sub``), up to
    the next table that is not one of its sub-tables."""
    key_lines: dict[str, int] = {}
    table = ""
    for number, line in _lines_outside_strings(text):
        if number <= start:
            continue
        if _HEADER.match(line):
            break
        sub = _TABLE.match(line)
        if sub:
            parts = [part.strip().strip("\"'") for part in sub.group("name").split(".")]
            if len(parts) < 2 or parts[0] not in KINDS:
                break
            table = parts[1]
            key_lines.setdefault(table, number)
            continue
        key = _KEY.match(line)
        if key:
            name = key.group("dq") or key.group("sq") or key.group("bare") or ""
            key_lines.setdefault(f"{table}.{name}" if table else name, number)
    return key_lines


def _key_line(text: str, key: str) -> int:
    pattern = re.compile(rf"^\s*(\[+\s*)?[\"']?{re.escape(key)}[\"']?\s*(=|\]|\.)")
    for number, line in enumerate(text.splitlines(), start=1):
        if pattern.match(line):
            return number
    return 1


def did_you_mean(word: str, choices: tuple[str, ...] | list[str]) -> str:
    close = difflib.get_close_matches(word, choices, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _depth(value: Any, limit: int = MAX_DEPTH) -> int:
    """How deeply ``value`` nests tables and arrays (counting stops past ``limit``)."""
    deepest, pending = 0, [(value, 0)]
    while pending:
        item, depth = pending.pop()
        deepest = max(deepest, depth)
        if depth > limit:
            break
        if isinstance(item, Mapping):
            pending.extend((child, depth + 1) for child in item.values())
        elif isinstance(item, list):
            pending.extend((child, depth + 1) for child in item)
    return deepest


def _short(value: Any) -> Any:
    """``value`` for an error message: long texts cut (a golden file may hold megabytes)."""
    if isinstance(value, str) and len(value) > 200:
        return f"{value[:200]}... ({len(value):,} characters)"
    if isinstance(value, (Mapping, list)):
        shown = repr(value) if _depth(value, 10) <= 10 else f"a deeply nested {type(value).__name__}"
        return shown if len(shown) <= 200 else f"{shown[:200]}..."
    return value


class _CaseReader:
    """Validates one raw case table, collecting every problem; each names the case and points
    at the line of the bad key (the case's line for a missing one)."""

    def __init__(
        self, kind: str, raw: Any, line: int, index: int, key_lines: Mapping[str, int]
    ) -> None:
        self.kind = kind
        self.raw = raw
        self.line = line
        self.index = index
        self.key_lines = dict(key_lines)
        self.label = f"[[{kind}]] '{kind}{index}'"
        self.problems: list[tuple[int, str]] = []

    def fail(self, message: str, key: str | None = None) -> None:
        line = self.key_lines.get(key, self.line) if key else self.line
        self.problems.append((line, f"{self.label}: {message}"))

    def check_keys(
        self,
        required: tuple[str, ...],
        optional: tuple[str, ...],
        allow_missing: tuple[str, ...] = (),
    ) -> bool:
        """Report unknown and missing keys; False when the case cannot be read further."""
        if not isinstance(self.raw, Mapping):
            self.fail(f"expected a table of keys, got {type(self.raw).__name__}")
            return False
        if isinstance(self.raw.get("id"), (str, int)):
            self.label = f"[[{self.kind}]] {_short(self.raw['id'])!r}"
        if _depth(self.raw) > MAX_DEPTH:
            self.fail(f"values nested more than {MAX_DEPTH} levels deep; a golden case is flat data")
            return False
        allowed = (*required, *optional)
        for key in self.raw:
            if key not in allowed:
                self.fail(
                    f"unknown key {key!r}{did_you_mean(key, allowed)}; allowed keys: {', '.join(allowed)}",
                    key,
                )
        for key in required:
            if key not in self.raw and key not in allow_missing:
                self.fail(f"missing required key {key!r}")
        return True

    def text(self, key: str, *, numbers: bool = False) -> str:
        """The string at ``key`` ("" when absent or of a wrong type, which is reported)."""
        value = self.raw.get(key)
        if isinstance(value, str):
            return value
        if numbers and isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        if key in self.raw:
            hint = f" (quote it: {key} = '{value}')" if isinstance(value, float) else ""
            self.fail(f"{key!r} must be a string, got {type(value).__name__} {_short(value)!r}{hint}", key)
        return ""

    def optional_text(self, key: str) -> str | None:
        return self.text(key) if key in self.raw else None

    def case_id(self) -> str:
        if "id" not in self.raw:
            return f"{self.kind}{self.index}"
        value = self.raw["id"]
        if isinstance(value, bool) or not isinstance(value, (str, int)) or str(value).strip() == "":
            self.fail(f"'id' must be a non-empty string, got {_short(value)!r}", "id")
            return f"{self.kind}{self.index}"
        if "::" in str(value):
            self.fail(
                f"'id' must not contain '::' (pytest separates node ids with it), got {value!r}", "id"
            )
        return str(value)

    def common_keys(self, path: Path) -> dict[str, Any]:
        """The keys every kind of case has, after its own (``_CaseBase``'s but ``id``)."""
        return {
            "note": self.optional_text("note"),
            "xfail": self.optional_text("xfail"),
            "path": path,
            "line": self.line,
            "index": self.index,
            "key_lines": self.key_lines,
        }

    def number(self, value: Any, what: str, key: str) -> float:
        """``value`` as a finite float (0.0 when it is not one, which is reported at ``key``)."""
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
        ):
            self.fail(f"{what} must be a finite number, got {_short(value)!r}", key)
            return 0.0
        return float(value)


def _read_pair(reader: _CaseReader, path: Path) -> PairCase | None:
    if not reader.check_keys(_PAIR_REQUIRED, _PAIR_OPTIONAL):
        return None
    equivalent = reader.raw.get("equivalent", True)
    if not isinstance(equivalent, bool):
        reader.fail(f"'equivalent' must be true or false, got {_short(equivalent)!r}", "equivalent")
    case = PairCase(
        id=reader.case_id(),
        given=reader.text("given", numbers=True),
        gold=reader.text("gold", numbers=True),
        equivalent=equivalent is not False,
        policy=reader.optional_text("policy"),
        grader=reader.optional_text("grader"),
        **reader.common_keys(path),
    )
    return None if reader.problems else case


def _read_expect(reader: _CaseReader) -> float | Mapping[str, Any] | None:
    if "expect" not in reader.raw:
        return None
    expect = reader.raw["expect"]
    if isinstance(expect, Mapping):
        if "reward" not in expect:
            reader.fail(
                f"'expect' table needs a 'reward' key (it has: {', '.join(expect) or 'nothing'})",
                "expect",
            )
            return None
        key = "expect.reward" if "expect.reward" in reader.key_lines else "expect"
        reader.number(expect["reward"], "'expect.reward'", key)
        return dict(expect)
    return reader.number(expect, "'expect'", "expect")


def _read_reward(reader: _CaseReader, path: Path, allow_missing_expect: bool) -> RewardCase | None:
    if not reader.check_keys(
        _REWARD_REQUIRED, _REWARD_OPTIONAL, ("expect",) if allow_missing_expect else ()
    ):
        return None
    fields = reader.raw.get("fields", {})
    if not isinstance(fields, Mapping):
        reader.fail(
            f"'fields' must be a table (fields = {{ answer = '2' }}), got {type(fields).__name__}",
            "fields",
        )
        fields = {}
    tolerance = reader.number(
        reader.raw.get("tolerance", DEFAULT_TOLERANCE), "'tolerance'", "tolerance"
    )
    if tolerance < 0:
        reader.fail(f"'tolerance' must not be negative, got {tolerance!r}", "tolerance")
    case = RewardCase(
        id=reader.case_id(),
        reward=reader.text("reward"),
        fields=dict(fields),
        expect=_read_expect(reader),
        tolerance=tolerance,
        **reader.common_keys(path),
    )
    return None if reader.problems else case


def _read_case(
    reader: _CaseReader, path: Path, allow_missing_expect: bool, problems: list[tuple[int, str]]
) -> Case | None:
    """The case ``reader`` holds, or None with its problems added to ``problems``."""
    if reader.kind == "pair":
        case: Case | None = _read_pair(reader, path)
    else:
        case = _read_reward(reader, path, allow_missing_expect)
    problems.extend(reader.problems)
    return case


def _duplicate_ids(cases: list[Case]) -> list[tuple[int, str]]:
    seen: dict[str, Case] = {}
    problems = []
    for case in cases:
        if case.id in seen:
            first = seen[case.id]
            problems.append(
                (case.line_of("id"), f"duplicate case id {case.id!r} (first used at line {first.line})")
            )
        else:
            seen[case.id] = case
    return problems


def _unreadable(text: str, exc: BaseException) -> tuple[int, str]:
    """Where and why a parser failed other than on a syntax error: a nesting deeper than its
    stack (``RecursionError``), or an integer past Python's digit limit (``ValueError``)."""
    if isinstance(exc, RecursionError):
        depth = 0
        opening, closing = "[{", "]}"
        for number, line in enumerate(text.splitlines(), start=1):
            for char in line:
                depth += (char in opening) - (char in closing)
                if depth > MAX_DEPTH:
                    return number, f"nested more than {MAX_DEPTH} levels deep (the parser ran out of stack)"
        return 1, "nested too deeply for the parser (it ran out of stack)"
    digits = re.compile(r"[0-9_]{4300,}")
    for number, line in enumerate(text.splitlines(), start=1):
        if digits.search(line):
            return number, "an integer with more digits than Python converts (at most 4,300)"
    return 1, f"cannot be read ({type(exc).__name__}: {exc})"


def parse_toml(text: str) -> tuple[dict[str, Any] | None, tuple[int, str] | None]:
    """The TOML document, or where and why it cannot be read (a syntax error at its line, a
    nesting too deep for the parser, an integer past Python's digit limit)."""
    try:
        return tomllib.loads(text), None
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"at line (\d+)", str(exc))
        line = int(found.group(1)) if found else max(1, len(text.splitlines()))
        return None, (line, f"invalid TOML: {exc}")
    except (RecursionError, ValueError, MemoryError) as exc:
        line, why = _unreadable(text, exc)
        return None, (line, f"invalid TOML: {why}")


def _parse_toml(
    path: Path, text: str, allow_missing_expect: bool, problems: list[tuple[int, str]]
) -> list[Case]:
    data, error = parse_toml(text)
    if data is None:
        problems.append(error)  # type: ignore[arg-type]
        return []
    for key in data:
        if key not in KINDS:
            problems.append(
                (
                    _key_line(text, key),
                    f"unknown top-level key {key!r}{did_you_mean(key, KINDS)}; a golden file has "
                    f"[[pair]] and [[reward]] tables. {NOT_OURS_HINT}",
                )
            )
    headers = table_header_lines(text)
    cases: list[Case] = []
    for kind in KINDS:
        raw_cases = data.get(kind, [])
        if not isinstance(raw_cases, list):
            problems.append((_key_line(text, kind), f"{kind!r} must be an array of tables ([[{kind}]])"))
            continue
        lines = headers.get(kind, [])
        inline = len(lines) != len(raw_cases)  # written as `kind = [{...}]`: the key's line for all
        if inline:
            lines = [_key_line(text, kind)] * len(raw_cases)
        for index, (raw, line) in enumerate(zip(raw_cases, lines)):
            reader = _CaseReader(kind, raw, line, index, {} if inline else _case_key_lines(text, line))
            case = _read_case(reader, path, allow_missing_expect, problems)
            if case is not None:
                cases.append(case)
    cases.sort(key=lambda case: case.line)
    return cases


def _parse_json_line(line: str) -> tuple[Any, str | None]:
    """A JSON Lines line's value, or why it cannot be read."""
    try:
        return json.loads(line), None
    except json.JSONDecodeError as exc:
        return None, f"invalid JSON: {exc.msg} (column {exc.colno})"
    except RecursionError:
        return None, "invalid JSON: nested too deeply for the parser (it ran out of stack)"
    except ValueError:  # an integer past Python's digit limit
        return None, "invalid JSON: an integer with more digits than Python converts (at most 4,300)"


def _parse_jsonl(
    path: Path, text: str, allow_missing_expect: bool, problems: list[tuple[int, str]]
) -> list[Case]:
    cases: list[Case] = []
    counts = dict.fromkeys(KINDS, 0)
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        raw, error = _parse_json_line(line)
        if error is not None or not isinstance(raw, dict):
            problems.append((number, error or f"expected a JSON object, got {type(raw).__name__}"))
            continue
        kind = raw.pop("kind", None)
        if kind is None:
            kind = "pair" if "given" in raw or "gold" in raw else "reward" if "reward" in raw else None
        if kind not in KINDS:
            problems.append(
                (
                    number,
                    f"cannot tell the case's kind (kind={_short(kind)!r}): a pair has 'given' and "
                    "'gold', a reward case has 'reward'; or set \"kind\": \"pair\" | \"reward\". "
                    f"{NOT_OURS_HINT}",
                )
            )
            continue
        reader = _CaseReader(kind, raw, number, counts[kind], {})
        case = _read_case(reader, path, allow_missing_expect, problems)
        if case is not None:
            cases.append(case)
        counts[kind] += 1
    return cases


def read_golden_file(
    path: str | Path, *, display: str | None = None, allow_missing_expect: bool = False
) -> tuple[GoldenFile, list[tuple[int, str]]]:
    """The well-formed cases of a golden file and every ``(line, message)`` problem of the others
    (the file's own problems included). Raises ``GoldenFileError`` only for a file that cannot
    be read as text of a known type."""
    path = Path(path)
    shown = display or str(path)
    raw_bytes = path.read_bytes()
    try:
        text = raw_bytes.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw_bytes[: exc.start].count(b"\n") + 1
        raise GoldenFileError(shown, line, f"not UTF-8 text ({exc.reason})") from None
    suffix = path.suffix.lower()
    problems: list[tuple[int, str]] = []
    if suffix == ".toml":
        fmt: Literal["toml", "jsonl"] = "toml"
        cases = _parse_toml(path, text, allow_missing_expect, problems)
    elif suffix in (".jsonl", ".ndjson"):
        fmt = "jsonl"
        cases = _parse_jsonl(path, text, allow_missing_expect, problems)
    else:
        raise GoldenFileError(
            shown, 1, f"unsupported golden file type {suffix!r}: use .toml or .jsonl"
        )
    problems += _duplicate_ids(cases)
    if not cases and not problems:
        problems.append(
            (1, "no cases: add [[pair]] or [[reward]] tables (an empty golden file tests nothing)")
        )
    golden = GoldenFile(
        path=path,
        format=fmt,
        pairs=tuple(c for c in cases if isinstance(c, PairCase)),
        rewards=tuple(c for c in cases if isinstance(c, RewardCase)),
        cases=tuple(cases),
    )
    return golden, problems


def load_golden_file(
    path: str | Path, *, display: str | None = None, allow_missing_expect: bool = False
) -> GoldenFile:
    """Read and validate a golden file (``.toml`` or ``.jsonl``).

    Raises ``GoldenFileError`` listing every problem (``file:line: what``, at the bad key's
    line): bad syntax, unknown or missing keys, wrong types, duplicate ids, a file without
    cases. ``display`` is the path shown in messages; ``allow_missing_expect`` lets
    ``--rewardkit-regen`` fill in new cases.
    """
    golden, problems = read_golden_file(path, display=display, allow_missing_expect=allow_missing_expect)
    if problems:
        raise GoldenFileError.of(display or str(path), problems)
    return golden


SNIFF_BYTES = 1 << 20
"""How much of a JSON Lines file is read to tell whether it is a golden file."""


def _looks_like_case(raw: Any) -> bool:
    """Whether a JSON value reads as a golden case (of either kind, well formed or not)."""
    if not isinstance(raw, dict):
        return False
    return (
        raw.get("kind") in KINDS
        or "given" in raw
        or "gold" in raw
        or isinstance(raw.get("reward"), str)
        or "expect" in raw
    )


def is_golden_file(path: Path) -> bool:
    """False for a file that matches the golden-file patterns but is clearly something else, so
    that the plugin leaves it alone (an unrelated ``tests/data/golden_outputs.jsonl``).

    TOML: a document whose top-level keys are neither ``pair``/``reward`` nor close to them (a
    misspelt ``[[pairs]]`` is still ours, and reported). JSON Lines: a file whose lines (its
    first megabyte) hold JSON objects but no case (``given``/``gold``, a reward name, a
    ``kind``). Anything that cannot be read either way stays ours, and is reported.
    """
    toml = path.suffix.lower() == ".toml"
    try:
        with path.open("rb") as stream:
            head = stream.read() if toml else stream.read(SNIFF_BYTES)
    except OSError:
        return True
    text = head.decode("utf-8", errors="replace")
    if toml:
        data, _ = parse_toml(text)
        return not data or any(key in KINDS or did_you_mean(key, KINDS) for key in data)
    lines = text.splitlines()
    if len(head) == SNIFF_BYTES and lines:
        lines.pop()  # cut mid-line
    objects = 0
    for line in lines:
        raw, error = _parse_json_line(line) if line.strip() else (None, "blank")
        if error is None and isinstance(raw, dict):
            if _looks_like_case(raw):
                return True
            objects += 1
    return objects == 0
