# SPDX-License-Identifier: MIT
# The reference's rnsd with InterfaceAnnouncer.JOB_INTERVAL shortened from 60 s to
# $RNSC_DISC_JOB_INTERVAL seconds (default 12), so a discoverable interface announces soon
# after start-up instead of after a minute.
# Nothing else changes: the app_data, stamps, destination and due-interval logic are the
# reference's own. Arguments are rnsd's.
import os
import sys

import RNS.Discovery

RNS.Discovery.InterfaceAnnouncer.JOB_INTERVAL = float(os.environ.get("RNSC_DISC_JOB_INTERVAL", "12"))

from RNS.Utilities import rnsd  # noqa: E402

sys.argv = ["rnsd"] + sys.argv[1:]
rnsd.main()
