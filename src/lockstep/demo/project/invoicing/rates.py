"""Exchange rates into EUR.

In production this is a metered HTTP API with a per-minute quota; the table
stands in for it here.  How many times it is called is part of what the
billing team pays for.
"""

from decimal import Decimal

_TABLE = {
    "EUR": Decimal("1"),
    "USD": Decimal("0.92"),
    "GBP": Decimal("1.17"),
}


class RateUnavailable(Exception):
    """No rate is published for this currency."""


def rate(currency):
    try:
        return _TABLE[currency]
    except KeyError:
        raise RateUnavailable(f"no rate for {currency}") from None
