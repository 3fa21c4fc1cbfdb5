"""Record the math grader's verdicts on a response file, and list what changed between two records.

    python benchmarks/grader_verdicts.py record --data ../shared/data/math-cot-responses.jsonl --out before.json
    (change the grader)
    python benchmarks/grader_verdicts.py record --data ../shared/data/math-cot-responses.jsonl --out after.json
    python benchmarks/grader_verdicts.py diff before.json after.json

A grader change may change a verdict only where a test shows the new verdict is right: ``diff``
lists every id whose verdict (correct, reason) changed, with the answers and the gold, to check
each one. Workers are started (``warm_up``) and the budget is generous (10 s), so that a record
depends on the grader's rules, not on the machine's load.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def _record(data: Path, out: Path, policy: str, extract: str = "boxed") -> int:
    from rewardkit.math import grade, warm_up

    warm_up()
    verdicts = {}
    for line_number, line in enumerate(data.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise SystemExit(f"{data}:{line_number}: not JSON: {error}") from None
        verdict = grade(row["response"], row["gold"], policy=policy, extract=extract, timeout=10.0)
        verdicts[str(row.get("id", line_number))] = {
            "correct": verdict.correct,
            "reason": verdict.reason,
            "answer": verdict.parsed_answer,
            "gold": row["gold"],
        }
    out.write_text(json.dumps(verdicts, indent=1, ensure_ascii=False), encoding="utf-8")
    correct = sum(verdict["correct"] for verdict in verdicts.values())
    print(f"{len(verdicts)} responses, {correct} correct ({policy}, extract={extract}) -> {out}")
    return 0


def _diff(before_path: Path, after_path: Path) -> int:
    before = json.loads(before_path.read_text(encoding="utf-8"))
    after = json.loads(after_path.read_text(encoding="utf-8"))
    changed = 0
    for key in sorted(set(before) | set(after)):
        old, new = before.get(key), after.get(key)
        if old is None or new is None:
            print(f"{key}: only in {'after' if old is None else 'before'}")
            changed += 1
            continue
        if (old["correct"], old["reason"]) != (new["correct"], new["reason"]):
            changed += 1
            print(
                f"{key}: {old['correct']}/{old['reason']} -> {new['correct']}/{new['reason']}"
                f"  answer {old['answer']!r} -> {new['answer']!r}  gold {new['gold']!r}"
            )
    flipped = sum(
        1 for key in set(before) & set(after) if before[key]["correct"] != after[key]["correct"]
    )
    print(f"{changed} verdicts changed ({flipped} correct/incorrect flips) of {len(after)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    record = commands.add_parser("record", help="grade every response and write the verdicts")
    record.add_argument("--data", type=Path, required=True, help="JSONL with id, gold, response")
    record.add_argument("--out", type=Path, required=True, help="where to write the verdicts (JSON)")
    record.add_argument("--policy", default="lenient", choices=("lenient", "strict"))
    record.add_argument("--extract", default="boxed", choices=("boxed", "auto"))
    diff = commands.add_parser("diff", help="list the ids whose verdict changed")
    diff.add_argument("before", type=Path)
    diff.add_argument("after", type=Path)
    args = parser.parse_args(argv)
    if args.command == "record":
        return _record(args.data, args.out, args.policy, args.extract)
    return _diff(args.before, args.after)


if __name__ == "__main__":
    sys.exit(main())
