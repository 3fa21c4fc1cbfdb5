"""The engine: source text in, diagnostics and reward definitions out; incremental per top-level chunk.

A module is split at its top-level statements (:mod:`rewardkit.checks.splitter`). Each chunk is
parsed once per distinct text; each chunk holding a reward is analysed once per (text, the
module's imports, config). Re-analysing an edited module therefore re-parses only the edited
definitions; the rest comes from the cache, shifted to its current line. A one-shot check
(:func:`check_source`, ``rewardkit check``) parses a module that is valid Python in one piece and
gives the same results.
"""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from rewardkit.checks.config import CheckConfig
from rewardkit.checks.discovery import find_rewards
from rewardkit.checks.fixes import suppressed_codes
from rewardkit.checks.frameworks import MENTIONS_SIGNALS, AdapterCall, HelperInfo, mark_called
from rewardkit.checks.model import Diagnostic, ModuleAnalysis, RewardDefinition, Span
from rewardkit.checks.positions import LINE_BREAK, NodePositions
from rewardkit.checks.rules import RULES, DuplicateRewardName, NestingTooDeep, Rule, SyntaxErrorRule
from rewardkit.checks.scopes import (
    MAY_DEFINE_REWARDS,
    Definition,
    ImportContext,
    build_context,
    collect_imports,
    scope_definitions,
)
from rewardkit.checks.splitter import Chunk, IncrementalSplitter
from rewardkit.checks.uses import (
    helper_infos,
    none_helpers,
    scan_adapter_calls,
    scan_process_calls,
    script_evidence,
)

_RELATIVE_IMPORT = re.compile(r"from(?:\s|\\)*\.")


@dataclass(frozen=True)
class _ParsedChunk:
    """A chunk parsed once: its statements (when they may hold rewards), imports, top-level
    definitions, or its syntax error."""

    body: list[ast.stmt] | None
    imports: tuple[tuple[str, str], ...]
    definitions: tuple[Definition, ...] = ()
    error: Diagnostic | None = None
    """RK900 at chunk-relative coordinates (line 1 = the chunk's first line)."""
    positions: NodePositions | None = None
    adapter_calls: tuple[AdapterCall, ...] = ()
    """Calls that may pass a function to an adapter (``to_trl(f)``), resolved with the module's imports."""
    none_helpers: tuple[tuple[str, str], ...] = ()
    """Its functions that can return ``None`` (:func:`~rewardkit.checks.uses.none_helpers`)."""
    script: str | None = None
    """Why it makes the module a script, if it does (:func:`~rewardkit.checks.uses.script_evidence`)."""
    process_calls: tuple[tuple[str, str], ...] = ()
    """Its ``calculate_rewards(f, ..., execution="process")`` (:func:`~rewardkit.checks.uses.scan_process_calls`)."""


@dataclass
class _AnalysedChunk:
    """The diagnostics and reward definitions of one chunk, in chunk-relative coordinates."""

    diagnostics: tuple[Diagnostic, ...]
    rewards: tuple[RewardDefinition, ...]
    _placed: tuple[int, tuple[Diagnostic, ...], tuple[RewardDefinition, ...]] | None = None

    def placed(self, offset: int) -> tuple[tuple[Diagnostic, ...], tuple[RewardDefinition, ...]]:
        """Diagnostics and rewards moved ``offset`` lines down (memoised: chunks rarely move)."""
        if self._placed is None or self._placed[0] != offset:
            self._placed = (
                offset,
                tuple(d.shifted(offset) for d in self.diagnostics),
                tuple(r.shifted(offset) for r in self.rewards),
            )
        return self._placed[1], self._placed[2]


def may_define_rewards(source: str, config: CheckConfig) -> bool:
    """Cheap text test: can this module define a reward at all? (Others are not parsed.)

    A superset of what discovery recognises: an import from ``rewardkit``/``agentfly``, a
    relative import of a module naming rewards (AgentFly's own ``from .reward_base import
    reward``: ``reward``/``BaseReward`` then appear in the text), a configured decorator, or a
    configured framework function's name."""
    if MAY_DEFINE_REWARDS.search(source):
        return True
    if "eward" in source and _RELATIVE_IMPORT.search(source):
        return True
    if any(decorator.rsplit(".", 1)[-1] in source for decorator in config.reward_decorators):
        return True
    return any(entry.rpartition(":")[2] in source for _, entry in config.framework_rewards)


