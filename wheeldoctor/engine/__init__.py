"""How file states are obtained: one pipeline (plan, obtain, judge and remember), its executors, its memos."""
