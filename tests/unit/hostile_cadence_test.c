/* SPDX-License-Identifier: MIT */
/* When the node writes its tables (node_store_cadence_due, issue 28 finding 6): nothing
 * while they are as loaded, the tables a gap after they changed (at most one write per
 * gap however much changes), everything every 5 minutes, on a real engine whose known
 * destinations are changed through its API. */
#include <string.h>

#include "cu_run.h"
#include "engine_env.h"
#include "identity.h"
#include "node_store.h"
#include "transport.h"

static void learn(rnsc_transport *t, uint8_t tag)
{
	rnsc_transport_known k;
	memset(&k, tag, sizeof(k));
	k.timestamp = 1000;
	k.app_data = NULL;
	k.app_data_len = 0;
	CU_ASSERT_EQUAL(rnsc_transport_known_import(t, &k), 0);
}

static void test_cadence(void)
{
	rnsc_identity tid;
	rnsc_transport *t;
	CU_ASSERT_EQUAL_FATAL(rnsc_identity_generate(C, &tid), 0);
	CU_ASSERT_EQUAL_FATAL(rnsc_transport_new(C, &t, &tid, NULL), 0);
	node_store_cadence c = {0};
	uint64_t t0 = 1000000;
	CU_ASSERT_EQUAL(node_store_cadence_due(&c, t, t0), NODE_STORE_NOTHING); /* as loaded */
	CU_ASSERT_EQUAL(node_store_cadence_due(&c, t, t0 + 60000), NODE_STORE_NOTHING);
	learn(t, 1);
	/* changed: written at the next check */
	CU_ASSERT_EQUAL(node_store_cadence_due(&c, t, t0 + 65000), NODE_STORE_TABLES);
	CU_ASSERT_EQUAL(node_store_cadence_due(&c, t, t0 + 70000), NODE_STORE_NOTHING);
	/* changed again at once: not before the gap has passed */
	learn(t, 2);
	CU_ASSERT_EQUAL(node_store_cadence_due(&c, t, t0 + 70000), NODE_STORE_NOTHING);
	CU_ASSERT_EQUAL(node_store_cadence_due(&c, t, t0 + 65000 + NODE_STORE_GAP_MS - 1),
			NODE_STORE_NOTHING);
	CU_ASSERT_EQUAL(node_store_cadence_due(&c, t, t0 + 65000 + NODE_STORE_GAP_MS),
			NODE_STORE_TABLES);
	/* everything, the hashlist too, every NODE_STORE_FULL_MS, changed or not */
	CU_ASSERT_EQUAL(node_store_cadence_due(&c, t, t0 + NODE_STORE_FULL_MS), NODE_STORE_ALL);
	CU_ASSERT_EQUAL(node_store_cadence_due(&c, t, t0 + NODE_STORE_FULL_MS + 5000),
			NODE_STORE_NOTHING);
	rnsc_transport_del(t);
	rnsc_identity_free(&tid);
}

/* The cleaning schedule (Transport.jobs): known destinations 5 min after start and every
 * 5 min, the announce cache 60 s later than that and every 5 min. */
static void test_hygiene(void)
{
	node_store_hygiene h = {0};
	uint64_t t0 = 5000;
	CU_ASSERT_EQUAL(node_store_hygiene_due(&h, t0), 0);
	CU_ASSERT_EQUAL(node_store_hygiene_due(&h, t0 + NODE_STORE_CLEAN_KNOWN_MS - 1), 0);
	CU_ASSERT_EQUAL(node_store_hygiene_due(&h, t0 + NODE_STORE_CLEAN_KNOWN_MS),
			NODE_STORE_CLEAN_KNOWN);
	CU_ASSERT_EQUAL(node_store_hygiene_due(&h, t0 + NODE_STORE_CLEAN_KNOWN_MS + 59999), 0);
	CU_ASSERT_EQUAL(node_store_hygiene_due(&h, t0 + NODE_STORE_CLEAN_KNOWN_MS + 60000),
			NODE_STORE_CLEAN_CACHE);
	CU_ASSERT_EQUAL(node_store_hygiene_due(&h, t0 + 2 * NODE_STORE_CLEAN_KNOWN_MS),
			NODE_STORE_CLEAN_KNOWN);
	/* a stalled loop catches up once, not once per missed interval */
	CU_ASSERT_EQUAL(node_store_hygiene_due(&h, t0 + 10 * NODE_STORE_CLEAN_KNOWN_MS),
			NODE_STORE_CLEAN_KNOWN | NODE_STORE_CLEAN_CACHE);
	CU_ASSERT_EQUAL(node_store_hygiene_due(&h, t0 + 10 * NODE_STORE_CLEAN_KNOWN_MS + 1), 0);
}

int main(void)
{
	if (engine_env_open("hostile_cadence_test", 0x28282828u))
		return 1;
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite("hostile_cadence", NULL, NULL);
	CU_add_test(s, "tables written a gap after a change, everything every 5 min", test_cadence);
	CU_add_test(s, "known destinations and the announce cache cleaned every 5 min",
		    test_hygiene);
	int rc = rnsc_cu_run();
	engine_env_close();
	return rc;
}
