"""``python -m train.bench`` (and ``torchrun ... -m train.bench``): OffroadBench's command line."""

from train.bench.command import main

raise SystemExit(main())
