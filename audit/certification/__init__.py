"""Certification: the exact bounds (Clopper-Pearson), the certified test, the privacy curves, the claim and its
accounting, sampling until decisive."""
