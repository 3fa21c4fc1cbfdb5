"""`rewardkit eval math [RESPONSES.jsonl]`: grade a file of responses (or the shipped sample).

Exit status (docs/eval.md): 0 the run completed and scored at least one case, whatever the
score; 2 usage errors, unreadable or malformed input (the message names file:line), an output
refused (exists without --resume/--overwrite, is the input or another output, belongs to
another run); 3 nothing could be scored (empty input, or every case an ADAPTER_ERROR or
HARNESS_ERROR); 4 an output could not be written (full disk, a directory, no permission);
128+N stopped by signal N after keeping what was graded (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP;
continue with --resume); 1 a bug in rewardkit (a traceback).
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import os
import re
import signal
import sys
import warnings
from collections.abc import Sequence

from rewardkit.evaluation.errors import (
    EXIT_NOTHING_SCORED,
    EXIT_OK,
    EXIT_OUTPUT_ERROR,
    EXIT_USAGE,
    EvalConfigError,
    EvalOutputError,
    EvalWarning,
    exit_status_of_interrupt,
    raise_interrupted,
)
from rewardkit.evaluation.inputs.cases import (
    DEFAULT_GOLD_FIELDS,
    EvalInputError,
    FieldNames,
)
from rewardkit.evaluation.main.executors import capped_workers
from rewardkit.evaluation.main.generation import (
    DEFAULT_MAX_TOKENS,
    ChatEndpoint,
    ModelSpecError,
    parse_model_spec,
)
from rewardkit.evaluation.main.output_files import escape_lone_surrogates
from rewardkit.evaluation.main.report import print_summary, summary_table
from rewardkit.evaluation.option_names import command_line_names
from rewardkit.evaluation.options import EXECUTORS, SANDBOXES, EvalOptions
from rewardkit.evaluation.runner import EvalRun, run_task
from rewardkit.evaluation.tasks import TASKS, Task
from rewardkit.math.verdict import quoted

_DEFAULTS = EvalOptions()
"""Each option's default, as `run_math_eval` has it (a task's own: `EvalOptions.for_task`)."""


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as exit status 2 without a traceback (its default)."""


class _TaskParser(_Parser):
    """A task's parser (`math`): it refuses the arguments it does not know itself, with its own
    usage and the nearest option, where argparse leaves them to `rewardkit eval`'s parser (whose
    usage, `rewardkit eval [-h] {math}`, names no option of the task)."""

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        namespace, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(_unrecognized(extras, list(self._option_string_actions)))
        return namespace, extras


def _unrecognized(extras: list[str], options: list[str]) -> str:
    message = f"unrecognized arguments: {' '.join(extras)}"
    for extra in extras:
        if extra.startswith("-"):
            close = difflib.get_close_matches(extra.partition("=")[0], options, n=1)
            if close:
                return f"{message} (did you mean {close[0]}?)"
    return message


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {quoted(text)}") from None


