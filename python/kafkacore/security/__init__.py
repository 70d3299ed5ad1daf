"""Security: authentication and authorization building blocks (not yet wired into the broker)."""
