from offroad_env.cli import main

raise SystemExit(main())
