"""A ply grammar's rules are no members: ply reads them by their code, not by calling them.

``ply.yacc`` builds a parser from the ``p_*`` functions of a module or an object, reading
each one's argument count, first line and docstring (the production); ``ply.lex`` reads
``t_*`` the same way.  A recording wrapper in their place broke every parser jsonpath-ng
builds ("p_error() requires 1 argument"): 318 of its 324 tests failed while recording, and
nothing was recorded until each rule was excluded by hand.
"""

from __future__ import annotations

from pathlib import Path

from helpers import write_files
from lockstep.surface import surface
from lockstep.surface import tested_members as members_beyond

FILES = {
    "query/__init__.py": "",
    "query/lexer.py": """
        import ply.lex


        class Lexer:
            tokens = ["ID", "DOT"]
            t_DOT = r"\\."

            def t_ID(self, t):
                r"[a-z]+"
                return t

            def t_error(self, t):
                raise SyntaxError(t)

            def tokenize(self, text):
                return list(text)
    """,
    "query/parser.py": '''
        from query.lexer import Lexer


        class Parser:
            def p_path(self, p):
                """path : ID DOT ID"""
                p[0] = (p[1], p[3])

            def p_error(self, p):
                raise SyntaxError(p)

            def parse(self, text):
                return text


        class ExtendedLexer(Lexer):
            tokens = Lexer.tokens + ["STAR"]

            def t_STAR(self, t):
                r"\\*"
                return t


        def p_value(sample):
            """The share of the sample above its mean (no grammar here)."""
            return sample
    ''',
}


def test_the_rules_of_a_grammar_are_left_out(tmp_path: Path) -> None:
    write_files(tmp_path, FILES)
    public = {m.target for m in surface("query", tmp_path, where="t")}
    assert "query.lexer:Lexer.tokenize" in public and "query.parser:Parser.parse" in public
    assert "query.parser:p_value" in public  # a p_ function that is no production stays
    rules = {
        "query.lexer:Lexer.t_ID",
        "query.lexer:Lexer.t_error",
        "query.parser:Parser.p_path",
        "query.parser:Parser.p_error",
        "query.parser:ExtendedLexer.t_STAR",
    }
    private = {m.target for m in members_beyond("query", tmp_path, where="t")}
    assert not rules & (public | private), rules & (public | private)


def test_a_grammar_importing_ply_inside_a_function_is_read_as_one(tmp_path: Path) -> None:
    """The source is read as text first (a module never spelling ``ply`` is not walked),
    so an import inside a function, of a vendored copy, still makes its rules no members."""
    write_files(
        tmp_path,
        {
            "calc/__init__.py": "",
            "calc/grammar.py": """
                def build():
                    from calc.vendored.ply import yacc

                    return yacc


                def p_sum(p):
                    "sum : NUMBER"
                    p[0] = p[1]


                def t_NUMBER(t):
                    return t


                def evaluate(text):
                    return text
            """,
        },
    )
    public = {m.target for m in surface("calc", tmp_path, where="t")}
    assert "calc.grammar:evaluate" in public and "calc.grammar:build" in public
    assert not {"calc.grammar:p_sum", "calc.grammar:t_NUMBER"} & public
