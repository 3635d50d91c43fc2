"""Turn raw order rows into invoice lines.  Nobody remembers why some of this is the way it is."""
from decimal import Decimal


def transform_row(row):
    out = {}
    name = row.get("name")
    if name is None:
        out["customer"] = "UNKNOWN"
    elif name == "":
        out["customer"] = ""          # blank is not missing: finance greps for it
    else:
        out["customer"] = " ".join(name.split()).title()
    qty = int(row.get("qty", 1))
    price = Decimal(str(row["price"]))
    subtotal = price * qty
    coupons = row.get("coupons") or []
    discount = Decimal("0")
    for c in coupons:
        if c.endswith("%"):
            pct = Decimal(c[:-1]) / Decimal(100)
            discount = discount + (subtotal - discount) * pct   # percentage coupons stack
        else:
            discount = discount + Decimal(c)
    if discount > subtotal:
        discount = subtotal
    total = subtotal - discount
    out["subtotal"] = _money(subtotal)
    out["discount"] = _money(discount)
    out["total"] = _money(total)
    if "note" in row:
        out["note"] = row["note"] if row["note"] else None
    return out


def _money(amount):
    """Two decimals, the way Python rounds (it is the same thing, surely)."""
    return f"{round(amount, 2):.2f}"


def transform(rows):
    return [transform_row(r) for r in rows]
