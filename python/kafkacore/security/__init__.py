"""Security: TLS contexts and SSL principals (groundwork for issue 12, not wired in yet)."""
