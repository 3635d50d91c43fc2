"""python -m invoicing: print this month's summary."""

import sys

from invoicing.sample import LINES
from invoicing.summary import summarize

sys.stdout.write(f"{summarize(LINES, days_late=45)}\n")
