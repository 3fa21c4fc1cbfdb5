"""The examples of every comparison rule: (answer, gold, policy) triples each rule must accept
(``matches``) or reject (``mismatches``), with the rule's name as the verdict's reason. The
test-suite runs every one of them, with the sandbox and in-process (docs/math.md)."""

from __future__ import annotations

RULE_EXAMPLES: dict[str, dict[str, tuple[tuple[str, str, str], ...]]] = {
    "exact": {
        "matches": (
            ("\\dfrac{1}{2}", "\\frac12", "strict"),
            ("\\left( 1, 2 \\right)", "(1,2)", "strict"),
            ("\\text{Yes}", "yes", "lenient"),
            ("10{,}000", "10000", "strict"),
            ("1\\,000", "1000", "strict"),
        ),
        "mismatches": (),
    },
    "rational": {
        "matches": (
            ("0.5", "\\frac{1}{2}", "lenient"),
            ("\\frac{2}{4}", "\\frac{1}{2}", "lenient"),
            ("2^{10}", "1024", "lenient"),
            ("12\\frac{3}{5}", "\\frac{63}{5}", "lenient"),
            ("6.29\\times10^6", "6290000", "lenient"),
            ("2\\times 3", "6", "lenient"),
            ("0.5", "\\frac12", "strict"),
            ("x = 5", "5", "strict"),
            ("2^{2^{2^{2^2}}}", "2^{65536}", "lenient"),
            ("4^{32768}", "2^{65536}", "strict"),
            ("0.0833333333333333", "\\frac{1}{12}", "lenient"),
            ("0.3", "0.30000000000000004", "lenient"),  # a gold printed by a program
            ("\\frac{1}{540}", "1.851851851852 \\times 10^{-3}", "lenient"),
            ("2 3/4", "\\frac{11}{4}", "lenient"),
            ("12", "v_{\\max} \\approx 12", "lenient"),  # the gold's name is not part of the value
        ),
        "mismatches": (
            ("123457", "123456", "lenient"),
            ("2\\times3", "2000", "lenient"),
            ("3.00001", "3", "lenient"),
            ("\\frac{1}{2^{98}}", "\\frac{1}{2^{99}}", "lenient"),
            ("0.0000002", "0.0000001", "lenient"),
            ("50", "0.5", "lenient"),
            ("0.3333", "\\frac13", "lenient"),
            ("12\\frac{3}{5}", "\\frac{36}{5}", "lenient"),
            ("\\frac{2}{4}", "\\frac{1}{2}", "strict"),
            ("2^{10}", "1024", "strict"),
            ("\\frac{6}{2}", "3", "strict"),
            ("1.5\\times10^3", "1500", "strict"),
            ("2^{1000000}", "2", "lenient"),
            ("2^{2^{2^{2^2}}}", "2^{65537}", "lenient"),
            ("0.08333333", "\\frac{1}{12}", "lenient"),
            ("0.0833333333333333", "\\frac{1}{12}", "strict"),
            ("0.3", "0.3000000001", "lenient"),  # 10 digits: an exact gold
            ("\\frac{1}{540}", "1.851851851853 \\times 10^{-3}", "lenient"),
        ),
    },
    "numeric": {
        "matches": (("6.283185", "2\\pi", "lenient"), ("1.41421356", "\\sqrt{2}", "lenient")),
        "mismatches": (
            ("3.14", "\\pi", "lenient"),
            ("6.283185", "2\\pi", "strict"),
            ("-\\infty", "\\infty", "lenient"),
        ),
    },
    "symbolic": {
        "matches": (
            ("(x+1)^2", "x^2+2x+1", "lenient"),
            ("2\\sqrt2", "\\sqrt8", "lenient"),
            ("\\sin^2x+\\cos^2x", "1", "lenient"),
            ("\\frac{\\sqrt{3}}{3}", "\\frac{1}{\\sqrt{3}}", "strict"),
            ("3+4i", "4i+3", "lenient"),
            ("x - x", "0", "lenient"),
            ("\\sin^2 x + \\cos^2 x - 1", "0", "lenient"),
            ("\\sin(90^\\circ - x)", "\\cos x", "lenient"),
            ("y = 3t - 1", "g(t) = 3t - 1", "lenient"),  # the gold's name is not part of the value
        ),
        "mismatches": (
            ("4\\sqrt(2)", "4", "lenient"),
            ("\\pi+<junk>", "\\pi", "lenient"),
            ("x^2+2x", "x^2+2x+1", "lenient"),
            ("N", "n", "lenient"),
            ("\\lfloor\\frac{2n-1}{6}\\rfloor", "\\lfloor\\frac{2n-1}{5}\\rfloor", "lenient"),
            ("x - x + 1", "0", "lenient"),
            ("x - x + 10^{-25}", "0", "lenient"),
        ),
    },
    "text": {
        "matches": (),
        "mismatches": (("converges", "diverges", "lenient"), ("5", "\\text{no solution}", "lenient")),
    },
    "set": {
        "matches": (
            ("3, 1, 2", "1, 2, 3", "lenient"),
            ("x=2 \\text{ or } x=1", "1, 2", "strict"),
            ("1+\\sqrt2, 1-\\sqrt2", "1 \\pm \\sqrt2", "lenient"),
            ("\\pm 3", "3, -3", "strict"),
            ("\\{2, 1\\}", "\\{1, 2\\}", "strict"),
            ("\\{1,2\\} \\cup \\{2,5\\}", "\\{1,2,5\\}", "lenient"),
            ("\\frac{-3 \\pm \\sqrt{5}}{2}", "\\frac{-3+\\sqrt{5}}{2}, \\frac{-3-\\sqrt{5}}{2}", "strict"),
        ),
        "mismatches": (
            ("1, 2", "1, 2, 3", "lenient"),
            ("1, 2, 3, 4", "1, 2, 3", "lenient"),
            ("12", "1, 2", "lenient"),
            ("a=3, b=2", "a=2, b=3", "lenient"),
            ("\\{1,2\\} \\cup \\{2,6\\}", "\\{1,2,5\\}", "lenient"),
            ("\\frac{3 \\pm \\sqrt{5}}{2}", "\\frac{-3+\\sqrt{5}}{2}, \\frac{-3-\\sqrt{5}}{2}", "lenient"),
        ),
    },
    "tuple": {
        "matches": (("(1, \\frac{1}{2})", "(1, 0.5)", "lenient"), ("1, 2", "(1,2)", "lenient")),
        "mismatches": (("(2, 1)", "(1, 2)", "lenient"), ("1, 2", "(1,2)", "strict"), ("(1,2,3)", "(1,2)", "lenient")),
    },
    "interval": {
        "matches": (
            ("[\\frac{1}{2}, 3)", "[0.5, 3)", "strict"),
            ("[1,2)\\cup(3,\\infty)", "(3,\\infty)\\cup[1,2)", "lenient"),
            ("\\left[0.5, 1\\right)", "[\\frac12, 1)", "lenient"),
            ("x > 2", "(2, \\infty)", "lenient"),
            ("[-1, 1]", "-1 \\le x \\le 1", "lenient"),
            ("x<3 \\text{ or } x>4", "(-\\infty,3)\\cup(4,\\infty)", "lenient"),
            ("[0,3] \\cap (1,4)", "(1,3]", "lenient"),
            ("[1,2] \\cup [2,4]", "[1,4]", "lenient"),
        ),
        "mismatches": (
            ("(1, 2)", "(1, 2]", "lenient"), ("[1,2)", "[1,3)", "lenient"), ("(1,2]", "[1,2)", "strict"), ("x \\geq 2", "(2, \\infty)", "lenient"),
            ("[1,2) \\cup (2,4]", "[1,4]", "lenient"),
        ),
    },
    "matrix": {
        "matches": (
            ("\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}", "\\begin{bmatrix}1&2\\\\3&4\\end{bmatrix}", "lenient"),
            ("(1,2)", "\\begin{pmatrix}1\\\\2\\end{pmatrix}", "lenient"),
            ("2\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}", "\\begin{pmatrix}2&4\\\\6&8\\end{pmatrix}", "lenient"),
        ),
        "mismatches": (
            ("\\begin{pmatrix}1&2\\\\4&3\\end{pmatrix}", "\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}", "lenient"),
            ("2\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}", "\\begin{pmatrix}2&4\\\\6&7\\end{pmatrix}", "lenient"),
            ("2\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}", "\\begin{pmatrix}2&4\\\\6&8\\end{pmatrix}", "strict"),
            ("\\begin{pmatrix}1&2\\end{pmatrix}", "\\begin{pmatrix}1\\\\2\\end{pmatrix}", "lenient"),
        ),
    },
    "equation": {
        "matches": (
            ("x^2=9", "x=3 \\text{ or } x=-3", "lenient"),  # relations compared by their solutions
            ("uv=0", "u=0 \\text{ or } v=0", "lenient"),
            ("y \\geq \\sqrt{3}", "y \\in [\\sqrt{3}, \\infty)", "lenient"),
            ("6x+8y+28=0", "3x+4y+14=0", "lenient"),
            ("0=3x+4y+14", "3x+4y+14=0", "lenient"),
            ("2y = 4x + 2", "y=1+2x", "lenient"),
            ("x > 3", "3 < x", "lenient"),
            ("y = x", "x = y", "lenient"),
            ("3464.1 = 200\\cos\\frac{\\pi}{6} \\cdot 20", "200\\cos\\frac{\\pi}{6} \\cdot 20 = 3464.1", "lenient"),
        ),
        "mismatches": (
            ("3x-y+13=0", "3x+4y+14=0", "lenient"),
            ("x < 3", "x > 3", "lenient"),
            ("x+y", "x+y=1", "lenient"),
            ("y = 5", "x = 5", "lenient"),
            ("t = 3y - 1", "g(t) = 3t - 1", "lenient"),
            ("1+1=3", "2=1+1", "lenient"),
        ),
    },
    "choice": {
        "matches": (("\\text{(c)}", "c", "lenient"), ("c", "\\text{(C)}", "strict")),
        "mismatches": (("C", "A", "lenient"), ("A", "\\text{(D)}", "strict")),
    },
    "undecided": {
        "matches": (),
        "mismatches": (
            ("\\sin x = \\frac{1}{2}", "\\cos x = \\frac{\\sqrt{3}}{2}", "lenient"),
            ("x^2 + y^2 > 1", "2x^2 + y^2 > 1", "lenient"),
        ),
    },
    "hedge": {
        "matches": (),
        "mismatches": (
            ("3 \\text{ or } 4", "3", "lenient"),
            ("3, 4, 5", "3", "lenient"),
            ("4 \\text{ (or maybe 5)}", "4", "lenient"),
            ("\\pm 3", "3", "strict"),
        ),
    },
    "guard": {
        "matches": (),
        "mismatches": (
            ("__import__('os').system('touch pwned')", "2x", "lenient"),
            ("9^{9^{9^9}}", "1", "lenient"), ("2^{1000000}+1", "2", "lenient"), ("100000!", "5", "lenient"),
            ("e^{e^{e^{e^{10}}}}", "x+1", "lenient")),
    },
}
