from pgc.contracts import PrivacyClaim


class ScaleLeak:
    name = "scale leak"
    claim = PrivacyClaim(epsilon=1.0, delta=1e-5, covers=("update",))
    channels = ("update",)

    def release(self, secret, n, rng, *, broadcast=None):  # secret 0 or 1: the noise scale is 1 or 1.1
        if secret not in (0, 1) or isinstance(secret, bool):
            raise ValueError(f"a secret is 0 or 1, got {secret!r}")
        return {"update": (1.0 + 0.1 * secret) * rng.standard_normal((n, 1020))}

    def canaries(self):
        return {"scale": (0, 1)}


def make():
    return ScaleLeak()
