"""The invoice summary: convert every line to EUR, total it, add the late fee."""

from decimal import ROUND_HALF_UP, Decimal

from invoicing import fees, rates


def summarize(lines, days_late=0):
    total = Decimal("0")
    for line in lines:
        rate = rates.rate(line["currency"])
        total += Decimal(line["amount"]) * rate
    total = total.quantize(Decimal("0.01"), ROUND_HALF_UP)
    if days_late:
        total += fees.late_fee(total, days_late)
    return {"lines": len(lines), "total": str(total)}
