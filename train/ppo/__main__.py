"""``python -m train.ppo``: train a policy with PPO (:func:`train.ppo.trainer.main`)."""

from train.ppo.trainer import main

raise SystemExit(main())
