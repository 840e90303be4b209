"""Real hosts over SSH (issue 30): see docs/real-hosts.md."""
