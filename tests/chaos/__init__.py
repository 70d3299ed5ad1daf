"""The fault campaign (issue 11): a Jepsen-style harness over a three-broker cluster."""
