"""RK506: reward code that runs the model's text outside a sandbox (``exec``/``eval`` of a
response, ``python -c`` with it, a file written with it and then run, a shell command holding it).

Which parameters carry model text comes from their names, as the fixes read them
(:func:`rewardkit.checks.fix_safety.field_role`: ``final_response``, ``trajectory``,
``completion(s)``, verl's ``solution_str``...). What they flow into is followed through the
function's own assignments, loops and comprehensions. The rule reads the calls discovery
collected; only a function holding one of the calls that can run code (rare) is walked again,
for its assignments, so the usual reward costs nothing more. There is no automatic fix: the
reward has to be rewritten on :mod:`rewardkit.code`.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rewardkit.checks.fix_safety import Role, field_role
from rewardkit.checks.model import Diagnostic, Severity
from rewardkit.checks.rules.base import Invalid, Rule, reward_data
from rewardkit.checks.scopes import target_names
from rewardkit.runtime.define.return_keys import dotted_name, string_value

if TYPE_CHECKING:
    from rewardkit.checks.config import CheckConfig
    from rewardkit.checks.discovery import GroupRewardFacts
    from rewardkit.checks.facts import RewardFacts
    from rewardkit.checks.positions import NodePositions
    from rewardkit.checks.scopes import FunctionNode, ImportContext

EVALUATORS = frozenset({"exec", "eval", "builtins.exec", "builtins.eval"})
"""Calls that run Python source (or a code object ``compile`` made of it) in this process."""

SHELLS = frozenset(
    {
        "os.system",
        "os.popen",
        "subprocess.getoutput",
        "subprocess.getstatusoutput",
        "asyncio.create_subprocess_shell",
    }
)
"""Calls whose command is a shell command line: text in it is run by the shell."""

PROCESSES = frozenset(
    {
        "subprocess.run",
        "subprocess.call",
        "subprocess.check_call",
        "subprocess.check_output",
        "subprocess.Popen",
        "asyncio.create_subprocess_exec",
        "pty.spawn",
    }
    | {f"os.exec{suffix}" for suffix in ("l", "le", "lp", "lpe", "v", "ve", "vp", "vpe")}
    | {f"os.spawn{suffix}" for suffix in ("l", "le", "lp", "lpe", "v", "ve", "vp", "vpe")}
    | {"os.posix_spawn", "os.posix_spawnp"}
)
"""Calls that start a program (a shell too with ``shell=True``)."""

FILE_RUNNERS = frozenset(
    {"runpy.run_path", "runpy.run_module", "importlib.util.spec_from_file_location"}
)
"""Calls that run (or load to run) Python from a file or module in this process."""

WRITERS = frozenset({"write", "write_text", "write_bytes", "writelines"})
"""Methods that put text into a file."""

_INTERPRETER = re.compile(
    r"(?:^|[\s/])(?:python[\d.]*|pypy[\d.]*|bash|sh|zsh|dash|node|ruby|perl|php|deno|bun)(?:\s|$)"
)
"""A command that runs an interpreter (``python3 -c``, ``/usr/bin/python``, ``bash``)."""

_NOT_TEXT_CALLS = frozenset({"len", "bool", "int", "float", "isinstance", "hash", "id", "type"})
_NOT_TEXT_METHODS = frozenset(
    {
        "count",
        "startswith",
        "endswith",
        "find",
        "rfind",
        "index",
        "rindex",
        "isalpha",
        "isdigit",
        "isnumeric",
        "isdecimal",
        "isalnum",
        "isspace",
        "isidentifier",
    }
)
"""Calls on model text whose result is a number or a truth value, not text to run."""

CODE_GRADER = (
    "grade it with `rewardkit.code` instead (`grade_code(response, tests)`, or the `code_reward` "
    "reward), which runs the program in a sandbox (bubblewrap or WASI CPython) and compares the "
    "output outside it"
)


def model_text_parameters(names: Iterable[str]) -> frozenset[str]:
    """The parameters whose names say they receive the model's output."""
    return frozenset(name for name in names if field_role(name) is Role.OUTPUT)


@dataclass(frozen=True)
class _Call:
    node: ast.Call
    qualified: str | None
    """The callee resolved through the imports in scope (``None``: not a plain dotted name)."""