def _positive_float(text: str) -> float:
    value = _number(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be > 0: {quoted(text)}")
    return value


def _non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {quoted(text)}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0: {quoted(text)}")
    return value


_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?", re.IGNORECASE)


def memory_size(text: str) -> int:
    """`2G`, `512M`, `1.5GiB`, `0` (no cap) -> bytes (powers of 1024)."""
    found = _SIZE.fullmatch(text.strip())
    if found is None:
        raise argparse.ArgumentTypeError(
            f"not a size: {quoted(text)} (e.g. 2G, 512M, 0 for no cap)"
        )
    number, unit = found.groups()
    return int(float(number) * 1024 ** "bkmgt".index((unit or "b").lower()))


def grader_function(text: str) -> object:
    """`package.module:function` -> the function (imported now, so a typo is a usage error)."""
    module_name, _, name = text.partition(":")
    if not module_name or not name:
        raise argparse.ArgumentTypeError(f"expected MODULE:FUNCTION, got {quoted(text)}")
    try:
        function = getattr(importlib.import_module(module_name), name)
    except (ImportError, AttributeError) as exc:
        raise argparse.ArgumentTypeError(f"cannot import {text}: {exc}") from None
    if not callable(function):
        raise argparse.ArgumentTypeError(f"{text} is not a function")
    return function


def reward_url(text: str) -> str:
    """`--reward-url URL`: checked now (an http(s) URL); the server is reached before the run."""
    try:
        from rewardkit.serve.grading import split_reward_url
    except ImportError as exc:
        from rewardkit.install import install_command

        raise argparse.ArgumentTypeError(
            f"needs the client extra: {install_command('client')} ({exc})"
        ) from None
    try:
        split_reward_url(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def build_parser() -> argparse.ArgumentParser:
    """The `rewardkit eval` argument parser: one subcommand per task (`tasks.TASKS`)."""
    parser = _Parser(
        prog="rewardkit eval", description="Evaluate model responses with rewardkit's graders."
    )
    tasks = parser.add_subparsers(
        dest="task", metavar=f"{{{','.join(TASKS)}}}", required=True, parser_class=_TaskParser
    )
    for task in TASKS.values():
        sub = tasks.add_parser(task.name, help=task.help, description=task.description)
        sub.add_argument("input", nargs="?", metavar="RESPONSES.jsonl", help=task.input_help)
        defaults = EvalOptions.for_task(task)
        _add_input_options(sub, task)
        _add_grading_options(sub, task, defaults)
        if task.runs_code:
            _add_sandbox_options(sub)
        _add_execution_options(sub, defaults)
        _add_output_options(sub)
        if task.generation:
            _add_generation_options(sub)
        # (the options a task does not offer, as they are when not given)
        offered = {action.dest for action in sub._actions}
        absent = {dest: value for dest, value in _ABSENT.items() if dest not in offered}
        sub.set_defaults(**absent, task_parser=sub, prog=task.prog)
    return parser


_ABSENT = {
    "policy": None,
    "sandbox": "auto",
    "memory": None,
    "reward_url": None,
    "reward_token_file": None,
    "model": None,
    "base_url": None,
    "api_key_env": None,
    "concurrency": _DEFAULTS.concurrency,
    "question_field": "question",
}
"""Each option some task does not offer, with the value it has when not given."""


def _add_input_options(math: argparse.ArgumentParser, task: Task) -> None:
    data = math.add_argument_group("input")
    data.add_argument("--id-field", default="id", help="field holding the case id (default: id)")
    data.add_argument(
        "--response-field",
        default="response",
        help="field holding the model response (default: response)",
    )
    if task.runs_code:
        data.add_argument(
            "--tests-field",
            dest="gold_field",
            default=None,
            metavar="FIELD",
            help="field holding the tests: {inputs, outputs[, fn_name]}, {test, entry_point}, "
            "{asserts} or test_list, ... as an object or a JSON string (default: tests)",
        )
    else:
        data.add_argument(
            "--gold-field",
            default=None,
            help="field holding the gold answer (default: gold, else answer)",
        )
    if task.generation:
        data.add_argument(
            "--question-field",
            default="question",
            help="field holding the problem, for --model (default: question)",
        )
    data.add_argument(
        "--error-field",
        default="error",
        help="a non-empty value here marks an upstream generation failure: ADAPTER_ERROR (default: error)",
    )
    data.add_argument(
        "--limit", type=_non_negative_int, metavar="N", help="grade only the first N cases"
    )
    data.add_argument(
        "--max-line-size",
        type=memory_size,
        default=_DEFAULTS.max_line_bytes,
        metavar="SIZE",
        help="the longest input line read, e.g. 64M; a longer one stops the run naming it "
        f"(default: {_DEFAULTS.max_line_bytes >> 20}M)",
    )
    data.add_argument(
        "--skip-bad",
        action="store_true",
        help="record a malformed line as a HARNESS_ERROR case naming the line instead of stopping",
    )


_EXTRACT_HELP = {
    "math": "boxed: last \\boxed{}; auto: also 'the answer is', last math, last number "
    "(default: boxed)",
    "code": "last: the last ```python (or ```py, unlabeled) block; first: the first; raw: "
    "the whole response is the program (default: last)",
}


def _add_grading_options(math: argparse.ArgumentParser, task: Task, defaults: EvalOptions) -> None:
    grading = math.add_argument_group("grading")
    if task.policies:
        grading.add_argument(
            "--policy",
            choices=task.policies,
            default=defaults.policy,
            help="lenient: equal values are equal; strict: PRM800K's rules (default: lenient)",
        )
    grading.add_argument(
        "--extract",
        choices=task.extract_modes,
        default=defaults.extract,
        help=_EXTRACT_HELP[task.name],
    )
    grading.add_argument(
        "--grader",
        type=grader_function,
        default=None,
        metavar="MODULE:FUNCTION",
        help=f"grade with your own function of {task.default_grader}'s signature "
        f"(default: {task.default_grader})",
    )
    if not task.generation:
        _add_timeout(grading, task, defaults)
        return
    grading.add_argument(
        "--reward-url",
        type=reward_url,
        default=None,
        metavar="URL",
        help="grade with a reward served by `rewardkit serve` (http://host:8000, or "
        "http://host:8000/v1/rewards/NAME), reached before the run; see docs/eval.md",
    )
    grading.add_argument(
        "--reward-token-file",
        default=None,
        metavar="PATH",
        help="file holding the --reward-url server's bearer token (default: the "
        "REWARDKIT_SERVE_TOKEN environment variable, if set)",
    )
    _add_timeout(grading, task, defaults)


def _add_timeout(grading: argparse._ArgumentGroup, task: Task, defaults: EvalOptions) -> None:
    grading.add_argument(
        "--timeout",
        type=_positive_float,
        default=defaults.timeout,
        metavar="SECONDS",
        help=f"time budget per {'test' if task.runs_code else 'case'} "
        f"(default: {defaults.timeout})",
    )


def _add_sandbox_options(code: argparse.ArgumentParser) -> None:
    sandbox = code.add_argument_group("sandbox (where the programs run)")
    sandbox.add_argument(
        "--sandbox",
        choices=SANDBOXES,
        default="auto",
        metavar="{auto,bwrap,wasm}",
        help="auto: the first usable of bwrap (bubblewrap) and wasm (WASI CPython: standard "
        "library only); none usable is refused, never run unsandboxed. 'none' runs programs "
        "as plain processes with your rights: only for code you trust (default: auto)",
    )
    sandbox.add_argument(
        "--memory",
        type=memory_size,
        default=None,
        metavar="SIZE",
        help="memory a program may use, e.g. 512M (default: the grader's, 1G); more is "
        "MEMORY_LIMIT",
    )


def _add_execution_options(math: argparse.ArgumentParser, defaults: EvalOptions) -> None:
    run = math.add_argument_group("execution")
    run.add_argument(
        "--workers",
        type=_non_negative_int,
        default=None,
        metavar="N",
        help="worker processes (default and most: the cores this process may use; 0 grades "
        "in this process)",
    )
    run.add_argument(
        "--worker-memory",
        type=memory_size,
        default=defaults.worker_memory,
        metavar="SIZE",
        help="address space each worker may use beyond its start, e.g. 2G, 512M; 0: no cap "
        "(default: "
        + (f"{defaults.worker_memory >> 30}G" if defaults.worker_memory else "no cap")
        + "; a case over it is a HARNESS_ERROR)",
    )
    run.add_argument(
        "--executor",
        choices=EXECUTORS,
        default=_DEFAULTS.executor,
        help="local worker processes, or a Ray cluster (needs the ray extra)",
    )
    run.add_argument(
        "--ray-address",
        default=None,
        metavar="ADDR",
        help="Ray cluster address (default: start or join a local instance)",
    )


def _add_output_options(math: argparse.ArgumentParser) -> None:
    out = math.add_argument_group("output")
    out.add_argument(
        "--output", "-o", metavar="RESULTS.jsonl", help="write one result per case, as each arrives"
    )
    out.add_argument(
        "--resume", action="store_true", help="skip the ids already in --output and append the rest"
    )
    out.add_argument(
        "--overwrite",
        action="store_true",
        help="replace an existing --output (without it, or --resume, an existing one is refused)",
    )
    out.add_argument(
        "--force-resume",
        action="store_true",
        help="with --resume: continue the results even if they were graded from another input "
        "or with other grading options",
    )
    out.add_argument(
        "--report",
        metavar="REPORT.json",
        help="write the JSON report (schema_version, score, counts, config, timings)",
    )
    out.add_argument(
        "--html",
        metavar="REPORT.html",
        help="write a self-contained HTML report with a filterable per-case table",
    )


def _add_generation_options(math: argparse.ArgumentParser) -> None:
    gen = math.add_argument_group(
        "generation (optional): ask an OpenAI-compatible chat endpoint for each problem's response"
    )
    gen.add_argument(
        "--model",
        metavar="openai:MODEL",
        help="generate responses with MODEL (problems need a question and an answer)",
    )
    gen.add_argument(
        "--base-url", metavar="URL", help="endpoint base URL, e.g. http://localhost:8000/v1"
    )
    gen.add_argument(
        "--api-key-env",
        metavar="VAR",
        help="environment variable holding the API key (sent as a Bearer token)",
    )
    gen.add_argument(
        "--max-tokens",
        type=_non_negative_int,
        default=DEFAULT_MAX_TOKENS,
        help=f"completion budget (default: {DEFAULT_MAX_TOKENS}; truncated reasoning is the usual cause of NO_ANSWER)",
    )
    gen.add_argument(
        "--temperature", type=_number, default=0.0, help="sampling temperature (default: 0)"
    )
    gen.add_argument(
        "--concurrency",
        type=_non_negative_int,
        default=_DEFAULTS.concurrency,
        help=f"requests in flight (default: {_DEFAULTS.concurrency})",
    )
    gen.add_argument(
        "--retries",
        type=_non_negative_int,
        default=4,
        help="retries of transient failures per request (default: 4)",
    )
    gen.add_argument(
        "--retry-backoff",
        type=_positive_float,
        default=1.0,
        metavar="SECONDS",
        help="first retry delay, doubled each time (default: 1.0)",
    )
    gen.add_argument(
        "--request-timeout",
        type=_positive_float,
        default=600.0,
        metavar="SECONDS",
        help="per request (default: 600)",
    )


def _endpoint(args: argparse.Namespace, parser: argparse.ArgumentParser) -> ChatEndpoint | None:
    if args.model is None:
        for flag in ("base_url", "api_key_env"):
            if getattr(args, flag):
                parser.error(f"--{flag.replace('_', '-')} needs --model")
        return None
    try:
        model = parse_model_spec(args.model)
    except ModelSpecError as exc:
        parser.error(str(exc))
    if not args.base_url:
        parser.error("--model needs --base-url (e.g. http://localhost:8000/v1)")
    if args.input is None:
        parser.error("--model needs a PROBLEMS.jsonl file (question and answer per line)")
    api_key = None
    if args.api_key_env:
        api_key = os.environ.get(args.api_key_env)
        if not api_key:
            parser.error(f"--api-key-env {args.api_key_env}: that environment variable is not set")
    return ChatEndpoint(
        base_url=args.base_url,
        model=model,
        api_key=api_key,
        max_tokens=args.max_tokens,
        temperature=args.temperature,
        request_timeout=args.request_timeout,
        retries=args.retries,
        backoff=args.retry_backoff,
    )


def _error(prog: str, message: str) -> None:
    print(f"{prog}: error: {escape_lone_surrogates(message)}", file=sys.stderr)


def _install_signal_handlers() -> None:
    """SIGTERM and SIGHUP stop a run as Ctrl-C does: what was graded is written, then the exit
    status is 128 + the signal's number (the workers die with the run in any case)."""
    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        signum = getattr(signal, name, None)
        if signum is not None and signal.getsignal(signum) in (
            signal.SIG_DFL,
            signal.default_int_handler,
        ):
            signal.signal(signum, raise_interrupted)


def main(argv: list[str]) -> int:
    """Run `rewardkit eval ...` with `argv` (after `eval`); return the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        endpoint = _endpoint(args, args.task_parser)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    if args.resume and not args.output:
        _error(args.prog, "--resume needs --output")
        return EXIT_USAGE
    if args.reward_url is not None:
        if args.grader is not None:
            _error(args.prog, "--reward-url and --grader both choose the grader: give one")
            return EXIT_USAGE
        status = _connect_reward_server(args)
        if status is not None:
            return status
    elif args.reward_token_file is not None:
        _error(args.prog, "--reward-token-file needs --reward-url")
        return EXIT_USAGE
    workers = args.workers
    if args.executor == "local" and workers:
        with command_line_names():
            workers, capped = capped_workers(workers)
        if capped:
            print(f"{args.prog}: warning: {capped}", file=sys.stderr)
    if args.sandbox == "none":
        print(
            f"{args.prog}: warning: --sandbox none runs the programs as plain processes, with "
            "your rights, files and environment: only for code you trust",
            file=sys.stderr,
        )
    _install_signal_handlers()
    try:
        run = _run(args, endpoint, workers)
    except (EvalInputError, EvalConfigError) as exc:
        _error(args.prog, str(exc))
        return EXIT_USAGE
    except EvalOutputError as exc:
        _error(args.prog, str(exc))
        return EXIT_OUTPUT_ERROR
    except KeyboardInterrupt as exc:
        where = f"; continue with --resume --output {args.output}" if args.output else ""
        print(f"{args.prog}: interrupted{where}", file=sys.stderr)
        return exit_status_of_interrupt(exc)
    return _print_outcome(run, args)


def _connect_reward_server(args: argparse.Namespace) -> int | None:
    """Build the `--reward-url` grader and reach its server before the run; the exit status
    when that fails (3: the server does not answer, nothing could be graded; 2: it refuses
    the reward name or the token), else None."""
    from rewardkit.serve.auth import read_token
    from rewardkit.serve.config import ServeConfigError
    from rewardkit.serve.grading import RemoteGrader, RewardServerDown, RewardServerRefused

    try:
        token = read_token(args.reward_token_file)  # (no file: $REWARDKIT_SERVE_TOKEN, or None)
    except ServeConfigError as exc:
        _error(args.prog, f"--reward-token-file: {exc}")
        return EXIT_USAGE
    grader = RemoteGrader(args.reward_url, token=token)
    try:
        grader.connect()
    except RewardServerDown as exc:
        _error(args.prog, f"{exc}; nothing was graded (start the server, or check --reward-url)")
        return EXIT_NOTHING_SCORED
    except RewardServerRefused as exc:
        _error(args.prog, str(exc))
        return EXIT_USAGE
    args.grader = grader
    return None


def _run(args: argparse.Namespace, endpoint: ChatEndpoint | None, workers: int | None) -> EvalRun:
    """Run with the command line's options and its spelling of them in messages; print the
    run's warnings as one line each."""
    options = _options(args, endpoint, workers)
    with warnings.catch_warnings(record=True) as caught, command_line_names():
        warnings.simplefilter("ignore", RuntimeWarning)  # shown by main, in one line
        warnings.simplefilter("always", EvalWarning)
        try:
            return run_task(TASKS[args.task], args.input, options)
        finally:
            for warning in caught:
                if issubclass(warning.category, EvalWarning):
                    print(
                        f"{args.prog}: warning: {escape_lone_surrogates(str(warning.message))}",
                        file=sys.stderr,
                    )
                else:
                    warnings.showwarning(
                        warning.message, warning.category, warning.filename, warning.lineno
                    )


def _options(
    args: argparse.Namespace, endpoint: ChatEndpoint | None, workers: int | None
) -> EvalOptions:
    """The run's `EvalOptions`, from the command line's arguments (the one place they meet)."""
    fields = FieldNames(
        id=args.id_field,
        response=args.response_field,
        gold=(args.gold_field,) if args.gold_field else DEFAULT_GOLD_FIELDS,
        question=args.question_field,
        error=args.error_field,
    )
    return EvalOptions(
        policy=args.policy,
        extract=args.extract,
        timeout=args.timeout,
        sandbox=args.sandbox,
        memory=args.memory,
        fields=fields,
        limit=args.limit,
        skip_bad=args.skip_bad,
        workers=workers,
        executor=args.executor,
        ray_address=args.ray_address,
        output=args.output,
        resume=args.resume,
        overwrite=args.overwrite,
        force_resume=args.force_resume,
        report=args.report,
        html=args.html,
        generation=endpoint,
        grader=args.grader,
        concurrency=max(1, args.concurrency),
        progress=sys.stderr.isatty(),
        worker_memory=args.worker_memory,
        max_line_bytes=args.max_line_size,
    )


def _grader_line(args: argparse.Namespace) -> str:
    """The header's line naming the grader, when it is not `rewardkit.math.grade`."""
    grader = args.grader
    if grader is None:
        return ""
    describe = getattr(grader, "describe", None)
    if callable(describe) and args.reward_url is not None:
        return f"\ngraded by the {describe()}"
    name = getattr(grader, "__qualname__", None) or f"{type(grader).__qualname__} instance"
    return f"\ngraded by {getattr(grader, '__module__', '?')}:{name}"


def _either(names: tuple[str, ...]) -> str:
    """`A or B`, `A, B or C`."""
    return ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else "".join(names)


def _settings_line(args: argparse.Namespace) -> str:
    """The header's line of grading settings."""
    if TASKS[args.task].runs_code:
        memory = f", memory {args.memory >> 20}M" if args.memory else ""
        return (
            f"extract {args.extract}, timeout {args.timeout:g} s per test, "
            f"sandbox {args.sandbox}{memory}"
        )
    return f"policy {args.policy}, extract {args.extract}, timeout {args.timeout:g} s"


def _print_outcome(run: EvalRun, args: argparse.Namespace) -> int:
    """Print the summary table and where the outputs went; return the exit status."""
    title = escape_lone_surrogates(
        f"{args.prog}: {run.report['config']['input']}\n"
        + _settings_line(args)
        + _grader_line(args)
    )
    print_summary(
        summary_table(
            run.summary,
            title=title,
            timings=run.timings,
            workers_text=run.report["timings"]["executor"],
        ),
        sys.stdout,
    )
    for name, path in (
        ("results", args.output),
        ("report", args.report),
        ("html report", args.html),
    ):
        if path:
            print(escape_lone_surrogates(f"{name}: {path}"))
    summary = run.summary
    if summary.scored == 0:
        if summary.n == 0:
            why = "--limit 0 grades no case" if args.limit == 0 else "the input has no cases"
        elif summary.n == 1:
            why = f"its one case is an {_either(summary.excluded_tags)}"
        else:
            why = f"all {summary.n} cases are {_either(summary.excluded_tags)}"
        _error(args.prog, f"nothing could be scored: {why} (exit status {EXIT_NOTHING_SCORED})")
        return EXIT_NOTHING_SCORED
    return EXIT_OK
