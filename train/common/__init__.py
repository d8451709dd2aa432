"""What every training algorithm shares: config loading (``config``, ``config_checks``),
safe file reading and atomic writing (``files``), and the run folder with its
metrics, charts and final arena (``run_folder``)."""
