//! `tj install`, `tj uninstall` and `tj doctor` on fixture settings files (issue 11).
