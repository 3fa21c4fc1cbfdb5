"""The math grader's hostile corpus: what a hostile user or a broken model puts in an answer or a gold.

Each entry is a whole response (graded with ``extract="auto"``, so boxes and the fallbacks both
see it). The tests grade every entry against a few golds and assert ordinary verdicts, no created
file, and (under an audit hook) no ``compile``/``exec`` of a string while grading.
"""

from __future__ import annotations

# Python that must never run: each is a wrong answer (a gold like these is a HARNESS_ERROR).
CODE_PAYLOADS = [
    "__import__('os').system('touch pwned')",
    "().__class__.__base__.__subclasses__()",
    "__import__(\"os\").system(\"touch pwned\")",
    "eval('__import__(\"os\").system(\"touch pwned\")')",
    "exec(\"open('pwned','w')\")",
    "open('pwned', 'w').write('x')",
    "lambda: __import__('os').system('touch pwned')",
    "Symbol('x').__class__.__mro__",
    "x = __import__('os').system('touch pwned')",
    "\\frac{__import__('os').system('touch pwned')}{1}",
    "(__import__('subprocess').run(['touch','pwned']), 1)",
]

# Digit tokens that reach the LaTeX parser (sympy.Number(str) would send them to parse_expr).
NUMBER_TOKENS = [
    "31337",
    "\\sqrt{31337}",
    "31337x+1",
    "\\frac{31337}{7}",
    "\\sin(31337)+x",
    "2.71828e5x",
    "0,31337x",
    "1,000x",
    "31337\\%x",
    "\\begin{pmatrix}31337&1\\end{pmatrix}+\\begin{pmatrix}1&1\\end{pmatrix}",
    "x = 31337 + y",
]

# Inputs whose evaluation (or whose printing) would not end: refused before sympy, or compared exactly.
EVALUATION_BOMBS = [
    "9^{9^{9^9}}",
    "10^{10^{10}}",
    "2^{1000000}+1",
    "100000!",
    "(3!)!",
    "e^{e^{e^{e^{10}}}}",
    "\\binom{100000}{3}",
    "1e99999",
    # Issue 27, item 11: arguments that are expressions (1-2 s timeouts in the sandbox, 90 s+ in-process before).
    "\\binom{10^9}{5 \\cdot 10^8}",
    "\\Gamma(10^{10})",
    "(10^{10})!",
    "(x - x + 10^{10})!",
    "\\frac{(10^{10})!}{2} + x",
    "{10^{9} \\choose 5 \\cdot 10^{8}}",
    "\\Gamma(\\frac{10^{12}}{3})",
    "\\lfloor 10^{9} \\rfloor !",
    "1000!!",
    "(\\frac{1}{1-0.999999999})!",
]

# Issue 34: relations compared by their solutions (factoring, solveset), each with the relation gold it meets.
RELATION_BOMBS = [
    ("x^8 - 3x^7 + 2x^5 - x + 1 > 0", "x > 1"),
    ("(x+y+z+w)^8 = 0", "x+y+z+w=0"),
    ("x^{400} = 1", "x = 1"),
    ("\\frac{x^8-1}{x^7-2} > 3", "x > 2"),
    (" \\text{ or } ".join(f"x = {k}" for k in range(1, 13)), "x^2 = 9"),
    (" \\text{ or } ".join(f"x^2 + {k}y = {k}" for k in range(1, 9)), "x^2 = 9 \\text{ or } y = 1"),
    ("(x^2+y^2+z^2+w^2)^4 = 1", "x^8 = 1"),
]

# Inputs that made a stage re-scan the text once per nesting level or once per start position.
QUADRATIC_INPUTS = {
    "nested tuples": "(1," * 3000 + "1" + ")" * 3000,
    "nested parens": "(" * 5000 + "1" + ")" * 5000,
    "nested sets": "\\{" * 3000 + "1" + "\\}" * 3000,
    "nested braces": "{" * 4000 + "1" + "}" * 4000,
    "tildes": "~" * 9000 + "x",
    "semicolons": " ;" * 4500 + "1",
    "spaced commas": " \\, " * 2000 + "1",
    "quads between equations": "x=1 \\quad " * 1500,
}

# Whole responses: unclosed math, many boxes, control characters.
RESPONSES = [
    "\\[" * 5000,
    "\\(" * 5000 + "x",
    "$$" + "x" * 10_000,
    "$" * 9999 + "1",
    "\\boxed{1} and " * 2000 + "\\boxed{2}",
    "\\boxed{" * 100_000,
    "\x00\x01\x1b[31m\x07" * 1000 + "\\boxed{5\x00}",
    "The answer is " + "$1$ and " * 3000 + "$2$",
]


def hostile_responses() -> list[str]:
    """Every entry of the corpus as a response (answers boxed), in a stable order."""
    answers = CODE_PAYLOADS + NUMBER_TOKENS + EVALUATION_BOMBS + list(QUADRATIC_INPUTS.values())
    return ["The answer is \\boxed{" + answer + "}" for answer in answers] + RESPONSES


#: Golds the corpus is graded against (a number, an expression, a tuple, a matrix).
GOLDS = ["0", "x+1", "(1, 2)", "\\begin{pmatrix}31338&2\\end{pmatrix}"]