def may_hold_rewards(text: str) -> bool:
    """Cheap text test for one chunk: a reward needs a decorator or a class."""
    return "@" in text or "class" in text


def _syntax_error(
    message: str, line: int, column: int, end_line: int | None = None, end_column: int | None = None
) -> Diagnostic:
    line = max(1, line)
    column = max(0, column)
    if end_line is None or end_column is None or (end_line, end_column) <= (line, column):
        end_line, end_column = line, column + 1
    return SyntaxErrorRule.diagnostic(
        Span(line, column, end_line, end_column),
        f"syntax error: {message}",
        data={"error": message},
    )


_LINE_NUMBER = re.compile(r"\bline (\d+)")


def _placed_syntax_error(error: Diagnostic, offset: int) -> Diagnostic:
    """A chunk's RK900 moved ``offset`` lines down, line numbers in its message included
    (CPython says "detected at line 4", "on line 3")."""
    if not offset:
        return error
    message = str((error.data or {}).get("error", ""))
    shifted = _LINE_NUMBER.sub(lambda match: f"line {int(match[1]) + offset}", message)
    placed = error.shifted(offset)
    if shifted == message:
        return placed
    return replace(placed, message=f"syntax error: {shifted}", data={"error": shifted})


def parse(text: str) -> ast.Module | Diagnostic:
    """CPython's tree of ``text``, or the RK900 saying why there is none (never raises, never
    warns: the checked code's SyntaxWarnings, e.g. ``1if x``, are not ours to print)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(text)
    except SyntaxError as error:
        line = error.lineno or 1
        column = (error.offset or 1) - 1
        end_line = error.end_lineno
        end_column = (error.end_offset - 1) if error.end_offset else None
        return _syntax_error(error.msg, line, column, end_line, end_column)
    except (RecursionError, MemoryError):
        return _syntax_error("expressions nested too deeply to parse", 1, 0)
    except ValueError as error:  # e.g. null bytes (Python < 3.12)
        return _syntax_error(str(error), 1, 0)


def _parse_chunk(text: str, *, keep: bool = False) -> _ParsedChunk:
    """A chunk parsed; its statements are kept when they may hold a reward (or ``keep``: a plain
    function the module passes to an adapter, or a configured framework function)."""
    tree = parse(text)
    if isinstance(tree, Diagnostic):
        return _ParsedChunk(None, (), (), tree)
    body = tree.body
    imports = collect_imports(body)
    definitions = scope_definitions(body)
    adapter_calls = scan_adapter_calls(text, body)
    facts = (adapter_calls, none_helpers(text, body), script_evidence(text, body))
    process = scan_process_calls(text, body)
    if not keep and not may_hold_rewards(text):
        return _ParsedChunk(None, imports, definitions, None, None, *facts, process)
    return _ParsedChunk(body, imports, definitions, None, NodePositions(text), *facts, process)


def _functions_by_use(context: ImportContext) -> frozenset[str]:
    """Names of the functions the module makes rewards by use (adapters) or the configuration
    names framework functions: their chunks are analysed though they hold no decorator."""
    return frozenset(
        [name for name, _ in context.adapter_uses]
        + [name for name, _ in context.framework_functions]
    )


class ModuleAnalyzer:
    """Analyses modules, caching per top-level chunk so edits re-parse only what changed.

    One analyzer can serve many documents (keyed by ``path``); its cache holds what the latest
    analysis of each path used, so memory stays flat however many edits come in. Not thread-safe.
    """

    def __init__(self, rules: Sequence[type[Rule]] = RULES) -> None:
        self._rules = tuple(rule() for rule in rules)
        self._parsed: dict[str, _ParsedChunk] = {}
        self._helpers: dict[str, tuple[HelperInfo, ...]] = {}
        """Chunk text -> its functions' calls that may need the main thread (modules naming
        math_verify, signal... only)."""
        self._analysed: dict[tuple[object, ...], _AnalysedChunk] = {}
        self._live: dict[str | None, tuple[frozenset[str], frozenset[tuple[object, ...]]]] = {}
        self._splitters: dict[str | None, IncrementalSplitter] = {}
        self._context: ImportContext | None = None
        self.last_reparsed = 0
        """How many chunks the latest :meth:`analyze` had to parse (for tests and benchmarks)."""

    def analyze(
        self, source: str, path: str | None = None, config: CheckConfig | None = None
    ) -> ModuleAnalysis:
        """Diagnostics (sorted, suppressions and select/ignore applied) and rewards of one module."""
        config = config if config is not None else CheckConfig()
        self.last_reparsed = 0
        if source.startswith("\ufeff"):
            source = source[1:]
        if not may_define_rewards(source, config):
            self._remember(path, frozenset(), frozenset())
            return ModuleAnalysis(skipped=True)
        splitter = self._splitters.get(path)
        if splitter is None:
            splitter = self._splitters[path] = IncrementalSplitter()
        chunks = splitter.split(source)
        parsed = [self._parse(chunk.text) for chunk in chunks]
        used_texts = frozenset(chunk.text for chunk in chunks)
        syntax_error = next(
            (
                _placed_syntax_error(parsed_chunk.error, chunk.start_line - 1)
                for chunk, parsed_chunk in zip(chunks, parsed)
                if parsed_chunk.error is not None
            ),
            None,
        )
        # Chunks that parsed are analysed even when another one did not: their rewards keep
        # hover and completion working while the user types, and their (cached) results are
        # ready the moment the error is fixed. Their diagnostics wait until then.
        context = build_context(
            [binding for parsed_chunk in parsed for binding in parsed_chunk.imports],
            config.reward_decorators,
            [definition for parsed_chunk in parsed for definition in parsed_chunk.definitions],
            mark_called(
                [call for parsed_chunk in parsed for call in parsed_chunk.adapter_calls], source
            ),
            config.framework_functions(path),
            self._helper_infos(chunks, parsed) if MENTIONS_SIGNALS.search(source) else (),
            [helper for parsed_chunk in parsed for helper in parsed_chunk.none_helpers],
            next((p.script for p in parsed if p.script is not None), None),
            [call for parsed_chunk in parsed for call in parsed_chunk.process_calls],
        )
        if context == self._context:  # the same object again: cache keys compare by identity
            context = self._context
        self._context = context
        by_use = _functions_by_use(context)
        fingerprint = config.fingerprint
        diagnostics: list[Diagnostic] = []
        rewards: list[RewardDefinition] = []
        used_keys = set()
        for chunk, parsed_chunk in zip(chunks, parsed):
            if (
                parsed_chunk.body is None
                and parsed_chunk.error is None
                and any(name in by_use for name, _, _ in parsed_chunk.definitions)
            ):
                parsed_chunk = self._parsed[chunk.text] = _parse_chunk(chunk.text, keep=True)
            if parsed_chunk.body is None or parsed_chunk.positions is None:
                continue
            key = (chunk.text, context, fingerprint)
            used_keys.add(key)
            analysed = self._analysed.get(key)
            if analysed is None:
                analysed = analyse_statements(
                    self._rules, parsed_chunk.body, parsed_chunk.positions, context, config
                )
                self._analysed[key] = analysed
            placed_diagnostics, placed_rewards = analysed.placed(chunk.start_line - 1)
            diagnostics.extend(placed_diagnostics)
            rewards.extend(placed_rewards)
        self._remember(path, used_texts, frozenset(used_keys))
        return _module_analysis(diagnostics, rewards, syntax_error, source, config)

    def forget(self, path: str | None) -> None:
        """Drop what the cache holds for ``path`` only (a closed document)."""
        self._remember(path, frozenset(), frozenset())
        self._live.pop(path, None)
        self._splitters.pop(path, None)

    def _helper_infos(
        self, chunks: Sequence[Chunk], parsed: Sequence[_ParsedChunk]
    ) -> list[HelperInfo]:
        """The module's functions' calls that may need the main thread, per chunk (cached)."""
        found: list[HelperInfo] = []
        for chunk, parsed_chunk in zip(chunks, parsed):
            if parsed_chunk.error is not None or not parsed_chunk.definitions:
                continue
            infos = self._helpers.get(chunk.text)
            if infos is None:
                body = parsed_chunk.body
                if body is None:
                    tree = parse(chunk.text)
                    body = tree.body if isinstance(tree, ast.Module) else []
                infos = self._helpers[chunk.text] = helper_infos(body)
            found.extend(infos)
        return found

    def _parse(self, text: str) -> _ParsedChunk:
        parsed = self._parsed.get(text)
        if parsed is None:
            parsed = _parse_chunk(text)
            self._parsed[text] = parsed
            self.last_reparsed += 1
        return parsed

    def _remember(
        self, path: str | None, texts: frozenset[str], keys: frozenset[tuple[object, ...]]
    ) -> None:
        previous = self._live.get(path)
        self._live[path] = (texts, keys)
        if previous is None:
            return
        old_texts, old_keys = previous
        stale_texts = old_texts - texts
        stale_keys = old_keys - keys
        if not stale_texts and not stale_keys:
            return
        for other_path, (other_texts, other_keys) in self._live.items():
            if other_path != path:
                stale_texts -= other_texts
                stale_keys -= other_keys
        for text in stale_texts:
            self._parsed.pop(text, None)
            self._helpers.pop(text, None)
        for key in stale_keys:
            self._analysed.pop(key, None)


def analyse_statements(
    rules: Sequence[Rule],
    body: Sequence[ast.stmt],
    positions: NodePositions,
    context: ImportContext,
    config: CheckConfig,
) -> _AnalysedChunk:
    """Find the rewards among ``body`` and run every rule on them (positions relative to
    ``positions.text``); a definition too deeply nested to walk gives one RK901 instead."""
    try:
        findings = find_rewards(body, context, positions)
        diagnostics: list[Diagnostic] = []
        for rule in rules:
            for reward in findings.rewards:
                if reward.framework is None:
                    diagnostics.extend(rule.check_reward(reward, config))
                else:
                    diagnostics.extend(rule.check_framework(reward, config))
            for class_facts in findings.classes:
                diagnostics.extend(rule.check_class(class_facts, config))
            for group in findings.group_rewards:
                diagnostics.extend(rule.check_group(group, config))
    except RecursionError:
        note = NestingTooDeep.diagnostic(
            Span(1, 0, 1, 1),
            "this definition is nested too deeply to analyse; its checks are skipped",
        )
        return _AnalysedChunk((note,), ())
    definitions = tuple(r.definition for r in findings.rewards if r.framework is None)
    return _AnalysedChunk(tuple(diagnostics), definitions)


def _module_analysis(
    diagnostics: list[Diagnostic],
    rewards: list[RewardDefinition],
    syntax_error: Diagnostic | None,
    source: str,
    config: CheckConfig,
) -> ModuleAnalysis:
    """The module's analysis from its definitions' results: only RK900 while it does not parse,
    else every diagnostic plus RK401 between its own rewards, filtered and sorted."""
    if syntax_error is not None:
        kept = filter_diagnostics([syntax_error], source, config)
        return ModuleAnalysis(tuple(kept), tuple(rewards), syntax_error=syntax_error)
    registered = [
        (None, definition)
        for definition in rewards
        if definition.registered and definition.module_level
    ]
    diagnostics.extend(d for _, d in DuplicateRewardName.duplicates(registered))
    kept = filter_diagnostics(diagnostics, source, config)
    return ModuleAnalysis(diagnostics=tuple(kept), rewards=tuple(rewards))


_DEFAULT_RULES = tuple(rule() for rule in RULES)


def analyze_module(
    source: str, path: str | None = None, config: CheckConfig | None = None
) -> ModuleAnalysis:
    """One module, once (``rewardkit check``): the same results as :class:`ModuleAnalyzer`,
    faster for a single pass: a module that parses is parsed and analysed in one piece, without
    splitting it or caching its parts."""
    config = config if config is not None else CheckConfig()
    if source.startswith("\ufeff"):
        source = source[1:]
    if not may_define_rewards(source, config):
        return ModuleAnalysis(skipped=True)
    tree = parse(source)
    if not isinstance(tree, Diagnostic):
        context = build_context(
            collect_imports(tree.body),
            config.reward_decorators,
            scope_definitions(tree.body),
            mark_called(scan_adapter_calls(source, tree.body), source),
            config.framework_functions(path),
            helper_infos(tree.body) if MENTIONS_SIGNALS.search(source) else (),
            none_helpers(source, tree.body),
            script_evidence(source, tree.body),
            scan_process_calls(source, tree.body),
        )
        analysed = analyse_statements(
            _DEFAULT_RULES, tree.body, NodePositions(source), context, config
        )
        if not (analysed.diagnostics and analysed.diagnostics[0].code == NestingTooDeep.code):
            return _module_analysis(
                list(analysed.diagnostics), list(analysed.rewards), None, source, config
            )
    # A syntax error (reported per definition) or a definition too deep to walk: the chunked
    # analysis places both exactly as the language server does.
    return ModuleAnalyzer().analyze(source, path, config)


def suppressions(source: str) -> dict[int, frozenset[str]]:
    """Line -> codes suppressed there by ``# rewardkit: ignore[...]`` (empty set: all codes)."""
    found: dict[int, frozenset[str]] = {}
    if "rewardkit:" not in source and "rewardkit :" not in source:
        return found
    for index, line_text in enumerate(LINE_BREAK.split(source), start=1):
        if "#" in line_text:
            codes = suppressed_codes(line_text)
            if codes is not None:
                found[index] = codes
    return found