class _Flow:
    """The local names holding model text, from the function's assignments, loops and
    comprehensions (to a fixed point: ``code = blocks[-1]`` after ``blocks = f(response)``)."""

    def __init__(self, function: FunctionNode, sources: frozenset[str]) -> None:
        flows: list[tuple[ast.expr, ast.expr]] = []  # (target, value)
        for node in ast.walk(function):
            if isinstance(node, ast.Assign):
                flows.extend((target, node.value) for target in node.targets)
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr)):
                if node.value is not None:
                    flows.append((node.target, node.value))
            elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
                flows.append((node.target, node.iter))
            elif isinstance(node, (ast.With, ast.AsyncWith)):
                flows.extend(
                    (item.optional_vars, item.context_expr)
                    for item in node.items
                    if item.optional_vars is not None
                )
        self.values: dict[str, list[ast.expr]] = {}
        """What each local name is bound to (a loop variable: its iterable)."""
        for target, value in flows:
            for name in target_names(target):
                self.values.setdefault(name, []).append(value)
        self.names = set(sources)
        changed = True
        while changed:
            changed = False
            for target, value in flows:
                if self.carries(value):
                    for name in target_names(target):
                        if name not in self.names:
                            self.names.add(name)
                            changed = True

    def carries(self, node: ast.AST | None) -> str | None:
        """The first model-text name ``node``'s value is made of (``None``: none)."""
        if node is None:
            return None
        stack = [node]
        while stack:
            current = stack.pop()
            if isinstance(current, ast.Name):
                if current.id in self.names:
                    return current.id
                continue
            if isinstance(current, ast.Compare):
                continue  # a truth value
            if isinstance(current, ast.Call):
                callee = dotted_name(current.func)
                method = callee.rpartition(".")[2] if callee else None
                if callee in _NOT_TEXT_CALLS or method in _NOT_TEXT_METHODS:
                    continue
            stack.extend(ast.iter_child_nodes(current))
        return None


def _flatten(values: Iterable[ast.expr]) -> list[ast.expr]:
    """``values`` with lists, tuples and starred items spread out."""
    pending, flat = list(values), []
    while pending:
        value = pending.pop(0)
        if isinstance(value, (ast.List, ast.Tuple)):
            pending[:0] = value.elts
        elif isinstance(value, ast.Starred):
            pending.insert(0, value.value)
        else:
            flat.append(value)
    return flat


def _command_line(call: ast.Call) -> list[ast.expr]:
    """A program's command line as written: positional arguments (or ``args=``) spread out."""
    keyword = [k.value for k in call.keywords if k.arg in ("args", "argv", "cmd")]
    return _flatten([*call.args, *keyword])


def _stdin(call: ast.Call) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == "input"), None)


_INLINE_CODE_FLAGS = frozenset({"-c", "-e", "--eval", "--command"})
"""Interpreter options whose next argument is the program itself."""


def _interpreter_at(parts: list[ast.expr], context: ImportContext) -> int | None:
    """Where a command line starts an interpreter: a literal such as ``python3`` (or a shell
    command ``python -c ...``), or ``sys.executable``, alone or inside a built string."""
    for index, part in enumerate(parts):
        for piece in ast.walk(part):  # "python3 " + path, f"{sys.executable} -c ..." too
            text = string_value(piece) if isinstance(piece, ast.Constant) else None
            if text is not None and _INTERPRETER.search(text.strip().split("\n", 1)[0] + " "):
                return index
            written = dotted_name(piece)
            if written is not None and context.qualify(written) == "sys.executable":
                return index
    return None


def _mentions(node: ast.AST) -> set[str]:
    """The local names (``f`` of ``f.name``) and path-like string literals in an expression,
    callees left out: what says which file a command line or a write refers to."""
    found: set[str] = set()
    for child in ast.walk(node):
        if isinstance(child, ast.Call):
            continue
        if isinstance(child, ast.Name):
            found.add(child.id)
        elif (
            isinstance(child, ast.Constant) and isinstance(child.value, str) and "." in child.value
        ):
            found.add(child.value)
    for child in ast.walk(node):
        if isinstance(child, ast.Call):
            found.discard(dotted_name(child.func) or "")
    return found


def _shell_true(call: ast.Call) -> bool:
    return any(
        k.arg == "shell" and isinstance(k.value, ast.Constant) and k.value.value is True
        for k in call.keywords
    )


def _is_code_grader(qualified: str | None) -> bool:
    return qualified is not None and (
        qualified == "rewardkit.code" or qualified.startswith("rewardkit.code.")
    )


