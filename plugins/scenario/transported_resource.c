/* SPDX-License-Identifier: MIT */
/*
 * Scenario 7, transported resource throughput: one real link through the relay under test,
 * then LINK DATA frames with the RESOURCE context that fill the negotiated link MTU, 16 in
 * flight per direction, a credit on receipt at the far side.
 */
#include "relay_check.h"

RELAY_PLUGIN("transported-resource", 7, "transported resource throughput",
	     "transported resource: one link through a pure relay, RESOURCE-context link frames "
	     "filling the negotiated link MTU, 16 in flight per direction, credit on receipt; "
	     "per direction sent = carried, no duplicate, corrupt, reordered or lost frame",
	     0, 0, "resource", 0)
