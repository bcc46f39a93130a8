"""Other tools' methods, reproduced to compare with: DP-Sniper's classifier attack, LDP-Auditor's bound."""