def is_suppressed(diagnostic: Diagnostic, line_suppressions: Mapping[int, frozenset[str]]) -> bool:
    """Whether a suppression comment on the diagnostic's first line covers its code."""
    codes = line_suppressions.get(diagnostic.line)
    return codes is not None and (not codes or diagnostic.code in codes)


def filter_diagnostics(
    diagnostics: Iterable[Diagnostic], source: str, config: CheckConfig
) -> list[Diagnostic]:
    """Apply ``select``/``ignore`` and inline suppressions, and sort deterministically."""
    line_suppressions = suppressions(source)
    kept = [
        d
        for d in diagnostics
        if config.is_selected(d.code) and not is_suppressed(d, line_suppressions)
    ]
    kept.sort(key=Diagnostic.sort_key)
    return kept


def check_source(
    source: str, path: str | None = None, config: CheckConfig | None = None
) -> list[Diagnostic]:
    """Every diagnostic of one module (stateless): the same results as :class:`ModuleAnalyzer`."""
    return list(analyze_module(source, path, config).diagnostics)


def duplicate_reward_diagnostics(
    analyses: Sequence[tuple[str, ModuleAnalysis]],
) -> dict[str, list[Diagnostic]]:
    """RK401 across files: path -> diagnostics for rewards whose name another checked file also uses.

    Duplicates inside one file are already in that file's :class:`ModuleAnalysis`; this adds
    those spanning files (listing every other location). Files with a syntax error take no part:
    their other checks wait until they parse.
    """
    definitions = [
        (path, definition)
        for path, analysis in analyses
        if analysis.syntax_error is None
        for definition in analysis.rewards
        if definition.registered and definition.module_level
    ]
    paths_by_name: dict[str, set[str]] = {}
    for path, definition in definitions:
        if definition.name:
            paths_by_name.setdefault(definition.name.casefold(), set()).add(path)
    spanning = [
        (path, definition)
        for path, definition in definitions
        if definition.name and len(paths_by_name[definition.name.casefold()]) > 1
    ]
    found: dict[str, list[Diagnostic]] = {}
    for index, diagnostic in DuplicateRewardName.duplicates(spanning):
        found.setdefault(spanning[index][0], []).append(diagnostic)
    return found