def _hands_evaluator(node: ast.Call) -> bool:
    """Whether ``exec`` or ``eval`` itself is an argument (a ``target=``, a function to submit)."""
    values = [*node.args, *(k.value for k in node.keywords)]
    return any((dotted_name(v) or "").rpartition(".")[2] in ("exec", "eval") for v in values)


def _writes(node: ast.Call) -> bool:
    """Whether a call writes to a file: ``f.write(...)``, ``path.write_text(...)``,
    ``print(..., file=f)``."""
    if isinstance(node.func, ast.Attribute):
        return node.func.attr in WRITERS
    return dotted_name(node.func) == "print" and any(k.arg == "file" for k in node.keywords)


def _may_run_code(qualified: str | None, node: ast.Call) -> bool:
    """Whether a call could be a place the rule reports (a cheap filter before any walk)."""
    return (
        qualified in EVALUATORS
        or qualified in SHELLS
        or qualified in PROCESSES
        or qualified in FILE_RUNNERS
        or _is_code_grader(qualified)
        or _hands_evaluator(node)
        or _writes(node)
        or (isinstance(node.func, ast.Attribute) and node.func.attr == "communicate")
    )


_TEXT = "(the model's text)"


class _Finder:
    """The places a function runs model text: (call, what it does, what to do instead)."""

    def __init__(
        self, function: FunctionNode, context: ImportContext, sources: frozenset[str]
    ) -> None:
        self.flow = _Flow(function, sources)
        self.context = context
        self.files: dict[str, str] = {}
        """What names or literals the files written with model text go by -> the text's name."""
        self.fed: dict[str, str] = {}
        """Processes given model text on their stdin (``proc.communicate(code)``,
        ``proc.stdin.write(code)``) -> the text's name."""

    def findings(self, calls: list[_Call]) -> Iterator[tuple[ast.Call, str, str]]:
        for call in calls:  # writes first: a loop may run the file before the write's line
            self._note_write(call.node)
        for call in calls:
            found = self._how(call)
            if found is not None:
                yield call.node, *found

    def _first(self, values: Iterable[ast.expr | None]) -> str | None:
        return next(filter(None, map(self.flow.carries, values)), None)

    def _note_write(self, node: ast.Call) -> None:
        """Remember the file a call writes model text to (``f.write(code)`` in ``with open(path,
        "w") as f``, ``Path(p).write_text(code)``, ``print(code, file=f)``) by what names it,
        and the process whose stdin it feeds (``proc.communicate(code)``, ``proc.stdin.write``)."""
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "communicate":
            source = self._first(
                [*node.args[:1], *(k.value for k in node.keywords if k.arg == "input")]
            )
            if source is not None and isinstance(func.value, ast.Name):
                self.fed.setdefault(func.value.id, source)
            return
        if not _writes(node):
            return
        source = self._first(node.args)
        if source is None:
            return
        if isinstance(func, ast.Attribute):
            stream = func.value
            if (
                isinstance(stream, ast.Attribute)
                and stream.attr == "stdin"
                and isinstance(stream.value, ast.Name)
            ):
                self.fed.setdefault(stream.value.id, source)
            owner: ast.expr = func.value
        else:
            owner = next(k.value for k in node.keywords if k.arg == "file")
        names = _mentions(owner)
        for name in list(names):  # f of `with open(path) as f`: path too
            for value in self.flow.values.get(name, ()):
                names |= _mentions(value)
        for name in names:
            self.files.setdefault(name, source)

    def _fed(self, node: ast.Call) -> str | None:
        """The model text a started process (``proc = Popen(...)``) is given on its stdin."""
        for name, values in self.flow.values.items():
            if name in self.fed and any(value is node for value in values):
                return self.fed[name]
        return None

    def _file_run(self, parts: Iterable[ast.expr]) -> str | None:
        """The model text written to a file these arguments name, if they name one."""
        for part in parts:
            for name in _mentions(part):
                if name in self.files:
                    return self.files[name]
        return None

    def _how(self, call: _Call) -> tuple[str, str] | None:
        node, qualified = call.node, call.qualified
        if qualified in EVALUATORS:
            source = self.flow.carries(node.args[0]) if node.args else None
            if source is None:
                return None
            return f"`{qualified.rpartition('.')[2]}` runs `{source}` {_TEXT}", CODE_GRADER
        if qualified in PROCESSES or qualified in SHELLS:
            return self._process(node, qualified)
        if qualified in FILE_RUNNERS:
            source = self._first(node.args)
            if source is not None:
                return f"`{qualified}` runs Python from `{source}` {_TEXT}", CODE_GRADER
            written = self._file_run(node.args)
            if written is not None:
                return (
                    f"`{qualified}` runs the file `{written}` {_TEXT} was written to",
                    CODE_GRADER,
                )
            return None
        if _is_code_grader(qualified):
            sandbox = next((k.value for k in node.keywords if k.arg == "sandbox"), None)
            source = self._first(node.args[:1])
            if source is not None and sandbox is not None and string_value(sandbox) == "none":
                return (
                    f'`{qualified}(..., sandbox="none")` runs `{source}` {_TEXT} as a plain '
                    "subprocess",
                    'leave `sandbox="auto"` (bubblewrap or WASI CPython): "none" is for '
                    "trusted code only",
                )
            return None
        return self._handed_to_evaluator(node)

    def _process(self, node: ast.Call, qualified: str) -> tuple[str, str] | None:
        """A program started with model text as its code: in a shell command line, after an
        interpreter's ``-c``, on the stdin of an interpreter given no script, or in a file the
        function wrote it to."""
        parts = _command_line(node)
        if qualified in SHELLS or _shell_true(node):
            source = self._first(parts)
            if source is not None:
                return (
                    f"`{qualified}` hands `{source}` {_TEXT} to a shell, which runs it",
                    CODE_GRADER,
                )
        start = _interpreter_at(parts, self.context)
        if start is None:
            return None
        arguments = parts[start + 1 :]
        flags = [string_value(part) for part in arguments]
        inline = [a for a, flag in zip(arguments[1:], flags) if flag in _INLINE_CODE_FLAGS]
        source = self._first(inline)
        if source is None and all(flag is not None and flag.startswith("-") for flag in flags):
            source = self._first([_stdin(node)]) or self._fed(
                node
            )  # no script: stdin is the program
        if source is not None:
            return f"`{qualified}` runs an interpreter on `{source}` {_TEXT}", CODE_GRADER
        script = next(
            (a for a, flag in zip(arguments, flags) if flag is None or flag[:1] != "-"), None
        )
        written = self._file_run([parts[start]] if script is None else [parts[start], script])
        if written is not None:
            return (
                f"`{qualified}` runs an interpreter on the file `{written}` {_TEXT} was written to",
                CODE_GRADER,
            )
        return None

    def _handed_to_evaluator(self, node: ast.Call) -> tuple[str, str] | None:
        """``Process(target=exec, args=(code,))``, ``pool.apply(exec, (code,))``,
        ``loop.run_in_executor(None, exec, code)``: ``exec`` called elsewhere on model text."""
        values = _flatten([*node.args, *(k.value for k in node.keywords)])
        evaluator = next(
            (
                written
                for written in map(dotted_name, values)
                if written is not None and self.context.qualify(written) in EVALUATORS
            ),
            None,
        )
        source = self._first(values) if evaluator is not None else None
        if source is None:
            return None
        callee = dotted_name(node.func) or "a call"
        return f"`{callee}` has `{evaluator}` run `{source}` {_TEXT}", CODE_GRADER


