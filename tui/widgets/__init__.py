"""One widget per pane: ledger, bubble, diagrams, notes."""
