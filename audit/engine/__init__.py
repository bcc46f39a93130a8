"""The audit engine: a System's or a Mechanism's releases, the broadcast and pair searches, the audit of a System per
channel, the black-box and white-box mechanism audits, recertification."""
