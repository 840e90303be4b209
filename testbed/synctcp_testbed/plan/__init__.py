"""What a run will do: its plan (plan.json) and each case's flows."""
