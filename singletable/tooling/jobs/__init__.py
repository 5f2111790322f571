"""What long-running jobs share: `progress` (a bar on a terminal, flushed lines otherwise)."""
