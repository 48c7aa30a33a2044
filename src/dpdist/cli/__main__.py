"""``python -m dpdist.cli``: the ``dpdist`` command."""

import sys

from ._main import main

sys.exit(main())
