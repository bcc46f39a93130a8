"""Opacus (PyTorch's DP-SGD library) as shipped, audited as a System: a client trains with Opacus's
``PrivacyEngine.make_private`` on its local data set, and the server sees its model update.

* :class:`OpacusClient` — what a user's factory returns: the model, the local data, the loss and the DP-SGD
  settings (noise multiplier, clipping norm, batch size, local steps, learning rate, Opacus's accountant, Poisson or
  shuffled batches);
* :class:`OpacusSystem` (:mod:`pgc.opacus.system`) — the System: neighbouring local data sets (a record of the
  user's data added or removed, or replaced by a canary), the update after the local steps as the channel
  ``update`` and the number of examples sent beside it as ``examples``;
* :mod:`pgc.opacus.claims` — the claim: Opacus's own accountant's ε for the configuration as run (add or remove one
  record), dp-accounting's PLD ε of the same event for replace-one, and the PLD add/remove ε beside it.
"""

from .client import ACCOUNTANTS, LOSSES, OpacusClient

__all__ = ["ACCOUNTANTS", "LOSSES", "OpacusClient"]
