"""Safe arithmetic for ``calculate``, the look-up every pack offers: the expression is parsed with ``ast`` and only numbers, ``+ - * /`` and
parentheses are evaluated (never ``eval``), in ``Decimal`` so sums of prices are exact, rounded to the cent."""

from __future__ import annotations

import ast
import math
import operator
from decimal import ROUND_HALF_UP, Decimal, DivisionByZero, InvalidOperation, Overflow, localcontext
from typing import Any

from chops.domain.operations import Operation
from chops.domain.outcomes import InvalidArgument
from chops.i18n import N_

MAX_LENGTH = 500  # characters: a sum of a few dozen prices fits; a pathological input does not get parsed
MAX_NODES = 400
_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}
_UNARY = {ast.UAdd: operator.pos, ast.USub: operator.neg}


class CalculationError(ValueError):
    """The expression is not plain arithmetic, or cannot be computed (division by zero)."""


def calculate(expression: str) -> Decimal:
    """The value of ``expression`` (numbers, ``+ - * /``, parentheses) rounded half up to 2 decimals."""
    text = expression.strip()
    if not text or len(text) > MAX_LENGTH:
        raise CalculationError(f"Give an expression of 1 to {MAX_LENGTH} characters.")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        raise CalculationError(f"{expression!r} is not an arithmetic expression.") from None
    if sum(1 for _ in ast.walk(tree)) > MAX_NODES:
        raise CalculationError("The expression is too long.")
    with localcontext() as ctx:
        ctx.prec = 34
        ctx.traps[DivisionByZero] = ctx.traps[InvalidOperation] = ctx.traps[Overflow] = True
        try:
            return _eval(tree.body).quantize(Decimal("0.01"), ROUND_HALF_UP)
        except DivisionByZero:
            raise CalculationError("Division by zero.") from None
        except (InvalidOperation, Overflow):
            raise CalculationError("The numbers are too large to compute to the cent.") from None


def _eval(node: ast.AST) -> Decimal:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        if isinstance(node.value, float) and not math.isfinite(node.value):
            raise CalculationError("The numbers are too large to compute to the cent.")
        # A float literal is read as written ("0.1" is 0.1), not as its binary approximation.
        return Decimal(repr(node.value)) if isinstance(node.value, float) else Decimal(node.value)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _BINARY[type(node.op)](_eval(node.left), _eval(node.right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval(node.operand))
    raise CalculationError("Only numbers, + - * / and parentheses are allowed.")


def run_calculate(uow: Any, actor: Any, args: Any) -> tuple[str, dict[str, Any]]:
    """The ``calculate`` operation of every pack: ``args.expression`` computed to the cent."""
    try:
        value = calculate(args.expression)
    except CalculationError as exc:
        raise InvalidArgument(str(exc)) from None
    return f"{args.expression} = {value}", {"expression": args.expression, "result": float(value)}


def calculate_operation(title: str = N_("calculate")) -> Operation:
    """The ``calculate`` look-up, offered only after a look-up returned a record (its numbers come from records read
    first: offered before any, a small model wrote "2 * 2 * 2 ..." until its tokens ran out)."""
    from chops.domain.args import CalculateArgs

    return Operation("calculate", "Compute arithmetic such as a total or a price difference (+ - * / and "
                     "parentheses).", CalculateArgs, writes=False, admin_only=False, run=run_calculate, observe=True,
                     title=title, after_lookup=True)