_TESTS = (
    "from rewardkit import reward\n\n"
    "def extract(text):\n"
    '    return text.split("```python")[-1].split("```")[0]\n\n'
)


class ModelTextExecuted(Rule):
    """A reward that runs the model's text outside a sandbox: ``exec``/``eval`` of a response
    (``compile`` then ``exec`` too, whatever globals it is given: a restricted ``__builtins__``
    is no sandbox), ``subprocess``/``os.system``/``os.popen`` running ``python -c`` with it, a
    shell command holding it, the text written to a file and the file run (a ``subprocess``
    interpreter, ``runpy``, ``importlib``), ``exec`` handed to ``multiprocessing``, a thread or
    an executor with it, or ``grade_code(..., sandbox="none")`` of it. The program then runs in the trainer's process or as a child of it,
    with its rights, files, network and environment (API keys, tokens): a response can read or
    delete them, kill the trainer, fork-bomb the node, or print what the check looks for. Grade
    programs with ``rewardkit.code`` (``grade_code(response, tests)``, or the ``code_reward``
    reward): bubblewrap or WASI CPython, limits on time, memory and processes, and the comparison
    outside the program. Model text is a parameter whose name says it is the model's output
    (``final_response``, ``trajectory``, ``completion(s)``, ``solution_str``...), followed through
    the function's assignments, loops and comprehensions. There is no automatic fix: no rewrite
    keeps the reward's meaning and makes it safe."""

    code = "RK506"
    severity = Severity.ERROR
    summary = "a reward that runs the model's text outside a sandbox (`exec`, `python -c`, a file it runs)"
    VALID = (
        "from rewardkit import reward\nfrom rewardkit.code import grade_code\n\n"
        "@reward\ndef passes(final_response, tests):\n"
        "    return grade_code(final_response, tests).fraction\n",
        "import ast\nfrom rewardkit import reward\n\n"
        "@reward\ndef same_literal(final_response, answer):\n"
        "    return float(ast.literal_eval(answer) == len(final_response))\n",
        "import subprocess\nimport sys\nfrom rewardkit import reward\n\n"
        "@reward\ndef lint(final_response):\n"
        '    done = subprocess.run([sys.executable, "-m", "ruff", "--version"])\n'
        "    return float(done.returncode == 0 and bool(final_response))\n",
    )
    INVALID = (
        Invalid(
            _TESTS + "@reward\ndef passes(final_response, tests):\n"
            "    namespace = {}\n"
            "    exec(extract(final_response), namespace)\n"
            "    return float(all(eval(t, namespace) for t in tests))\n",
            9,
        ),
        Invalid(
            "import subprocess\nimport sys\nfrom rewardkit import reward\n\n"
            "@reward\ndef runs(final_response, expected_output):\n"
            "    done = subprocess.run(\n"
            '        [sys.executable, "-c", final_response], capture_output=True, text=True, timeout=5\n'
            "    )\n"
            "    return float(done.stdout.strip() == expected_output.strip())\n",
            7,
        ),
        Invalid(
            "import subprocess\nimport tempfile\nfrom rewardkit import reward\n\n"
            "@reward\ndef runs(final_response, expected_output):\n"
            '    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:\n'
            "        f.write(final_response)\n"
            '    done = subprocess.run(["python3", f.name], capture_output=True, text=True)\n'
            "    return float(done.stdout == expected_output)\n",
            9,
        ),
        Invalid(
            "import multiprocessing\nfrom rewardkit import reward\n\n"
            "@reward\ndef runs(final_response):\n"
            "    worker = multiprocessing.Process(target=exec, args=(final_response,))\n"
            "    worker.start()\n    worker.join(5)\n"
            "    return float(worker.exitcode == 0)\n",
            6,
        ),
        Invalid(
            "import runpy\nfrom pathlib import Path\n\n"
            "def compute_score(data_source, solution_str, ground_truth, extra_info=None):\n"
            '    Path("solution.py").write_text(solution_str)\n'
            '    result = runpy.run_path("solution.py")\n'
            '    return float(result.get("answer") == ground_truth)\n',
            6,
        ),
    )
    EXAMPLE_FRAMEWORK_REWARDS = (("verl", "compute_score"),)

    def check_reward(self, facts: RewardFacts, config: CheckConfig) -> Iterator[Diagnostic]:
        names = [parameter.name for parameter, _ in facts.parameters]
        calls = [
            _Call(c.node, c.qualified) for c in facts.calls if _may_run_code(c.qualified, c.node)
        ]
        yield from self._check(facts.function, facts.context, facts.positions, names, calls, facts)

    check_framework = check_reward

    def check_group(self, facts: GroupRewardFacts, config: CheckConfig) -> Iterator[Diagnostic]:
        function = facts.function
        names = [argument.arg for argument in (*function.args.args, *function.args.kwonlyargs)]
        calls = []
        for node in ast.walk(function):  # group rewards are few, and discovery keeps no calls
            if isinstance(node, ast.Call):
                written = dotted_name(node.func)
                qualified = facts.context.qualify(written) if written else None
                if _may_run_code(qualified, node):
                    calls.append(_Call(node, qualified))
        yield from self._check(function, facts.context, facts.positions, names, calls, None)

    def _check(
        self,
        function: FunctionNode,
        context: ImportContext,
        positions: NodePositions,
        names: list[str],
        calls: list[_Call],
        facts: RewardFacts | None,
    ) -> Iterator[Diagnostic]:
        sources = model_text_parameters(names)
        if not calls or not sources:
            return
        for node, how, instead in _Finder(function, context, sources).findings(calls):
            data = reward_data(facts) if facts is not None else {"reward": function.name}
            yield self.diagnostic(
                positions.span(node),
                f"{how}, outside a sandbox: with the trainer's rights, files, network and "
                f"environment (API keys, tokens), a response can read them, kill the trainer or "
                f"fork-bomb the node; {instead}",
                data={**data, "see": "rewardkit.code"},
            )
