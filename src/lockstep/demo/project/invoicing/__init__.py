"""Invoice summaries, as inherited: one rates lookup per line, and a late fee."""
