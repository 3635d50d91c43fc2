"""The intended behaviour after the cleanup: one rates lookup per currency, not per line."""

from invoicing import rates
from invoicing.sample import LINES
from invoicing.summary import summarize


def test_each_currency_is_looked_up_once(monkeypatch):
    seen = []
    real = rates.rate
    monkeypatch.setattr(rates, "rate", lambda currency: seen.append(currency) or real(currency))
    summarize(LINES, days_late=45)
    assert sorted(seen) == ["EUR", "GBP", "USD"]
