/* SPDX-License-Identifier: MIT */
/*
 * Scenario 6, raw transport throughput: the relay under test (transport enabled, two
 * Backbone server interfaces) carries opaque HEADER_2 DATA frames of 60..420-byte payloads
 * pushed by rnsc's wire driver in both directions, 256 credits per direction, a credit
 * returned when the far side's opaque proof comes back through the relay's reverse table.
 */
#include "relay_check.h"

RELAY_PLUGIN("raw-transport", 6, "raw transport throughput",
	     "raw transport: HEADER_2 DATA frames through a pure relay in both directions, 256 "
	     "credits per direction, a credit per opaque proof carried back; per direction sent "
	     "= carried, no duplicate, corrupt, reordered or lost frame",
	     60, 420, "raw", 1)
